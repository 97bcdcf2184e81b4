package dev.licensing.client;

import java.nio.charset.CharacterCodingException;
import java.security.GeneralSecurityException;
import java.security.Signature;
import java.time.Instant;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Offline checks of signed licence files ({@code POST /api/v1/licenses/{key}/file}), with no network:
 * the Ed25519 signature by the product key the file names, then what it says. An app ships its
 * product's public keys ({@code GET /api/v1/products/{id}/signing-keys}) and keeps working offline.
 *
 * <p>The checks run in this order, and the first failure is the answer (docs/sdk-conformance.md):
 * the file's shape (four strings: {@code malformed}); {@code algorithm} is Ed25519
 * ({@code unsupported_algorithm}); its {@code kid} is among the keys ({@code unknown_key}); the
 * signature over the payload's bytes as they are, never re-serialised ({@code bad_signature}); the
 * payload is a UTF-8 JSON object ({@code malformed}); its {@code kid} is the file's
 * ({@code kid_mismatch}); {@code issued_at} and {@code valid_until} are dates ({@code malformed});
 * {@code status} is active ({@code not_active}); {@code valid_until} is not before now
 * ({@code expired}); {@code issued_at} is at most 5 minutes after now ({@code not_yet_valid}); a file
 * bound to a machine needs that machine's fingerprint ({@code fingerprint_required},
 * {@code fingerprint_mismatch}).
 */
public final class LicenseFiles {
    /** How far issued_at may lie ahead of this machine's clock before the clock is deemed turned back. */
    public static final long CLOCK_SKEW_MILLIS = 5 * 60_000L;

    private LicenseFiles() {}

    /**
     * Verifies a licence file given as JSON text.
     *
     * @param fileJson the file as the API answered it (text that is not JSON is {@code malformed})
     * @param publicKeys the product's public keys
     * @param fingerprint this machine's fingerprint, or null when it has none to give (then a file
     *     bound to a machine is refused: {@code fingerprint_required})
     * @param now the time to check against (null: now)
     * @throws IllegalArgumentException only when the listed key the file names is no Ed25519 key
     */
    public static Verification verify(String fileJson, List<PublicKey> publicKeys, String fingerprint, Instant now) {
        Object parsed;
        try {
            parsed = Json.parse(fileJson);
        } catch (IllegalArgumentException notJson) {
            return Verification.fail("malformed");
        }
        return verifyParsed(parsed, publicKeys, fingerprint, now);
    }

    /** Verifies a licence file already parsed (a {@code Map} as {@link Json} reads it). */
    public static Verification verify(Map<?, ?> file, List<PublicKey> publicKeys, String fingerprint, Instant now) {
        return verifyParsed(file, publicKeys, fingerprint, now);
    }

    /** Verifies a licence file as {@link LicensedApp#licenseFile()} gives it. */
    public static Verification verify(LicenseFile file, List<PublicKey> publicKeys, String fingerprint, Instant now) {
        return verifyParsed(file == null ? null : file.toMap(), publicKeys, fingerprint, now);
    }

    /** Verifies any parsed JSON value: anything but a file's object is {@code malformed}. */
    public static Verification verifyParsed(Object file, List<PublicKey> publicKeys, String fingerprint, Instant now) {
        Objects.requireNonNull(publicKeys, "publicKeys");
        long nowMs = (now == null ? Instant.now() : now).toEpochMilli();

        if (!(file instanceof Map)) return Verification.fail("malformed");
        Map<?, ?> f = (Map<?, ?>) file;
        if (!(f.get("kid") instanceof String && f.get("algorithm") instanceof String
                && f.get("payload") instanceof String && f.get("signature") instanceof String))
            return Verification.fail("malformed");
        String kid = (String) f.get("kid");
        if (!"Ed25519".equals(f.get("algorithm"))) return Verification.fail("unsupported_algorithm");
        PublicKey key = null;
        for (PublicKey k : publicKeys) {
            if (k.kid().equals(kid)) {
                key = k;
                break;
            }
        }
        if (key == null) return Verification.fail("unknown_key");

        byte[] payloadBytes;
        byte[] signature;
        try {
            payloadBytes = Encoding.base64((String) f.get("payload"));
            signature = Encoding.base64((String) f.get("signature"));
        } catch (IllegalArgumentException notBase64) {
            return Verification.fail("malformed");
        }
        if (!signatureHolds(key.toJavaKey(), payloadBytes, signature)) return Verification.fail("bad_signature");

        Object parsed;
        try {
            parsed = Json.parse(Encoding.utf8(payloadBytes));
        } catch (CharacterCodingException | IllegalArgumentException notJson) {
            return Verification.fail("malformed");
        }
        // A JSON array is no payload either (docs/sdk-conformance.md: "a UTF-8 JSON object").
        if (!(parsed instanceof Map)) return Verification.fail("malformed");
        @SuppressWarnings("unchecked")
        Map<String, Object> payload = (Map<String, Object>) parsed;

        // The kid inside is signed; the one outside is not, so they must agree.
        if (!kid.equals(payload.get("kid"))) return Verification.fail("kid_mismatch");
        Long validUntil = dateMillis(payload.get("valid_until"));
        Long issuedAt = dateMillis(payload.get("issued_at"));
        if (validUntil == null || issuedAt == null) return Verification.fail("malformed");
        if (!"active".equals(payload.get("status"))) return Verification.fail("not_active");
        if (validUntil < nowMs) return Verification.fail("expired");
        if (issuedAt > nowMs + CLOCK_SKEW_MILLIS) return Verification.fail("not_yet_valid");
        // A file bound to one machine is valid on that machine only: with no fingerprint to compare, it is refused.
        Object bound = payload.get("fingerprint");
        if (bound != null) {
            if (fingerprint == null) return Verification.fail("fingerprint_required");
            if (!bound.equals(fingerprint)) return Verification.fail("fingerprint_mismatch");
        }
        return Verification.ok(payload);
    }

    private static boolean signatureHolds(java.security.PublicKey key, byte[] message, byte[] signature) {
        try {
            Signature verifier = Signature.getInstance("Ed25519");
            verifier.initVerify(key);
            verifier.update(message);
            return verifier.verify(signature);
        } catch (GeneralSecurityException wrongLengthOrEncoding) {
            // A signature of the wrong length or encoding signs nothing: WebCrypto answers false for it too.
            return false;
        }
    }

    /**
     * Milliseconds since the epoch of an ISO 8601 date-time with its offset ({@code 2026-07-01T00:00:00.000Z},
     * as the server writes them) or a date alone (UTC midnight, as JavaScript's Date.parse reads it);
     * null for anything else. Truncated to milliseconds, JavaScript's precision.
     */
    static Long dateMillis(Object value) {
        if (!(value instanceof String)) return null;
        String s = (String) value;
        try {
            return OffsetDateTime.parse(s).toInstant().truncatedTo(ChronoUnit.MILLIS).toEpochMilli();
        } catch (DateTimeParseException notDateTime) {
            // A date alone, below.
        }
        try {
            return LocalDate.parse(s).atStartOfDay(ZoneOffset.UTC).toInstant().toEpochMilli();
        } catch (DateTimeParseException notDate) {
            return null;
        }
    }
}
