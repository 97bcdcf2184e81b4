package dev.licensing.client;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What {@link Webhooks#verify} found.
 *
 * @param valid whether the delivery is genuine and fresh
 * @param code {@code "valid"} or why not: {@code missing_headers}, {@code invalid_timestamp},
 *     {@code timestamp_out_of_tolerance}, {@code bad_signature}
 */
public record WebhookVerification(boolean valid, String code) {
    /** {@code {valid, code}}, as the conformance command prints it. */
    public Map<String, Object> toJson() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("valid", valid);
        out.put("code", code);
        return out;
    }
}
