package dev.licensing.client;

import static dev.licensing.client.Check.equal;
import static dev.licensing.client.Check.fails;
import static dev.licensing.client.Check.isFalse;
import static dev.licensing.client.Check.isTrue;
import static dev.licensing.client.MockApi.empty;
import static dev.licensing.client.MockApi.json;
import static dev.licensing.client.MockApi.problem;

import java.net.ServerSocket;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

public class LicensedAppTest {
    static final String KEY = LicenseKeysTest.KEY;
    static final String KEY_PATH = "/api/v1/licenses/" + KEY;

    /** The waits the transport asked for, instead of waiting. */
    final List<Long> waits = Collections.synchronizedList(new ArrayList<>());

    LicensedApp.Builder app(MockApi api) {
        return LicensedApp.builder()
                .baseUrl(api.baseUrl() + "/")
                .licenseKey(" " + KEY + " ")
                .fingerprint("machine-1")
                .timeout(Duration.ofSeconds(5))
                .sleeper(waits::add);
    }

    static Map<String, Object> activation(String id, String lease) {
        Map<String, Object> a = new LinkedHashMap<>();
        a.put("id", id);
        a.put("fingerprint", "machine-1");
        a.put("name", null);
        a.put("created_at", "2026-06-01T12:00:00.000Z");
        a.put("lease_expires_at", lease);
        return a;
    }

    static Map<String, Object> validation(boolean valid, String code, Object leaseSeconds) {
        Map<String, Object> policy = new LinkedHashMap<>();
        policy.put("lease_seconds", leaseSeconds);
        Map<String, Object> license = new LinkedHashMap<>();
        license.put("key", KEY);
        license.put("policy", policy);
        license.put("entitlements", List.of("pdf-export"));
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("valid", valid);
        v.put("code", code);
        v.put("detail", valid ? "the licence is valid" : "no");
        v.put("status", "active");
        v.put("expires_at", null);
        v.put("entitlements", List.of("pdf-export", "sso"));
        v.put("next_action", valid ? "none" : "contact_vendor");
        v.put("cache_until", "2026-06-02T12:00:00.000Z");
        v.put("license", license);
        return v;
    }

    public void testValidateSendsTheLicenceCredentialAndBody() throws Exception {
        try (MockApi api = new MockApi()) {
            api.handler = r -> json(200, validation(true, "valid", null));
            LicensedApp app = app(api).productId("prod_1").build();
            Validation v = app.validate("pdf-export", "sso");
            equal(true, v.valid());
            equal("valid", v.code());
            equal("none", v.nextAction());
            equal(List.of("pdf-export", "sso"), v.entitlements());
            equal(null, v.leaseSeconds());
            MockApi.Request r = api.requests.get(0);
            equal("POST", r.method());
            equal("/api/v1/keys/validate", r.path());
            equal("License " + KEY, r.header("Authorization"), "the licence key, trimmed, is the credential");
            equal("application/json", r.header("Accept"));
            isTrue(r.header("Content-Type").startsWith("application/json"), r.header("Content-Type"));
            Map<String, Object> body = r.json();
            equal(KEY, body.get("key"));
            equal("prod_1", body.get("product_id"));
            equal("machine-1", body.get("fingerprint"));
            equal(List.of("pdf-export", "sso"), body.get("entitlements"));
            app.validate();
            isFalse(api.requests.get(1).json().containsKey("entitlements"), "no entitlements asked: none sent");
            fails(IllegalArgumentException.class, () -> app.validate("ok", ""));
        }
    }

    public void testRetriesA429AfterRetryAfter() throws Exception {
        try (MockApi api = new MockApi()) {
            AtomicInteger calls = new AtomicInteger();
            api.handler = r -> calls.incrementAndGet() == 1
                    ? problem(429, "rate_limited", "slow down").header("Retry-After", "2")
                    : json(200, validation(true, "valid", null));
            Validation v = app(api).build().validate();
            equal(true, v.valid());
            equal(2, api.requests.size());
            equal(List.of(2000L), waits, "waited as Retry-After said");
        }
    }

