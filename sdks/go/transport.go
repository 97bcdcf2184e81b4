package licensing

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Version is this library's version, sent in User-Agent.
const Version = "0.1.0"

// An answer larger than this is not read: no answer of the app routes comes near it.
const maxAnswerBytes = 8 << 20

// transport sends requests as the licence (Authorization: License <key>) and tries again what may be.
type transport struct {
	base          string // no trailing slash
	authorization string
	client        *http.Client
	timeout       time.Duration
	maxRetries    int
	maxRetryWait  time.Duration
	userAgent     string
	// Replaced by tests to record waits instead of waiting.
	sleep  func(context.Context, time.Duration) error
	random func() float64
	now    func() time.Time
}

type request struct {
	method string
	path   string // below the base URL, segments already escaped
	query  url.Values
	body   any // nil: no body
	// idempotent: doing it twice is harmless, so it is tried again after a connection failure, a
	// timeout or a 503, where the first try may have landed. A 429 is retried whatever it is: the
	// server refuses it before doing anything.
	idempotent bool
}

// licenseAuthorization is the header value; a key with spaces or control characters would forge
// another header, so it is refused before anything is sent.
func licenseAuthorization(key string) (string, error) {
	key = strings.TrimSpace(key)
	if key == "" {
		return "", errors.New("licensing: LicenseKey is required")
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x21 || key[i] > 0x7e {
			return "", errors.New("licensing: the licence key must be printable ASCII without spaces")
		}
	}
	return "License " + key, nil
}

// do sends req and decodes a 2xx JSON answer into out (nil: the answer is dropped; *json.RawMessage:
// kept as it came). Any failure is an *Error, except the caller's own context ending (ctx.Err()).
func (t *transport) do(ctx context.Context, req request, out any) error {
	var payload []byte
	if req.body != nil {
		var err error
		if payload, err = json.Marshal(req.body); err != nil {
			return fmt.Errorf("licensing: encoding the request: %w", err)
		}
	}
	target := t.base + req.path
	if len(req.query) > 0 {
		target += "?" + req.query.Encode()
	}
	var waited time.Duration
	for attempt := 0; ; attempt++ {
		status, header, body, err := t.attempt(ctx, req.method, target, payload)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var failure *Error
		retryAfter, hasRetryAfter := time.Duration(0), false
		switch {
		case err != nil:
			failure = err
		case status >= 200 && status < 300:
			return decodeAnswer(status, header, body, out)
		default:
			retryAfter, hasRetryAfter = parseRetryAfter(header.Get("Retry-After"), t.now())
			failure = errorFromResponse(status, header, body, retryAfter)
		}
		noAnswer := failure.Status == 0
		if !(noAnswer || retryableStatus(failure.Status)) || attempt >= t.maxRetries ||
			(failure.Status != 429 && !req.idempotent) {
			return failure
		}
		wait := backoff(attempt, t.random)
		if hasRetryAfter {
			wait = retryAfter
		}
		// Bounded: a wait the budget cannot afford answers the error now, with its RetryAfter.
		if waited+wait > t.maxRetryWait {
			return failure
		}
		if err := t.sleep(ctx, wait); err != nil {
			return err
		}
		waited += wait
	}
}

// attempt is one try under its own time limit; the answer is read before the limit ends.
func (t *transport) attempt(ctx context.Context, method, target string, payload []byte) (int, http.Header, []byte, *Error) {
	actx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(actx, method, target, body)
	if err != nil {
		return 0, nil, nil, &Error{Code: CodeNetworkError, Detail: err.Error(), Err: err}
	}
	req.Header.Set("Authorization", t.authorization)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", t.userAgent)
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := t.client.Do(req)
	if err == nil {
		defer res.Body.Close()
		var answer []byte
		answer, err = io.ReadAll(io.LimitReader(res.Body, maxAnswerBytes))
		if err == nil {
			return res.StatusCode, res.Header, answer, nil
		}
	}
	if errors.Is(actx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
		return 0, nil, nil, &Error{Code: CodeTimeout, Detail: fmt.Sprintf("no answer within %s", t.timeout), Err: err}
	}
	return 0, nil, nil, &Error{Code: CodeNetworkError, Detail: err.Error(), Err: err}
}

func decodeAnswer(status int, header http.Header, body []byte, out any) error {
	if status == http.StatusNoContent || len(bytes.TrimSpace(body)) == 0 || out == nil {
		return nil
	}
	invalid := func(detail string, err error) *Error {
		return &Error{Status: status, Code: CodeInvalidResponse, Detail: detail, RequestID: header.Get("X-Request-Id"), Err: err}
	}
	mediaType, _, _ := mime.ParseMediaType(header.Get("Content-Type"))
	if mediaType != "application/json" && !strings.HasSuffix(mediaType, "+json") {
		return invalid(fmt.Sprintf("expected JSON, got %q", header.Get("Content-Type")), nil)
	}
	if raw, ok := out.(*json.RawMessage); ok {
		if !json.Valid(body) {
			return invalid("the answer is not valid JSON", nil)
		}
		*raw = append((*raw)[:0], body...)
		return nil
	}
	if err := json.Unmarshal(body, out); err != nil {
		return invalid("the answer is not the JSON expected: "+err.Error(), err)
	}
	return nil
}

// segment escapes one path segment (a key or an id may hold characters a path does not).
func segment(s string) string { return url.PathEscape(s) }
