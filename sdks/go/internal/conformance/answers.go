// Package conformance holds what the conformance command (docs/sdk-conformance.md) prints for the
// offline checks, and the run of every test vector through those same answers, so that the command's
// single answers and its `vectors` run can never differ.
package conformance

import (
	"fmt"
	"math"
	"strconv"
	"time"

	licensing "github.com/licensing-oss/licensing/sdks/go"
)

// KeyAnswer is check-key's answer: {well_formed, normalized, kind, reason}, null where not applicable.
type KeyAnswer struct {
	WellFormed bool    `json:"well_formed"`
	Normalized *string `json:"normalized"`
	Kind       *string `json:"kind"`
	Reason     *string `json:"reason"`
}

// CheckKey answers check-key.
func CheckKey(input string) KeyAnswer {
	c := licensing.CheckKey(input)
	orNull := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	return KeyAnswer{WellFormed: c.WellFormed, Normalized: orNull(c.Normalized), Kind: orNull(c.Kind), Reason: orNull(c.Reason)}
}

// VerifyFile answers verify-file: {valid, code, payload}. now is ISO 8601, "" for the current time.
func VerifyFile(file []byte, keys []licensing.PublicKey, fingerprint *string, now string) (licensing.Verification, error) {
	opts := licensing.VerifyOptions{Fingerprint: fingerprint}
	if now != "" {
		t, err := ParseISOTime(now)
		if err != nil {
			return licensing.Verification{}, err
		}
		opts.Now = t
	}
	return licensing.VerifyLicenseFileJSON(file, keys, opts), nil
}

// VerifyWebhook answers verify-webhook: {valid, code}. now is Unix seconds, "" for the current time.
func VerifyWebhook(secret, id, timestamp, signature string, body []byte, now string) (licensing.WebhookVerification, error) {
	var at time.Time
	if now != "" {
		seconds, err := strconv.ParseFloat(now, 64)
		if err != nil || math.IsNaN(seconds) || math.IsInf(seconds, 0) {
			return licensing.WebhookVerification{}, fmt.Errorf("--now must be Unix seconds, got %q", now)
		}
		at = time.UnixMilli(int64(math.Round(seconds * 1000)))
	}
	return licensing.VerifyWebhook(body, id, timestamp, signature, secret, at), nil
}

// ParseISOTime reads an ISO 8601 date-time (RFC 3339, fractions allowed) or a bare date.
func ParseISOTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("--now must be an ISO 8601 date-time such as 2026-06-01T12:00:00Z, got %q", s)
}
