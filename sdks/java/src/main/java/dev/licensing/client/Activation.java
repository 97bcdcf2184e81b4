package dev.licensing.client;

import java.util.Map;

/**
 * One machine's seat on a licence, as the API answers it.
 *
 * @param id {@code act_…}
 * @param fingerprint the machine's fingerprint
 * @param name the machine's name, or null
 * @param createdAt when it was activated (ISO 8601)
 * @param leaseExpiresAt when a floating seat lapses without a heartbeat (ISO 8601); null for a node-locked one
 * @param json the whole answer
 */
public record Activation(String id, String fingerprint, String name, String createdAt, String leaseExpiresAt, Map<String, Object> json) {
    public Activation {
        json = Json.frozen(json);
    }

    /** True for a floating seat (it has a lease to renew). */
    public boolean isFloating() {
        return leaseExpiresAt != null;
    }

    static Activation of(Object body) {
        if (!(body instanceof Map) || !(((Map<?, ?>) body).get("id") instanceof String))
            throw LicensingException.noAnswer("invalid_response", "expected an activation with an id, got " + Json.typeName(body), null);
        @SuppressWarnings("unchecked")
        Map<String, Object> m = (Map<String, Object>) body;
        return new Activation((String) m.get("id"), text(m.get("fingerprint")), text(m.get("name")), text(m.get("created_at")),
                text(m.get("lease_expires_at")), m);
    }

    static String text(Object v) {
        return v instanceof String ? (String) v : null;
    }
}
