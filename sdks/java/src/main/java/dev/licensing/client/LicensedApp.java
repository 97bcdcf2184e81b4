package dev.licensing.client;

import java.net.http.HttpClient;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * One licensed app on one machine, speaking for its licence with the licence key alone
 * ({@code Authorization: License <key>}): no API key ships in the app.
 *
 * <pre>{@code
 * try (LicensedApp app = LicensedApp.builder()
 *         .baseUrl("https://licensing.example.com").licenseKey(key).fingerprint(machineId).build()) {
 *     LicensedAppState state = app.start();          // activate, validate, heartbeat a floating seat
 *     if (!state.validation().valid()) refuse(state.validation().detail());
 *     runTheApp(state.entitlements());
 * }                                                  // close(): stop heartbeating, release the seat
 * }</pre>
 *
 * <p>Every call is tried again after a 429, a 503 or no answer (all of them are harmless to repeat),
 * waiting as Retry-After says, up to {@code maxRetries} times and never longer than
 * {@code maxRetryDelay}; a refusal is a {@link LicensingException}. Thread-safe.
 */
public final class LicensedApp implements AutoCloseable {
    /** Statuses of a heartbeat that mean "this activation is no longer a seat": lapsed, reclaimed or deactivated. */
    private static final Set<Integer> SEAT_GONE = Set.of(404, 409, 410);

    private final String licenseKey;
    private final String fingerprint;
    private final String name;
    private final String productId;
    private final List<PublicKey> publicKeys;
    private final Consumer<Throwable> onError;
    private final Consumer<Activation> onHeartbeat;
    private final Duration heartbeatOverride;
    private final Duration timeout;
    private final Transport http;

    /** Guards the timer and the remembered seat's replacement; never held during a request. */
    private final Object lock = new Object();
    /** Serialises activations, so that concurrent calls do not race to replace the seat. */
    private final Object activating = new Object();
    /** start() and close() one at a time: a close() during a start() waits for it, then releases its seat. */
    private final Object lifecycle = new Object();
    private volatile Activation current;
    private volatile Throwable lastError;
    private ScheduledExecutorService timer;
    private ScheduledFuture<?> beats;

    private LicensedApp(Builder b) {
        if (b.licenseKey == null || b.licenseKey.trim().isEmpty()) throw new IllegalArgumentException("licenseKey is required");
        this.licenseKey = b.licenseKey.trim();
        this.fingerprint = optional(b.fingerprint, "fingerprint");
        this.name = optional(b.name, "name");
        this.productId = optional(b.productId, "productId");
        this.publicKeys = b.publicKeys == null ? null : List.copyOf(b.publicKeys);
        this.onError = b.onError;
        this.onHeartbeat = b.onHeartbeat;
        this.heartbeatOverride = b.heartbeatInterval;
        this.timeout = b.timeout;
        if (b.maxRetries < 0) throw new IllegalArgumentException("maxRetries must be 0 or more");
        HttpClient client = b.httpClient != null ? b.httpClient : HttpClient.newBuilder().connectTimeout(b.timeout).build();
        Transport.Sleeper sleeper = b.sleeper != null ? b.sleeper : Thread::sleep;
        this.http = new Transport(b.baseUrl, this.licenseKey, client, b.timeout, b.maxRetries, b.maxRetryDelay, sleeper,
                () -> ThreadLocalRandom.current().nextDouble());
    }

