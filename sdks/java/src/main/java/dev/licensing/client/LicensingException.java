package dev.licensing.client;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Everything a call to the API can fail with: a refusal from the API (built from its
 * {@code application/problem+json} answer, docs/api.md "Errors"), or no usable answer at all
 * ({@link #status()} 0: {@code network_error}, {@code timeout}, {@code interrupted}, or
 * {@code invalid_response} for an answer that is not what the API sends). Branch on {@link #code()},
 * the API's stable machine word, never on the message.
 *
 * <p>Unchecked, so that {@link LicensedApp#close()} works in try-with-resources without a catch.
 */
public class LicensingException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** One invalid field of a 400 answer. */
    public record FieldError(String field, String message) {}

    private final int status;
    private final String code;
    private final String detail;
    private final String nextAction;
    private final String validationCode;
    private final String requestId;
    private final Long retryAfterSeconds;
    private final transient List<FieldError> errors;

    LicensingException(int status, String code, String detail, String nextAction, String validationCode,
            String requestId, Long retryAfterSeconds, List<FieldError> errors, Throwable cause) {
        super(status != 0 ? status + " " + code + ": " + detail : code + ": " + detail, cause);
        this.status = status;
        this.code = code;
        this.detail = detail;
        this.nextAction = nextAction;
        this.validationCode = validationCode;
        this.requestId = requestId;
        this.retryAfterSeconds = retryAfterSeconds;
        this.errors = errors == null ? List.of() : List.copyOf(errors);
    }

    /** A failure without an answer from the API (status 0). */
    static LicensingException noAnswer(String code, String detail, Throwable cause) {
        return new LicensingException(0, code, detail, null, null, null, null, null, cause);
    }

    /** The HTTP status, or 0 when no answer arrived. */
    public int status() {
        return status;
    }

    /** The API's {@code code} ({@code not_found}, {@code conflict}, {@code rate_limited}…), or the library's own when there was no answer. */
    public String code() {
        return code;
    }

    /** What went wrong, for a person. */
    public String detail() {
        return detail;
    }

    /**
     * What the user can do about it, when the problem says ({@code next_action}): {@code free_a_seat}
     * when an activation is refused because every seat is taken, {@code renew} or {@code contact_vendor}
     * on an update check refused for the licence; else null.
     */
    public String nextAction() {
        return nextAction;
    }

    /** The licence's validation code behind a refusal ({@code validation_code}), e.g. {@code expired}; else null. */
    public String validationCode() {
        return validationCode;
    }

    /** The request's id (X-Request-Id): quote it to support. Null when there was no answer. */
    public String requestId() {
        return requestId;
    }

    /** Seconds the server asked to wait (Retry-After), when it said; else null. */
    public Long retryAfterSeconds() {
        return retryAfterSeconds;
    }

    /** One entry per invalid field of a 400 answer; empty otherwise. */
    public List<FieldError> errors() {
        return errors;
    }

    /** True when no verdict came (no answer, a timeout, 429 or a 5xx): the moment for an app to fall back to its licence file. */
    public boolean isUnanswered() {
        return status == 0 || status == 429 || status >= 500;
    }

    /** {@code {status, code, detail, next_action}}, as the conformance command prints it under {@code error}. */
    public Map<String, Object> toJson() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("status", status);
        out.put("code", code);
        out.put("detail", detail);
        out.put("next_action", nextAction);
        return out;
    }
}
