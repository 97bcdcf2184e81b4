package dev.licensing.client;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.DoubleSupplier;
import java.util.regex.Pattern;

/**
 * The HTTP side, as packages/client/src/http.ts and retry.ts do it: one credential on every request,
 * JSON in and out, and tries again after a 429, a 503 or no answer when trying again is harmless,
 * waiting as long as Retry-After says (or backing off with jitter), up to a bound.
 */
final class Transport {
    /** Waits between tries; tests record the waits instead of waiting. */
    interface Sleeper {
        void sleep(long millis) throws InterruptedException;
    }

    /** Statuses that mean "not done, try later": rate limited, or a backing service down. */
    private static final int RATE_LIMITED = 429;
    private static final int UNAVAILABLE = 503;
    private static final long BACKOFF_BASE_MS = 500;
    private static final long BACKOFF_MAX_MS = 8_000;
    private static final Pattern PRINTABLE = Pattern.compile("[\\x21-\\x7e]+");
    private static final Pattern JSON_TYPE = Pattern.compile("(?i).*\\bjson\\b.*");

    private final String base;
    private final String authorization;
    private final HttpClient http;
    private final Duration timeout;
    private final int maxRetries;
    private final long maxRetryDelayMs;
    private final Sleeper sleeper;
    private final DoubleSupplier random;

    Transport(String baseUrl, String licenseKey, HttpClient http, Duration timeout, int maxRetries,
            Duration maxRetryDelay, Sleeper sleeper, DoubleSupplier random) {
        this.base = checkBaseUrl(baseUrl);
        this.authorization = authorization(licenseKey);
        this.http = http;
        this.timeout = timeout;
        this.maxRetries = maxRetries;
        this.maxRetryDelayMs = maxRetryDelay.toMillis();
        this.sleeper = sleeper;
        this.random = random;
    }

    /** The Authorization header value; a key with spaces or control characters would forge another header. */
    static String authorization(String licenseKey) {
        if (licenseKey == null || !PRINTABLE.matcher(licenseKey.trim()).matches())
            throw new IllegalArgumentException("the licence key must be printable ASCII without spaces");
        return "License " + licenseKey.trim();
    }

    static String checkBaseUrl(String baseUrl) {
        if (baseUrl == null) throw new IllegalArgumentException("baseUrl is required, e.g. https://licensing.example.com");
        URI uri;
        try {
            uri = new URI(baseUrl.trim());
        } catch (java.net.URISyntaxException e) {
            throw new IllegalArgumentException("baseUrl must be an http(s) URL, got \"" + baseUrl + "\"");
        }
        String scheme = uri.getScheme();
        if (uri.getHost() == null || !("http".equalsIgnoreCase(scheme) || "https".equalsIgnoreCase(scheme))
                || uri.getRawQuery() != null || uri.getRawFragment() != null)
            throw new IllegalArgumentException("baseUrl must be an http(s) URL without query or fragment, got \"" + baseUrl + "\"");
        String s = baseUrl.trim();
        while (s.endsWith("/")) s = s.substring(0, s.length() - 1);
        return s;
    }

    /**
     * Sends a request, trying again what may be tried again; answers the parsed 2xx body (null when
     * there is none).
     *
     * @param idempotent true when doing it twice is harmless: only then is it tried again after a 503
     *     or no answer (where the first try may have landed); a 429 was refused before any work
     */
    Object request(String method, String path, Map<String, String> query, Object body, boolean idempotent) {
        URI uri = URI.create(base + path + queryString(query));
        HttpRequest.Builder builder = HttpRequest.newBuilder(uri)
                .timeout(timeout)
                .header("Authorization", authorization)
                .header("Accept", "application/json");
        if (body != null) {
            builder.header("Content-Type", "application/json")
                    .method(method, HttpRequest.BodyPublishers.ofString(Json.write(body), StandardCharsets.UTF_8));
        } else {
            builder.method(method, HttpRequest.BodyPublishers.noBody());
        }
        HttpRequest request = builder.build();
        for (int attempt = 0; ; attempt++) {
            LicensingException error;
            try {
                HttpResponse<byte[]> response = http.send(request, HttpResponse.BodyHandlers.ofByteArray());
                int status = response.statusCode();
                if (status >= 200 && status < 300) return parseSuccess(response);
                error = errorOf(response);
            } catch (HttpTimeoutException e) {
                error = LicensingException.noAnswer("timeout", "no answer within " + timeout.toMillis() + " ms", e);
            } catch (IOException e) {
                String why = e.getMessage() == null ? e.getClass().getSimpleName() : e.getClass().getSimpleName() + ": " + e.getMessage();
                error = LicensingException.noAnswer("network_error", "no answer from " + base + " (" + why + ")", e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw LicensingException.noAnswer("interrupted", "the thread was interrupted while waiting for an answer", e);
            }
            boolean noAnswer = error.status() == 0;
            boolean retryable = noAnswer || error.status() == RATE_LIMITED || error.status() == UNAVAILABLE;
            if (!retryable || attempt >= maxRetries || (error.status() != RATE_LIMITED && !idempotent)) throw error;
            long wait = error.retryAfterSeconds() != null ? error.retryAfterSeconds() * 1000 : backoffMillis(attempt);
            if (wait > maxRetryDelayMs) throw error;
            try {
                sleeper.sleep(wait);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw error;
            }
        }
    }

    /** Exponential back-off with equal jitter: half the step fixed, half random. */
    long backoffMillis(int attempt) {
        long step = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS << Math.min(attempt, 20));
        return Math.round(step / 2.0 + random.getAsDouble() * (step / 2.0));
    }