    public void testRetriesA503AndNoAnswerWithBackoff() throws Exception {
        try (MockApi api = new MockApi()) {
            AtomicInteger calls = new AtomicInteger();
            api.handler = r -> calls.incrementAndGet() < 3 ? empty(503) : json(200, validation(true, "valid", null));
            equal(true, app(api).build().validate().valid());
            equal(3, api.requests.size());
            equal(2, waits.size());
            isTrue(waits.get(0) >= 250 && waits.get(0) <= 500, "first back-off " + waits.get(0));
            isTrue(waits.get(1) >= 500 && waits.get(1) <= 1000, "second back-off " + waits.get(1));
        }
    }

    public void testGivesUpAfterMaxRetries() throws Exception {
        try (MockApi api = new MockApi()) {
            api.handler = r -> problem(429, "rate_limited", "slow down").header("Retry-After", "1");
            LicensingException e = fails(LicensingException.class, () -> app(api).maxRetries(1).build().validate());
            equal(429, e.status());
            equal("rate_limited", e.code());
            equal(1L, e.retryAfterSeconds());
            equal(2, api.requests.size());
        }
    }

    public void testDoesNotWaitLongerThanMaxRetryDelay() throws Exception {
        try (MockApi api = new MockApi()) {
            api.handler = r -> problem(503, "service_unavailable", "down").header("Retry-After", "3600");
            LicensingException e = fails(LicensingException.class, () -> app(api).build().validate());
            equal(503, e.status());
            equal(1, api.requests.size(), "thrown at once");
            equal(List.of(), waits);
        }
    }

    public void testRetryAfterAsAnHttpDate() {
        long now = Instant.parse("2026-06-01T12:00:00Z").toEpochMilli();
        equal(30L, Transport.parseRetryAfter(java.util.Optional.of("Mon, 01 Jun 2026 12:00:30 GMT"), now));
        equal(0L, Transport.parseRetryAfter(java.util.Optional.of("Mon, 01 Jun 2026 11:00:00 GMT"), now));
        equal(null, Transport.parseRetryAfter(java.util.Optional.of("-3"), now));
        equal(null, Transport.parseRetryAfter(java.util.Optional.empty(), now));
    }

