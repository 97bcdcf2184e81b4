package dev.licensing.client;

import java.util.Map;

/**
 * The answer of the update feed, {@code GET /api/v1/products/{id}/updates}.
 *
 * @param updateAvailable whether a newer release fits this machine
 * @param release the release ({@code version}, {@code channel}, {@code notes}…), or null
 * @param artifact the file for this platform and arch ({@code filename, platform, arch, url, size,
 *     sha256, signature}), or null; its {@code url} downloads it with the licence credential
 * @param json the whole answer
 */
public record UpdateCheck(boolean updateAvailable, Map<String, Object> release, Map<String, Object> artifact, Map<String, Object> json) {
    public UpdateCheck {
        release = Json.frozen(release);
        artifact = Json.frozen(artifact);
        json = Json.frozen(json);
    }

    @SuppressWarnings("unchecked")
    static UpdateCheck of(Object body) {
        if (!(body instanceof Map) || !(((Map<?, ?>) body).get("update_available") instanceof Boolean))
            throw LicensingException.noAnswer("invalid_response", "expected an update check with update_available, got " + Json.typeName(body), null);
        Map<String, Object> m = (Map<String, Object>) body;
        return new UpdateCheck((Boolean) m.get("update_available"),
                m.get("release") instanceof Map ? (Map<String, Object>) m.get("release") : null,
                m.get("artifact") instanceof Map ? (Map<String, Object>) m.get("artifact") : null, m);
    }
}
