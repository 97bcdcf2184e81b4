package dev.licensing.client;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A signed licence file as {@code POST /api/v1/licenses/{key}/file} answers it: keep
 * {@link #toJson()} on disk and check it offline with {@link LicenseFiles#verify}.
 *
 * @param kid the signing key's id
 * @param algorithm {@code "Ed25519"}
 * @param payload the signed JSON object's bytes, base64
 * @param signature the Ed25519 signature of those bytes, base64
 */
public record LicenseFile(String kid, String algorithm, String payload, String signature) {
    /** {@code {kid, algorithm, payload, signature}}. */
    public Map<String, Object> toMap() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("kid", kid);
        out.put("algorithm", algorithm);
        out.put("payload", payload);
        out.put("signature", signature);
        return out;
    }

    /** The file as JSON text, to keep on disk. */
    public String toJson() {
        return Json.write(toMap());
    }

    /** A file read back from JSON; null members stay null (verification answers {@code malformed}). */
    static LicenseFile of(Map<?, ?> map) {
        return new LicenseFile(text(map.get("kid")), text(map.get("algorithm")), text(map.get("payload")), text(map.get("signature")));
    }

    private static String text(Object v) {
        return v instanceof String ? (String) v : null;
    }
}
