package dev.licensing.client;

import static dev.licensing.client.Check.equal;
import static dev.licensing.client.Check.fails;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

public class WebhooksTest {
    static final byte[] KEY = "a secret of thirty-two bytes....".getBytes(StandardCharsets.US_ASCII);
    static final String SECRET = "whsec_" + Base64.getEncoder().encodeToString(KEY);
    static final String ID = "evt_1";
    static final String TS = "1780315200";
    static final byte[] BODY = "{\"type\":\"license.created\",\"note\":\"é\"}".getBytes(StandardCharsets.UTF_8);
    static final Instant NOW = Instant.ofEpochSecond(1780315200L);

    static byte[] mac(byte[] key, String id, String ts, byte[] body) throws Exception {
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(key, "HmacSHA256"));
        mac.update((id + "." + ts + ".").getBytes(StandardCharsets.UTF_8));
        return mac.doFinal(body);
    }

    static String sig(String ts) throws Exception {
        return "v1," + Base64.getEncoder().encodeToString(mac(KEY, ID, ts, BODY));
    }

    String code(String ts, String signature, Instant now) {
        return Webhooks.verify(BODY, ID, ts, signature, SECRET, now).code();
    }

    public void testValidAndTampered() throws Exception {
        equal(new WebhookVerification(true, "valid"), Webhooks.verify(BODY, ID, TS, sig(TS), SECRET, NOW));
        byte[] tampered = BODY.clone();
        tampered[3] ^= 1;
        equal("bad_signature", Webhooks.verify(tampered, ID, TS, sig(TS), SECRET, NOW).code());
        equal("bad_signature", Webhooks.verify(BODY, "evt_2", TS, sig(TS), SECRET, NOW).code(), "the id is signed");
    }

    public void testMissingHeaders() throws Exception {
        equal("missing_headers", Webhooks.verify(BODY, "", TS, sig(TS), SECRET, NOW).code());
        equal("missing_headers", Webhooks.verify(BODY, ID, null, sig(TS), SECRET, NOW).code());
        equal("missing_headers", Webhooks.verify(BODY, ID, TS, "", SECRET, NOW).code());
    }

    public void testTimestampForm() throws Exception {
        for (String bad : new String[] {"-1", "1.5", " 1780315200", "1780315200 ", "1234567890123", "yesterday", "١٢٣"}) {
            equal("invalid_timestamp", code(bad, sig(TS), NOW), bad);
        }
    }

    public void testToleranceBoundaries() throws Exception {
        equal("valid", code("1780314900", sig("1780314900"), NOW), "300 s old");
        equal("timestamp_out_of_tolerance", code("1780314899", sig("1780314899"), NOW), "301 s old");
        equal("valid", code("1780315500", sig("1780315500"), NOW), "300 s ahead");
        equal("timestamp_out_of_tolerance", code("1780315501", sig("1780315501"), NOW));
        // Now has milliseconds: 300.5 s is beyond 300.
        equal("timestamp_out_of_tolerance", code("1780314900", sig("1780314900"), NOW.plusMillis(500)));
    }

    public void testAnyOneSignatureOfSeveral() throws Exception {
        String other = "v1," + Base64.getEncoder().encodeToString(new byte[32]);
        equal("valid", code(TS, other + " " + sig(TS), NOW));
        equal("valid", code(TS, "v2,abc  v1,!!! v1, " + sig(TS), NOW), "unknown versions, bad base64 and empty values are skipped");
        equal("bad_signature", code(TS, other, NOW));
        equal("bad_signature", code(TS, sig(TS).replace("v1,", "v2,"), NOW));
        String urlSafe = "v1," + Base64.getUrlEncoder().withoutPadding().encodeToString(mac(KEY, ID, TS, BODY));
        equal("valid", code(TS, urlSafe, NOW), "URL-safe base64 is read too");
        String truncated = "v1," + Base64.getEncoder().encodeToString(java.util.Arrays.copyOf(mac(KEY, ID, TS, BODY), 16));
        equal("bad_signature", code(TS, truncated, NOW), "half a signature is no signature");
    }

    public void testSecretWithoutPrefixAndBadSecrets() throws Exception {
        equal("valid", Webhooks.verify(BODY, ID, TS, sig(TS), SECRET.substring("whsec_".length()), NOW).code());
        fails(IllegalArgumentException.class, () -> Webhooks.verify(BODY, ID, TS, sig(TS), "whsec_***", NOW));
        fails(IllegalArgumentException.class, () -> Webhooks.verify(BODY, ID, TS, sig(TS), "", NOW));
        fails(IllegalArgumentException.class, () -> Webhooks.verify(BODY, ID, TS, sig(TS), "whsec_", NOW));
    }

    public void testStringBodyIsUtf8() throws Exception {
        String body = new String(BODY, StandardCharsets.UTF_8);
        String ts = String.valueOf(Instant.now().getEpochSecond());
        equal("valid", Webhooks.verify(body, ID, ts, sig(ts), SECRET).code());
    }
}
