package licensing

import (
	"crypto/hmac"
	"crypto/sha256"
	"math"
	"strconv"
	"strings"
	"time"
)

// Webhook deliveries follow Standard Webhooks (standardwebhooks.com): HMAC-SHA256 of
// "<webhook-id>.<webhook-timestamp>.<raw body>" under the endpoint's whsec_ secret, any one of the
// space-separated "v1,<base64>" signatures, and a timestamp close to now so that a captured delivery
// cannot be replayed later.

// Codes of a webhook verification.
const (
	// CodeMissingHeaders: webhook-id, webhook-timestamp or webhook-signature is empty.
	CodeMissingHeaders = "missing_headers"
	// CodeInvalidTimestamp: webhook-timestamp is not whole seconds.
	CodeInvalidTimestamp = "invalid_timestamp"
	// CodeTimestampOutOfTolerance: more than WebhookTolerance away from now (a replay, or a wrong clock).
	CodeTimestampOutOfTolerance = "timestamp_out_of_tolerance"
	// CodeInvalidSecret: the secret is not whsec_ and base64. The receiver's configuration is wrong, not
	// the request: answer 500, not 400, and fix the secret.
	CodeInvalidSecret = "invalid_secret"
	// CodeBadSignature (shared with licence files): no v1 signature matches.
)

// WebhookTolerance is the largest distance allowed between webhook-timestamp and now.
const WebhookTolerance = 300 * time.Second

// WebhookVerification is the answer of VerifyWebhook.
type WebhookVerification struct {
	Valid bool `json:"valid"`
	// Code is CodeValid or why the delivery is refused.
	Code string `json:"code"`
}

// VerifyWebhook checks one delivery. body must be the raw request body exactly as received (JSON parsed
// and written again no longer verifies); id, timestamp and signatureHeader are the webhook-id,
// webhook-timestamp and webhook-signature headers; secret is the endpoint's whsec_… secret. A zero now
// means time.Now(). Signatures are compared in constant time.
//
//	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
//	v := licensing.VerifyWebhook(body, r.Header.Get("webhook-id"), r.Header.Get("webhook-timestamp"),
//		r.Header.Get("webhook-signature"), secret, time.Time{})
func VerifyWebhook(body []byte, id, timestamp, signatureHeader, secret string, now time.Time) WebhookVerification {
	key, ok := webhookKey(secret)
	if !ok {
		return WebhookVerification{Code: CodeInvalidSecret}
	}
	if id == "" || timestamp == "" || signatureHeader == "" {
		return WebhookVerification{Code: CodeMissingHeaders}
	}
	if len(timestamp) > 12 || strings.Trim(timestamp, "0123456789") != "" {
		return WebhookVerification{Code: CodeInvalidTimestamp}
	}
	sent, _ := strconv.ParseInt(timestamp, 10, 64)
	if now.IsZero() {
		now = time.Now()
	}
	// Fractions of a second count, as in every other port: 300.5 s away is out of tolerance.
	distance := math.Abs(float64(now.UnixMilli())/1000 - float64(sent))
	if distance > WebhookTolerance.Seconds() {
		return WebhookVerification{Code: CodeTimestampOutOfTolerance}
	}

	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + timestamp + "."))
	mac.Write(body)
	expected := mac.Sum(nil)
	for _, part := range strings.Split(signatureHeader, " ") {
		fields := strings.Split(part, ",")
		if len(fields) < 2 || fields[0] != "v1" || fields[1] == "" {
			continue
		}
		given, err := decodeBase64(fields[1])
		if err != nil {
			continue
		}
		if hmac.Equal(given, expected) {
			return WebhookVerification{Valid: true, Code: CodeValid}
		}
	}
	return WebhookVerification{Code: CodeBadSignature}
}

// webhookKey is the HMAC key of a whsec_ secret: the base64 after the prefix (a bare base64 secret is
// taken too).
func webhookKey(secret string) ([]byte, bool) {
	if secret == "" {
		return nil, false
	}
	key, err := decodeBase64(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || len(key) == 0 {
		return nil, false
	}
	return key, true
}
