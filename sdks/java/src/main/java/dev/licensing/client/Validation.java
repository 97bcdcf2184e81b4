package dev.licensing.client;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * The answer of {@code POST /api/v1/keys/validate}. A "no" is an answer, not an error: read
 * {@link #valid()}, {@link #code()} and {@link #nextAction()} (docs/api.md "Validation").
 *
 * @param valid whether this machine may run
 * @param code {@code valid}, {@code expired_in_grace}, or why not: {@code not_found},
 *     {@code product_mismatch}, {@code revoked}, {@code subscription_unpaid}, {@code suspended},
 *     {@code expired}, {@code lease_expired}, {@code activation_limit_reached}, {@code not_activated},
 *     {@code entitlements_missing}
 * @param detail the reason, for a person
 * @param nextAction what to do: {@code none}, {@code activate}, {@code renew}, {@code contact_vendor},
 *     {@code free_a_seat}, {@code update_payment}, {@code update_key}
 * @param entitlements the licence's effective entitlements (feature codes)
 * @param leaseSeconds the policy's lease for floating seats, or null (node-locked, or no licence)
 * @param cacheUntil how long the answer may be trusted offline (ISO 8601), or null
 * @param json the whole answer
 */
public record Validation(boolean valid, String code, String detail, String nextAction, List<String> entitlements,
        Long leaseSeconds, String cacheUntil, Map<String, Object> json) {
    public Validation {
        entitlements = List.copyOf(entitlements);
        json = Json.frozen(json);
    }

    static Validation of(Object body) {
        if (!(body instanceof Map) || !(((Map<?, ?>) body).get("valid") instanceof Boolean))
            throw LicensingException.noAnswer("invalid_response", "expected a validation answer with valid, got " + Json.typeName(body), null);
        @SuppressWarnings("unchecked")
        Map<String, Object> m = (Map<String, Object>) body;
        Map<?, ?> license = m.get("license") instanceof Map ? (Map<?, ?>) m.get("license") : Map.of();
        Map<?, ?> policy = license.get("policy") instanceof Map ? (Map<?, ?>) license.get("policy") : Map.of();
        Object lease = policy.get("lease_seconds");
        Object entitlements = m.get("entitlements") instanceof List ? m.get("entitlements") : license.get("entitlements");
        return new Validation((Boolean) m.get("valid"), Activation.text(m.get("code")), Activation.text(m.get("detail")),
                Activation.text(m.get("next_action")), strings(entitlements),
                lease instanceof Number && ((Number) lease).longValue() > 0 ? ((Number) lease).longValue() : null,
                Activation.text(m.get("cache_until")), m);
    }

    static List<String> strings(Object list) {
        if (!(list instanceof List)) return List.of();
        List<String> out = new ArrayList<>();
        for (Object item : (List<?>) list) if (item instanceof String) out.add((String) item);
        return Collections.unmodifiableList(out);
    }
}
