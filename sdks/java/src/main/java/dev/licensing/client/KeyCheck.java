package dev.licensing.client;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * How a licence key as typed reads (see {@link LicenseKeys#check(String)}).
 *
 * @param wellFormed whether it is a key at all (a native key with its right check characters, or a foreign key)
 * @param normalized the key as the server compares it (a native key upper-cased in six groups of five;
 *     a foreign key trimmed only), or null when not well formed
 * @param kind {@code "native"} or {@code "foreign"}, or null when not well formed
 * @param reason {@code "format"} or {@code "checksum"} when not well formed, else null
 */
public record KeyCheck(boolean wellFormed, String normalized, String kind, String reason) {
    public static final String NATIVE = "native";
    public static final String FOREIGN = "foreign";
    public static final String FORMAT = "format";
    public static final String CHECKSUM = "checksum";

    static KeyCheck ok(String normalized, String kind) {
        return new KeyCheck(true, normalized, kind, null);
    }

    static KeyCheck refused(String reason) {
        return new KeyCheck(false, null, null, reason);
    }

    /** True for a key imported from another system, matched by its exact text. */
    public boolean isForeign() {
        return FOREIGN.equals(kind);
    }

    /** {@code {well_formed, normalized, kind, reason}}, as the conformance command prints it. */
    public Map<String, Object> toJson() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("well_formed", wellFormed);
        out.put("normalized", normalized);
        out.put("kind", kind);
        out.put("reason", reason);
        return out;
    }
}