    private static String optional(String value, String name) {
        if (value == null) return null;
        if (value.trim().isEmpty()) throw new IllegalArgumentException(name + " must not be empty (leave it out instead)");
        return value.trim();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The licence key this app speaks for. */
    public String licenseKey() {
        return licenseKey;
    }

    /** This machine's fingerprint, or null when none was given. */
    public String fingerprint() {
        return fingerprint;
    }

    /** This machine's remembered seat, or null before {@link #activate()} and after {@link #deactivate()}. */
    public Activation activation() {
        return current;
    }

    /** True between {@link #start()} and {@link #close()} while a floating seat is heartbeated. */
    public boolean isRunning() {
        synchronized (lock) {
            return beats != null;
        }
    }

    /** The last failure of a background heartbeat, or null (cleared by the next success). */
    public Throwable lastError() {
        return lastError;
    }

    /**
     * Asks whether this machine may run: {@code POST /api/v1/keys/validate} with the key, the
     * fingerprint (when given) and the product (when given: another product's key answers
     * {@code product_mismatch}). A "no" is an answer: read {@code valid}, {@code code},
     * {@code nextAction} ({@code lease_expired} → activate again; {@code entitlements_missing} → the
     * detail names the missing codes).
     *
     * @param entitlements feature codes the licence must include
     */
    public Validation validate(String... entitlements) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("key", licenseKey);
        if (productId != null) body.put("product_id", productId);
        if (fingerprint != null) body.put("fingerprint", fingerprint);
        if (entitlements != null && entitlements.length > 0) {
            List<String> codes = new ArrayList<>();
            for (String code : entitlements) {
                if (code == null || code.isEmpty()) throw new IllegalArgumentException("entitlements must be non-empty strings");
                codes.add(code);
            }
            body.put("entitlements", codes);
        }
        return Validation.of(http.request("POST", "/api/v1/keys/validate", null, body, true));
    }

    /** Takes a seat for this machine with the builder's machine name: see {@link #activate(String)}. */
    public Activation activate() {
        return activate(name);
    }

