package dev.licensing.client;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What {@link LicenseFiles#verify} found.
 *
 * @param valid whether the file holds: signed by a listed key, active, in date, on this machine
 * @param code {@code "valid"} or why not: {@code malformed}, {@code unsupported_algorithm},
 *     {@code unknown_key}, {@code bad_signature}, {@code kid_mismatch}, {@code not_active},
 *     {@code expired}, {@code not_yet_valid}, {@code fingerprint_required}, {@code fingerprint_mismatch}
 * @param payload the signed facts ({@code license_key, license_id, product_id, status, expires_at,
 *     fingerprint, entitlements, issued_at, valid_until, expiration_strategy, kid}, and for a
 *     subscription {@code paid_through, grace_until}) when valid, else null
 */
public record Verification(boolean valid, String code, Map<String, Object> payload) {
    public static final String VALID = "valid";

    public Verification {
        payload = payload == null ? null : Json.frozen(payload);
    }

    static Verification ok(Map<String, Object> payload) {
        return new Verification(true, VALID, payload);
    }

    static Verification fail(String code) {
        return new Verification(false, code, null);
    }

    /** A payload member as text, or null (absent, null, or not valid). */
    public String text(String member) {
        Object v = payload == null ? null : payload.get(member);
        return v instanceof String ? (String) v : null;
    }

    /** The licence key the file is for, or null. */
    public String licenseKey() {
        return text("license_key");
    }

    /** The licence's entitlements (feature codes) when valid; empty otherwise, or for files issued before entitlements. */
    public List<String> entitlements() {
        Object v = payload == null ? null : payload.get("entitlements");
        if (!(v instanceof List)) return List.of();
        List<String> out = new java.util.ArrayList<>();
        for (Object item : (List<?>) v) if (item instanceof String) out.add((String) item);
        return Collections.unmodifiableList(out);
    }

    /** {@code {valid, code, payload}}, as the conformance command prints it. */
    public Map<String, Object> toJson() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("valid", valid);
        out.put("code", code);
        out.put("payload", payload);
        return out;
    }
}