    public void testNoAnswerIsANetworkErrorAfterRetries() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        LicensedApp app = LicensedApp.builder().baseUrl("http://127.0.0.1:" + port).licenseKey(KEY).sleeper(waits::add).build();
        LicensingException e = fails(LicensingException.class, app::validate);
        equal(0, e.status());
        equal("network_error", e.code());
        isTrue(e.isUnanswered(), "no answer");
        equal(2, waits.size(), "two retries by default");
    }

    public void testErrorFieldsFromProblemJson() throws Exception {
        try (MockApi api = new MockApi()) {
            api.handler = r -> problem(409, "conflict", "activation_limit_reached: the licence is already active on 2 machines", "next_action", "free_a_seat");
            LicensingException e = fails(LicensingException.class, () -> app(api).build().activate());
            equal(409, e.status());
            equal("conflict", e.code());
            equal("activation_limit_reached: the licence is already active on 2 machines", e.detail());
            equal("free_a_seat", e.nextAction());
            equal(null, e.validationCode());
            equal("req_test", e.requestId());
            equal(1, api.requests.size(), "a 409 is not tried again");
            isFalse(e.isUnanswered(), "a refusal is an answer");

            api.handler = r -> problem(403, "forbidden", "the licence has expired", "validation_code", "expired", "next_action", "renew");
            e = fails(LicensingException.class, () -> app(api).productId("prod_1").build().checkForUpdate("1.0.0", "linux", "x86_64", null));
            equal("expired", e.validationCode());
            equal("renew", e.nextAction());

            api.handler = r -> problem(400, "invalid_request", "bad", "errors", List.of(Map.of("field", "fingerprint", "message", "too long")));
            e = fails(LicensingException.class, () -> app(api).build().validate());
            equal(List.of(new LicensingException.FieldError("fingerprint", "too long")), e.errors());
        }
    }

    public void testAnswersThatAreNotTheApis() throws Exception {
        try (MockApi api = new MockApi()) {
            api.handler = r -> new MockApi.Reply(502, Map.of("Content-Type", "text/html"), "<html>Bad Gateway</html>");
            LicensingException e = fails(LicensingException.class, () -> app(api).build().validate());
            equal(502, e.status());
            equal("service_unavailable", e.code());
            equal("<html>Bad Gateway</html>", e.detail());

            api.handler = r -> new MockApi.Reply(200, Map.of("Content-Type", "text/html"), "<html>login</html>");
            e = fails(LicensingException.class, () -> app(api).build().validate());
            equal("invalid_response", e.code());

            api.handler = r -> new MockApi.Reply(200, Map.of("Content-Type", "application/json"), "{not json");
            e = fails(LicensingException.class, () -> app(api).build().validate());
            equal("invalid_response", e.code());
        }
    }

    public void testActivateHeartbeatDeactivatePaths() throws Exception {
        try (MockApi api = new MockApi()) {
            api.handler = r -> {
                if (r.method().equals("POST") && r.path().equals(KEY_PATH + "/activations")) return json(201, activation("act_1", "2026-06-01T12:05:00.000Z"));
                if (r.path().equals(KEY_PATH + "/activations/act_1/heartbeat")) return json(200, activation("act_1", "2026-06-01T12:10:00.000Z"));
                if (r.method().equals("DELETE")) return empty(204);
                return problem(404, "not_found", "no");
            };
            LicensedApp app = app(api).name("Build box").build();
            Activation seat = app.activate();
            equal("act_1", seat.id());
            isTrue(seat.isFloating(), "a lease");
            equal(Map.of("fingerprint", "machine-1", "name", "Build box"), api.requests.get(0).json());
            equal(seat, app.activation());
            equal("2026-06-01T12:10:00.000Z", app.heartbeat().leaseExpiresAt());
            equal("2026-06-01T12:10:00.000Z", app.activation().leaseExpiresAt(), "the renewed seat is remembered");
            app.deactivate();
            MockApi.Request delete = api.requests("DELETE").get(0);
            equal(KEY_PATH + "/activations/act_1", delete.path());
            equal("fingerprint=machine-1", delete.query(), "its own seat, named by its fingerprint");
            equal(null, app.activation());
            app.deactivate();
            equal(1, api.requests("DELETE").size(), "nothing left to release");
        }
    }

    public void testPathSegmentsAreEncoded() throws Exception {
        try (MockApi api = new MockApi()) {
            api.handler = r -> empty(204);
            LicensedApp app = LicensedApp.builder().baseUrl(api.baseUrl()).licenseKey("abc+def=ghi:jkl~m/n").sleeper(waits::add).build();
            app.deactivate("act 1/..");
            equal("/api/v1/licenses/abc%2Bdef%3Dghi%3Ajkl~m%2Fn/activations/act%201%2F..", api.requests.get(0).path());
            equal(null, api.requests.get(0).query(), "no fingerprint named");
            fails(IllegalArgumentException.class, () -> app.deactivate(".."));
        }
    }

    public void testHeartbeatActivatesAgainWhenTheSeatIsGone() throws Exception {
        try (MockApi api = new MockApi()) {
            AtomicInteger activations = new AtomicInteger();
            api.handler = r -> {
                if (r.path().endsWith("/heartbeat")) return problem(409, "conflict", "lease_expired: the seat lapsed; activate again");
                if (r.path().endsWith("/activations")) return json(201, activation("act_" + activations.incrementAndGet(), "2026-06-01T12:05:00.000Z"));
                return problem(404, "not_found", "no");
            };
            LicensedApp app = app(api).build();
            equal("act_1", app.heartbeat().id(), "no seat yet: activates");
            equal("act_2", app.heartbeat().id(), "lapsed: activates again");
            equal("act_2", app.activation().id());
        }
    }

    public void testDeactivateTreatsAGoneSeatAsReleased() throws Exception {
        try (MockApi api = new MockApi()) {
            api.handler = r -> r.method().equals("DELETE") ? problem(404, "not_found", "gone") : json(201, activation("act_1", null));
            LicensedApp app = app(api).build();
            app.activate();
            app.deactivate();
            equal(null, app.activation());
        }
    }

    public void testStartHeartbeatsAndCloseReleases() throws Exception {
        try (MockApi api = new MockApi()) {
            CountDownLatch beats = new CountDownLatch(2);
            AtomicInteger heartbeats = new AtomicInteger();
            api.handler = r -> {
                if (r.path().equals("/api/v1/keys/validate")) return json(200, validation(true, "valid", 30));
                if (r.path().equals(KEY_PATH + "/activations")) return json(201, activation("act_1", "2026-06-01T12:00:30.000Z"));
                if (r.path().endsWith("/heartbeat")) {
                    heartbeats.incrementAndGet();
                    return json(200, activation("act_1", "2026-06-01T12:00:40.000Z"));
                }
                if (r.method().equals("DELETE")) return empty(204);
                return problem(404, "not_found", "no");
            };
            List<Activation> renewed = Collections.synchronizedList(new ArrayList<>());
            LicensedApp app = app(api).heartbeatInterval(Duration.ofMillis(40)).onHeartbeat(a -> {
                renewed.add(a);
                beats.countDown();
            }).build();
            LicensedAppState state = app.start();
            equal(30L, state.leaseSeconds());
            equal(Duration.ofMillis(40), state.heartbeatEvery());
            equal(List.of("pdf-export", "sso"), state.entitlements());
            equal("act_1", state.activation().id());
            isTrue(app.isRunning(), "heartbeating");
            isTrue(beats.await(5, TimeUnit.SECONDS), "two heartbeats within 5 s");
            equal("2026-06-01T12:00:40.000Z", renewed.get(0).leaseExpiresAt());

            app.close();
            isFalse(app.isRunning(), "stopped");
            equal(null, app.activation());
            List<MockApi.Request> deletes = api.requests("DELETE");
            equal(1, deletes.size(), "the seat is released");
            equal(KEY_PATH + "/activations/act_1", deletes.get(0).path());
            int after = heartbeats.get();
            Thread.sleep(150);
            equal(after, heartbeats.get(), "no heartbeat after close()");
            app.close();
            equal(1, api.requests("DELETE").size(), "a second close() has nothing to release");
        }
    }

    public void testHeartbeatIntervalIsAThirdOfTheLease() {
        equal(Duration.ofSeconds(10), LicensedApp.heartbeatInterval(30));
        equal(Duration.ofSeconds(100), LicensedApp.heartbeatInterval(300));
        equal(Duration.ofSeconds(1), LicensedApp.heartbeatInterval(1), "at least a second");
    }

    public void testNodeLockedSeatHasNoHeartbeats() throws Exception {
        try (MockApi api = new MockApi()) {
            api.handler = r -> r.path().equals("/api/v1/keys/validate") ? json(200, validation(true, "valid", null))
                    : r.method().equals("DELETE") ? empty(204) : json(201, activation("act_1", null));
            try (LicensedApp app = app(api).build()) {
                LicensedAppState state = app.start();
                equal(null, state.heartbeatEvery());
                isFalse(app.isRunning(), "nothing to renew");
            }
            equal(1, api.requests("DELETE").size(), "try-with-resources released the seat");
        }
    }

    public void testBackgroundFailuresGoToOnErrorAndBeatsGoOn() throws Exception {
        try (MockApi api = new MockApi()) {
            CountDownLatch failures = new CountDownLatch(2);
            api.handler = r -> {
                if (r.path().equals("/api/v1/keys/validate")) return json(200, validation(true, "valid", 60));
                if (r.path().endsWith("/heartbeat")) return problem(500, "internal", "boom");
                if (r.method().equals("DELETE")) return empty(204);
                return json(201, activation("act_1", "2026-06-01T12:01:00.000Z"));
            };
            LicensedApp app = app(api).heartbeatInterval(Duration.ofMillis(30)).onError(e -> {
                failures.countDown();
                throw new IllegalStateException("an onError that throws stops nothing");
            }).build();
            app.start();
            isTrue(failures.await(5, TimeUnit.SECONDS), "two failures reported");
            isTrue(app.lastError() instanceof LicensingException, "lastError " + app.lastError());
            equal(500, ((LicensingException) app.lastError()).status());
            isTrue(app.isRunning(), "still heartbeating");
            app.close();
        }
    }

    public void testLicenseFileAndOfflineCheck() throws Exception {
        TestSigner signer = new TestSigner("kid_a");
        Map<String, Object> mine = signer.file(Json.write(signer.payload("fingerprint", "machine-1")));
        try (MockApi api = new MockApi()) {
            api.handler = r -> json(201, mine);
            LicensedApp app = app(api).productId("prod_1").publicKeys(List.of(signer.publicKey())).build();
            LicenseFile file = app.licenseFile(7);
            equal(Map.of("fingerprint", "machine-1", "ttl_days", 7L), api.requests.get(0).json());
            equal(KEY_PATH + "/file", api.requests.get(0).path());
            Instant now = Instant.parse("2026-06-02T00:00:00Z");
            Verification v = app.verifyOffline(file.toJson(), now);
            equal("valid", v.code());

            String another = Json.write(signer.file(Json.write(signer.payload("license_key", "38b1460a-5104-4067-a91d-77b872934d51"))));
            equal("license_mismatch", app.verifyOffline(another, now).code());
            String otherProduct = Json.write(signer.file(Json.write(signer.payload("product_id", "prod_2"))));
            equal("license_mismatch", app.verifyOffline(otherProduct, now).code());
            String otherMachine = Json.write(signer.file(Json.write(signer.payload("fingerprint", "machine-2"))));
            equal("fingerprint_mismatch", app.verifyOffline(otherMachine, now).code());
            // The key in any spelling the format accepts is the same licence.
            equal(true, LicensedApp.sameKey("7k3qf9xw2mt0rbhpz4dnc8e1vq3atg", KEY));
            equal(false, LicensedApp.sameKey("38B1460A-5104-4067-A91D-77B872934D51", "38b1460a-5104-4067-a91d-77b872934d51"));
            fails(IllegalStateException.class, () -> app(api).build().verifyOffline(file.toJson(), now));
        }
    }

    public void testCheckForUpdate() throws Exception {
        try (MockApi api = new MockApi()) {
            api.handler = r -> json(200, Map.of("update_available", true, "release", Map.of("version", "1.5.0"),
                    "artifact", Map.of("filename", "app.tar.gz", "url", "/api/v1/releases/rel_1/artifacts/app.tar.gz")));
            LicensedApp app = app(api).productId("prod_1").build();
            UpdateCheck check = app.checkForUpdate("1.4.2", "linux", "x86_64", "beta");
            equal(true, check.updateAvailable());
            equal("1.5.0", check.release().get("version"));
            equal("app.tar.gz", check.artifact().get("filename"));
            MockApi.Request r = api.requests.get(0);
            equal("GET", r.method());
            equal("/api/v1/products/prod_1/updates", r.path());
            equal("version=1.4.2&platform=linux&arch=x86_64&channel=beta", r.query());
            fails(IllegalStateException.class, () -> app(api).build().checkForUpdate("1", "linux", "x86_64", null));
        }
    }

    public void testBuilderChecks() {
        fails(IllegalArgumentException.class, () -> LicensedApp.builder().licenseKey(KEY).build());
        fails(IllegalArgumentException.class, () -> LicensedApp.builder().baseUrl("ftp://x").licenseKey(KEY).build());
        fails(IllegalArgumentException.class, () -> LicensedApp.builder().baseUrl("http://x").build());
        fails(IllegalArgumentException.class, () -> LicensedApp.builder().baseUrl("http://x").licenseKey("two words").build());
        fails(IllegalArgumentException.class, () -> LicensedApp.builder().baseUrl("http://x").licenseKey("k\r\nX-Evil: 1").build());
        LicensedApp noMachine = LicensedApp.builder().baseUrl("http://x").licenseKey(KEY).build();
        fails(IllegalStateException.class, noMachine::activate);
        isFalse(noMachine.toString().contains(KEY), "toString never shows the key");
    }
}
