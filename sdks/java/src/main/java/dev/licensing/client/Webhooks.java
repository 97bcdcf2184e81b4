package dev.licensing.client;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Instant;
import java.util.regex.Pattern;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Checking a webhook delivery on the receiving side, per Standard Webhooks: HMAC-SHA256 of
 * {@code id.timestamp.body} with the endpoint's {@code whsec_} secret, any one of the space-separated
 * {@code v1,<base64>} signatures (two while a secret rotates), compared in constant time, and a
 * timestamp within 5 minutes of now so that a captured request cannot be replayed later.
 *
 * <p>Pass the body exactly as received, as bytes: a body parsed and written again does not verify.
 */
public final class Webhooks {
    /** How far the delivery's timestamp may be from now, in seconds. */
    public static final long TOLERANCE_SECONDS = 300;

    private static final Pattern TIMESTAMP = Pattern.compile("[0-9]{1,12}");

    private Webhooks() {}

    /**
     * Verifies one delivery.
     *
     * @param body the raw request body
     * @param id the {@code webhook-id} header
     * @param timestamp the {@code webhook-timestamp} header (Unix seconds)
     * @param signatureHeader the {@code webhook-signature} header
     * @param secret the endpoint's signing secret, {@code whsec_…}
     * @param now the time to check against (null: now)
     * @throws IllegalArgumentException when the secret is not a {@code whsec_} secret (a set-up error, not a bad delivery)
     */
    public static WebhookVerification verify(byte[] body, String id, String timestamp, String signatureHeader, String secret, Instant now) {
        if (body == null) throw new IllegalArgumentException("body must be the raw request body");
        SecretKeySpec key = hmacKey(secret);
        if (isEmpty(id) || isEmpty(timestamp) || isEmpty(signatureHeader)) return new WebhookVerification(false, "missing_headers");
        if (!TIMESTAMP.matcher(timestamp).matches()) return new WebhookVerification(false, "invalid_timestamp");
        double nowSeconds = (now == null ? Instant.now() : now).toEpochMilli() / 1000.0;
        if (Math.abs(nowSeconds - Long.parseLong(timestamp)) > TOLERANCE_SECONDS)
            return new WebhookVerification(false, "timestamp_out_of_tolerance");

        byte[] expected = hmac(key, (id + "." + timestamp + ".").getBytes(StandardCharsets.UTF_8), body);
        boolean matched = false;
        for (String part : signatureHeader.split(" ")) {
            String[] fields = part.split(",", -1);
            if (fields.length < 2 || !fields[0].equals("v1") || fields[1].isEmpty()) continue;
            byte[] given;
            try {
                given = Encoding.base64(fields[1]);
            } catch (IllegalArgumentException notBase64) {
                continue;
            }
            // Every signature is compared, in constant time, so the time taken says nothing of which matched.
            matched |= MessageDigest.isEqual(expected, given);
        }
        return matched ? new WebhookVerification(true, "valid") : new WebhookVerification(false, "bad_signature");
    }

    /** Verifies one delivery now, its body given as the text received (encoded as UTF-8). */
    public static WebhookVerification verify(String body, String id, String timestamp, String signatureHeader, String secret) {
        return verify(body.getBytes(StandardCharsets.UTF_8), id, timestamp, signatureHeader, secret, null);
    }

    private static SecretKeySpec hmacKey(String secret) {
        if (secret == null || secret.isEmpty()) throw new IllegalArgumentException("secret must be the endpoint's whsec_… signing secret");
        byte[] bytes;
        try {
            bytes = Encoding.base64(secret.startsWith("whsec_") ? secret.substring("whsec_".length()) : secret);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("secret must be the endpoint's whsec_… signing secret (base64 after the prefix)");
        }
        if (bytes.length == 0) throw new IllegalArgumentException("secret must be the endpoint's whsec_… signing secret (no key after the prefix)");
        return new SecretKeySpec(bytes, "HmacSHA256");
    }

    private static byte[] hmac(SecretKeySpec key, byte[] prefix, byte[] body) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(key);
            mac.update(prefix);
            return mac.doFinal(body);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every JDK", e);
        }
    }

    private static boolean isEmpty(String s) {
        return s == null || s.isEmpty();
    }
}