    /**
     * Takes a seat for this machine: {@code POST /api/v1/licenses/{key}/activations} with the
     * fingerprint. Idempotent per fingerprint (the server answers the existing seat). The seat is
     * remembered for {@link #heartbeat()} and {@link #deactivate()}.
     *
     * @param machineName a name for this machine in the licence's activation list, or null
     * @throws LicensingException 409 {@code conflict} when the licence is not active or every seat is
     *     taken ({@code nextAction()} {@code free_a_seat}); 401 for an unknown, suspended or revoked key
     * @throws IllegalStateException when the builder was given no fingerprint
     */
    public Activation activate(String machineName) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("fingerprint", requireFingerprint("activate"));
        if (machineName != null) body.put("name", machineName);
        synchronized (activating) {
            Activation seat = Activation.of(http.request("POST", licensePath() + "/activations", null, body, true));
            current = seat;
            return seat;
        }
    }

    /**
     * Renews the remembered seat's lease ({@code POST …/activations/{id}/heartbeat}) and answers it
     * with its new {@code leaseExpiresAt}. When the seat is gone (lapsed, reclaimed or deactivated:
     * 404, 409 or 410) it activates once more and answers the new seat; with no seat yet it activates.
     */
    public Activation heartbeat() {
        Activation seat = current;
        if (seat == null) return activate();
        try {
            Activation renewed = heartbeat(seat.id());
            synchronized (lock) {
                // A close() or a re-activation may have replaced the seat while this was on its way.
                if (current != null && current.id().equals(seat.id())) current = renewed;
            }
            return renewed;
        } catch (LicensingException e) {
            if (!SEAT_GONE.contains(e.status())) throw e;
            synchronized (lock) {
                if (current != null && current.id().equals(seat.id())) current = null;
            }
            return activate();
        }
    }

    /** Renews one activation's lease, as it is: no re-activation, nothing remembered. */
    public Activation heartbeat(String activationId) {
        String path = licensePath() + "/activations/" + Transport.segment(activationId, "activation id") + "/heartbeat";
        return Activation.of(http.request("POST", path, null, null, true));
    }

    /**
     * Releases the remembered seat at once ({@code DELETE …/activations/{id}?fingerprint=…}, its own
     * fingerprint, so releasing its own floating seat never spends the customer's deactivations).
     * Does nothing when there is none; a seat the server no longer has (404) counts as released. Does
     * not stop the heartbeats: {@link #close()} does both.
     */
    public void deactivate() {
        Activation seat = current;
        if (seat == null) return;
        try {
            deactivate(seat.id(), seat.fingerprint() != null ? seat.fingerprint() : fingerprint);
        } catch (LicensingException e) {
            if (e.status() != 404) throw e;
        }
        synchronized (lock) {
            if (current != null && current.id().equals(seat.id())) current = null;
        }
    }

    /**
     * Frees one activation: {@code DELETE /api/v1/licenses/{key}/activations/{id}}. Without the seat's
     * own fingerprint this counts against the policy's {@code customer_deactivations_per_30_days}.
     */
    public void deactivate(String activationId) {
        deactivate(activationId, null);
    }

    /** Frees one activation, naming the seat's own fingerprint (uncounted for a floating seat). */
    public void deactivate(String activationId, String seatFingerprint) {
        Map<String, String> query = seatFingerprint == null ? null : Map.of("fingerprint", seatFingerprint);
        http.request("DELETE", licensePath() + "/activations/" + Transport.segment(activationId, "activation id"), query, null, true);
    }

    /**
     * A signed licence file for offline use ({@code POST /api/v1/licenses/{key}/file}), bound to this
     * machine when a fingerprint was given. Keep {@link LicenseFile#toJson()} on disk and check it with
     * {@link #verifyOffline(String, Instant)} when the server cannot be reached.
     */
    public LicenseFile licenseFile() {
        return licenseFile(null);
    }

    /** A licence file valid offline for {@code ttlDays} days (1–365, at most the policy's cap; null: the server's default). */
    public LicenseFile licenseFile(Integer ttlDays) {
        Map<String, Object> body = new LinkedHashMap<>();
        if (fingerprint != null) body.put("fingerprint", fingerprint);
        if (ttlDays != null) body.put("ttl_days", ttlDays);
        Object answer = http.request("POST", licensePath() + "/file", null, body, true);
        if (!(answer instanceof Map)) throw LicensingException.noAnswer("invalid_response", "expected a licence file, got " + Json.typeName(answer), null);
        return LicenseFile.of((Map<?, ?>) answer);
    }

    /**
     * Asks the product's update feed whether a newer release fits this machine:
     * {@code GET /api/v1/products/{productId}/updates?version=&platform=&arch=&channel=}. Only releases
     * the licence may have are offered.
     *
     * @param version the version running now (Semantic Versioning)
     * @param platform {@code macos}, {@code windows} or {@code linux}
     * @param arch {@code x86_64} or {@code aarch64}
     * @param channel the least stable channel accepted ({@code stable}, {@code beta}…), or null for stable
     * @throws LicensingException 403 when the licence may have no updates at all: {@code validationCode()}
     *     says why ({@code expired}), {@code nextAction()} what the user can do ({@code renew})
     * @throws IllegalStateException when the builder was given no productId
     */
    public UpdateCheck checkForUpdate(String version, String platform, String arch, String channel) {
        if (productId == null) throw new IllegalStateException("checkForUpdate needs the product: give productId to the builder");
        Map<String, String> query = new LinkedHashMap<>();
        query.put("version", required(version, "version"));
        query.put("platform", required(platform, "platform"));
        query.put("arch", required(arch, "arch"));
        if (channel != null) query.put("channel", required(channel, "channel"));
        String path = "/api/v1/products/" + Transport.segment(productId, "product id") + "/updates";
        return UpdateCheck.of(http.request("GET", path, query, null, true));
    }

    /**
     * Starts the licensed session: {@link #activate()}, then {@link #validate(String...)} (whose
     * licence names the policy's lease and the entitlements), then, for a floating seat, a heartbeat
     * every third of the lease on a daemon thread (it never keeps the JVM alive). A failed background
     * heartbeat goes to {@code onError} and {@link #lastError()}, and the heartbeats go on: two missed
     * beats still leave the seat alive. Calling it again restarts the heartbeats.
     *
     * @throws LicensingException when no seat can be taken or the server cannot be reached
     */
    public LicensedAppState start() {
        synchronized (lifecycle) {
            return begin();
        }
    }

    private LicensedAppState begin() {
        halt();
        Activation seat = activate();
        Validation validation = validate();
        Long lease = validation.leaseSeconds();
        Duration every = lease == null ? null : heartbeatOverride != null ? heartbeatOverride : heartbeatInterval(lease);
        if (every != null) {
            synchronized (lock) {
                timer = Executors.newSingleThreadScheduledExecutor(runnable -> {
                    Thread thread = new Thread(runnable, "licensing-heartbeat");
                    thread.setDaemon(true);
                    return thread;
                });
                // Fixed delay: each beat waits for the previous answer, so beats never pile up.
                beats = timer.scheduleWithFixedDelay(this::beat, every.toMillis(), every.toMillis(), TimeUnit.MILLISECONDS);
            }
        }
        Activation now = current;
        return new LicensedAppState(now != null ? now : seat, validation, validation.entitlements(), lease, every);
    }

    /** How often to heartbeat a lease: a third of it (at least a second), so that two missed beats still keep the seat. */
    public static Duration heartbeatInterval(long leaseSeconds) {
        return Duration.ofMillis(Math.max(1_000, leaseSeconds * 1000 / 3));
    }

    /**
     * Ends the session: stops the heartbeats (waiting for one on its way) and releases the seat
     * ({@link #deactivate()}). Safe to call more than once; a later call finds no seat to release. If
     * the release fails (no network) the exception is thrown and a later close() tries again; a
     * floating seat left behind lapses by itself.
     */
    @Override
    public void close() {
        synchronized (lifecycle) {
            halt();
            deactivate();
        }
    }

    /**
     * Checks a licence file with no network against the builder's public keys: signature, dates, this
     * machine's fingerprint, and that it is a file of this licence key (and product, when given):
     * a genuine file of another licence is refused with the code {@code license_mismatch}.
     *
     * @param fileJson the file as kept on disk
     * @param now the time to check against (null: now)
     * @throws IllegalStateException when the builder was given no public keys
     */
    public Verification verifyOffline(String fileJson, Instant now) {
        if (publicKeys == null) throw new IllegalStateException("verifyOffline needs the product's public keys: give publicKeys to the builder");
        Verification result = LicenseFiles.verify(fileJson, publicKeys, fingerprint, now);
        if (!result.valid()) return result;
        // A genuine file of another licence proves nothing about this one.
        if (!sameKey(result.licenseKey(), licenseKey)) return Verification.fail("license_mismatch");
        if (productId != null && !productId.equals(result.text("product_id"))) return Verification.fail("license_mismatch");
        return result;
    }

    /** Keys as the server compares them: a native key by its canonical reading, any other by its exact (trimmed) text. */
    static boolean sameKey(String a, String b) {
        if (a == null || b == null) return false;
        KeyCheck x = LicenseKeys.check(a);
        KeyCheck y = LicenseKeys.check(b);
        String left = x.wellFormed() ? x.normalized() : a.trim();
        String right = y.wellFormed() ? y.normalized() : b.trim();
        return left.equals(right);
    }

    /** Stops the heartbeats, waiting a bounded time for one on its way. */
    private void halt() {
        ScheduledExecutorService stopping;
        synchronized (lock) {
            stopping = timer;
            if (beats != null) beats.cancel(false);
            beats = null;
            timer = null;
        }
        if (stopping == null) return;
        stopping.shutdown();
        try {
            if (!stopping.awaitTermination(timeout.toMillis() + 5_000, TimeUnit.MILLISECONDS)) stopping.shutdownNow();
        } catch (InterruptedException e) {
            stopping.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }

    /** One background heartbeat; never throws, so the schedule is never cancelled by a failure. */
    private void beat() {
        try {
            Activation renewed = heartbeat();
            lastError = null;
            if (onHeartbeat != null) onHeartbeat.accept(renewed);
        } catch (RuntimeException e) {
            lastError = e;
            if (onError != null) {
                try {
                    onError.accept(e);
                } catch (RuntimeException ignored) {
                    // A failing onError must not stop the heartbeats.
                }
            }
        }
    }

    private String licensePath() {
        return "/api/v1/licenses/" + Transport.segment(licenseKey, "licence key");
    }

    private String requireFingerprint(String call) {
        if (fingerprint == null) throw new IllegalStateException(call + " needs this machine's fingerprint: give fingerprint to the builder");
        return fingerprint;
    }

    private static String required(String value, String name) {
        if (value == null || value.trim().isEmpty()) throw new IllegalArgumentException(name + " must be a non-empty string");
        return value.trim();
    }

    /** The settings of a {@link LicensedApp}; only baseUrl and licenseKey are required. */
    public static final class Builder {
        private String baseUrl;
        private String licenseKey;
        private String fingerprint;
        private String name;
        private String productId;
        private HttpClient httpClient;
        private List<PublicKey> publicKeys;
        private Duration timeout = Duration.ofSeconds(30);
        private int maxRetries = 2;
        private Duration maxRetryDelay = Duration.ofSeconds(60);
        private Consumer<Throwable> onError;
        private Consumer<Activation> onHeartbeat;
        private Transport.Sleeper sleeper;
        private Duration heartbeatInterval;

        private Builder() {}

        /** Where the API answers, e.g. {@code https://licensing.example.com}. */
        public Builder baseUrl(String baseUrl) {
            this.baseUrl = baseUrl;
            return this;
        }

        /** The customer's licence key: the app's only credential. */
        public Builder licenseKey(String licenseKey) {
            this.licenseKey = licenseKey;
            return this;
        }

        /** A stable, non-identifying id of this machine (e.g. a hash of a hardware id), at most 200 characters. Needed to activate. */
        public Builder fingerprint(String fingerprint) {
            this.fingerprint = fingerprint;
            return this;
        }

        /** A name for this machine in the licence's activation list (at most 100 characters). */
        public Builder name(String name) {
            this.name = name;
            return this;
        }

        /** Refuse a key of another product ({@code product_mismatch}); needed by checkForUpdate. */
        public Builder productId(String productId) {
            this.productId = productId;
            return this;
        }

        /** The HttpClient to send with (a proxy, a custom SSLContext); default: a new one. */
        public Builder httpClient(HttpClient httpClient) {
            this.httpClient = httpClient;
            return this;
        }

        /** The product's public signing keys, shipped with the app; needed by verifyOffline. */
        public Builder publicKeys(List<PublicKey> publicKeys) {
            this.publicKeys = publicKeys;
            return this;
        }

        /** Time limit of each try (default 30 s; keep it short at start-up, where a user waits). */
        public Builder timeout(Duration timeout) {
            this.timeout = Objects.requireNonNull(timeout, "timeout");
            if (timeout.isZero() || timeout.isNegative()) throw new IllegalArgumentException("timeout must be positive");
            return this;
        }

        /** Further tries after a 429, a 503 or no answer (default 2). */
        public Builder maxRetries(int maxRetries) {
            this.maxRetries = maxRetries;
            return this;
        }

        /** A Retry-After longer than this is not waited for: the error is thrown at once (default 60 s). */
        public Builder maxRetryDelay(Duration maxRetryDelay) {
            this.maxRetryDelay = Objects.requireNonNull(maxRetryDelay, "maxRetryDelay");
            return this;
        }

        /** Called with every failure of a background heartbeat (they go on). */
        public Builder onError(Consumer<Throwable> onError) {
            this.onError = onError;
            return this;
        }

        /** Called after every successful background heartbeat, with the renewed seat. */
        public Builder onHeartbeat(Consumer<Activation> onHeartbeat) {
            this.onHeartbeat = onHeartbeat;
            return this;
        }

        /** Tests: record the waits between tries instead of waiting. */
        Builder sleeper(Transport.Sleeper sleeper) {
            this.sleeper = sleeper;
            return this;
        }

        /** Tests: heartbeat this often instead of a third of the lease (a lease is at least 30 s). */
        Builder heartbeatInterval(Duration every) {
            this.heartbeatInterval = every;
            return this;
        }

        /** @throws IllegalArgumentException when baseUrl or licenseKey is missing or malformed */
        public LicensedApp build() {
            return new LicensedApp(this);
        }
    }

    @Override
    public String toString() {
        // Never the whole key: toString ends up in logs.
        String shown = licenseKey.length() > 5 ? licenseKey.substring(0, 5) + "…" : "…";
        return String.format(Locale.ROOT, "LicensedApp[%s, fingerprint=%s]", shown, fingerprint);
    }
}