    private static Object parseSuccess(HttpResponse<byte[]> response) {
        byte[] bytes = response.body();
        if (response.statusCode() == 204 || bytes == null || bytes.length == 0) return null;
        String contentType = response.headers().firstValue("content-type").orElse("");
        if (!JSON_TYPE.matcher(contentType).matches())
            throw invalid(response, "expected JSON, got " + (contentType.isEmpty() ? "no content type" : contentType));
        try {
            return Json.parse(Encoding.utf8(bytes));
        } catch (IOException | IllegalArgumentException e) {
            throw invalid(response, "the answer is not valid JSON");
        }
    }

    private static LicensingException invalid(HttpResponse<?> response, String detail) {
        return new LicensingException(response.statusCode(), "invalid_response", detail, null, null,
                response.headers().firstValue("x-request-id").orElse(null), null, null, null);
    }

    /** The error of a non-2xx answer: its problem+json if it has one, else what the status says. */
    static LicensingException errorOf(HttpResponse<byte[]> response) {
        int status = response.statusCode();
        String requestId = response.headers().firstValue("x-request-id").orElse(null);
        Long retryAfter = parseRetryAfter(response.headers().firstValue("retry-after"), System.currentTimeMillis());
        String text = new String(response.body() == null ? new byte[0] : response.body(), StandardCharsets.UTF_8);
        Object body = null;
        if (JSON_TYPE.matcher(response.headers().firstValue("content-type").orElse("")).matches()) {
            try {
                body = Json.parse(text);
            } catch (IllegalArgumentException notJson) {
                body = null;
            }
        }
        if (body instanceof Map && ((Map<?, ?>) body).get("code") instanceof String) {
            Map<?, ?> problem = (Map<?, ?>) body;
            List<LicensingException.FieldError> errors = new ArrayList<>();
            if (problem.get("errors") instanceof List) {
                for (Object e : (List<?>) problem.get("errors")) {
                    if (e instanceof Map) {
                        Map<?, ?> m = (Map<?, ?>) e;
                        errors.add(new LicensingException.FieldError(String.valueOf(orEmpty(m.get("field"))), String.valueOf(orEmpty(m.get("message")))));
                    }
                }
            }
            String detail = textOf(problem.get("detail"));
            if (detail == null) detail = textOf(problem.get("title"));
            if (detail == null) detail = "HTTP " + status;
            String problemRequestId = textOf(problem.get("request_id"));
            return new LicensingException(status, (String) problem.get("code"), detail, textOf(problem.get("next_action")),
                    textOf(problem.get("validation_code")), problemRequestId != null ? problemRequestId : requestId, retryAfter, errors, null);
        }
        // Not problem+json: a proxy or a load balancer answered. Keep what can be known.
        String trimmed = text.trim();
        String detail = trimmed.isEmpty() ? "HTTP " + status + " without problem details" : trimmed.substring(0, Math.min(200, trimmed.length()));
        return new LicensingException(status, fallbackCode(status), detail, null, null, requestId, retryAfter, null, null);
    }

    private static Object orEmpty(Object v) {
        return v == null ? "" : v;
    }

    private static String textOf(Object v) {
        return v instanceof String ? (String) v : null;
    }

    static String fallbackCode(int status) {
        if (status == 429) return "rate_limited";
        if (status == 502 || status == 503 || status == 504) return "service_unavailable";
        if (status == 401) return "unauthorized";
        if (status == 403) return "forbidden";
        if (status == 404) return "not_found";
        return status >= 500 ? "internal" : "invalid_request";
    }

    /** Seconds to wait from a Retry-After header: delta-seconds or an HTTP date (RFC 9110); null when absent or unreadable. */
    static Long parseRetryAfter(Optional<String> header, long nowMillis) {
        if (header.isEmpty()) return null;
        String value = header.get().trim();
        if (value.matches("[0-9]+")) {
            try {
                return Long.parseLong(value);
            } catch (NumberFormatException huge) {
                return Long.MAX_VALUE / 1000;
            }
        }
        try {
            long at = ZonedDateTime.parse(value, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant().toEpochMilli();
            return Math.max(0, (long) Math.ceil((at - nowMillis) / 1000.0));
        } catch (DateTimeParseException notADate) {
            return null;
        }
    }

    private static String queryString(Map<String, String> query) {
        if (query == null || query.isEmpty()) return "";
        StringBuilder out = new StringBuilder();
        for (Map.Entry<String, String> e : query.entrySet()) {
            if (e.getValue() == null) continue;
            out.append(out.length() == 0 ? '?' : '&')
                    .append(URLEncoder.encode(e.getKey(), StandardCharsets.UTF_8))
                    .append('=')
                    .append(URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8));
        }
        return out.toString();
    }

    /**
     * A path segment, encoded as JavaScript's encodeURIComponent does (so that a key with {@code /} or
     * {@code ?} cannot change the path); "." and ".." are refused, as URLs resolve them.
     */
    static String segment(String value, String name) {
        if (value == null || value.trim().isEmpty()) throw new IllegalArgumentException(name + " must be a non-empty string");
        byte[] bytes = value.trim().getBytes(StandardCharsets.UTF_8);
        StringBuilder out = new StringBuilder();
        for (byte b : bytes) {
            int c = b & 0xff;
            if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || "-_.!~*'()".indexOf(c) >= 0) {
                out.append((char) c);
            } else {
                out.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16))).append(Character.toUpperCase(Character.forDigit(c & 15, 16)));
            }
        }
        String encoded = out.toString();
        if (encoded.equals(".") || encoded.equals("..")) throw new IllegalArgumentException(name + " must not be \".\" or \"..\"");
        return encoded;
    }
}
