package licensing

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Codes of an *Error that had no usable answer from the API (Status 0, or a 2xx that was not JSON).
const (
	CodeNetworkError    = "network_error"
	CodeTimeout         = "timeout"
	CodeInvalidResponse = "invalid_response"
)

// FieldError is one invalid field of a 400 answer.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// Error is every failure of an API call: an answer from the API, read from its problem+json body
// (RFC 9457), or no answer at all (Status 0). Branch on Code, the API's stable word, not on Detail.
type Error struct {
	// Status is the HTTP status, or 0 when no answer arrived.
	Status int
	// Code is the API's code (not_found, conflict, rate_limited…) or CodeNetworkError, CodeTimeout,
	// CodeInvalidResponse.
	Code string
	// Detail says what went wrong, for a person.
	Detail string
	// NextAction is what the user can do, when the problem says: free_a_seat on an activation refused
	// because every seat is taken, renew or contact_vendor on an update check refused for the licence.
	NextAction string
	// ValidationCode is the licence's validation code behind a refusal, when the problem says (expired,
	// entitlements_missing…), e.g. on an update check.
	ValidationCode string
	// RequestID is the X-Request-Id of the failed request: quote it to support.
	RequestID string
	// RetryAfter is the wait the server asked for (Retry-After), or 0.
	RetryAfter time.Duration
	// Errors lists the invalid fields of a 400 answer.
	Errors []FieldError
	// Type and Title are the problem's own.
	Type, Title string
	// Err is the cause when no answer arrived.
	Err error
}

func (e *Error) Error() string {
	if e.Status == 0 {
		return fmt.Sprintf("licensing: %s: %s", e.Code, e.Detail)
	}
	return fmt.Sprintf("licensing: %d %s: %s", e.Status, e.Code, e.Detail)
}

func (e *Error) Unwrap() error { return e.Err }

// errorFromResponse builds the error of a non-2xx answer from its problem details, or from its status
// when a proxy answered with something else.
func errorFromResponse(status int, header http.Header, body []byte, retryAfter time.Duration) *Error {
	e := &Error{Status: status, RequestID: header.Get("X-Request-Id"), RetryAfter: retryAfter}
	var problem struct {
		Code           *string         `json:"code"`
		Detail         *string         `json:"detail"`
		Title          *string         `json:"title"`
		Type           *string         `json:"type"`
		RequestID      *string         `json:"request_id"`
		NextAction     *string         `json:"next_action"`
		ValidationCode *string         `json:"validation_code"`
		Errors         json.RawMessage `json:"errors"`
	}
	if json.Unmarshal(body, &problem) == nil && problem.Code != nil {
		e.Code = *problem.Code
		e.Detail = firstOf(problem.Detail, problem.Title, fmt.Sprintf("HTTP %d", status))
		e.Title = firstOf(problem.Title, nil, "")
		e.Type = firstOf(problem.Type, nil, "")
		e.RequestID = firstOf(problem.RequestID, nil, e.RequestID)
		e.NextAction = firstOf(problem.NextAction, nil, "")
		e.ValidationCode = firstOf(problem.ValidationCode, nil, "")
		var fields []FieldError
		if json.Unmarshal(problem.Errors, &fields) == nil {
			e.Errors = fields
		}
		return e
	}
	e.Code = fallbackCode(status)
	if text := strings.TrimSpace(string(body)); text != "" {
		if len(text) > 200 {
			text = text[:200]
		}
		e.Detail = text
	} else {
		e.Detail = fmt.Sprintf("HTTP %d without problem details", status)
	}
	return e
}

func firstOf(a, b *string, otherwise string) string {
	if a != nil {
		return *a
	}
	if b != nil {
		return *b
	}
	return otherwise
}

func fallbackCode(status int) string {
	switch {
	case status == 429:
		return "rate_limited"
	case status == 502 || status == 503 || status == 504:
		return "service_unavailable"
	case status == 401:
		return "unauthorized"
	case status == 403:
		return "forbidden"
	case status == 404:
		return "not_found"
	case status >= 500:
		return "internal"
	}
	return "invalid_request"
}
