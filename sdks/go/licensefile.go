package licensing

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"
)

// Offline check of a signed licence file (POST /api/v1/licenses/{key}/file): the Ed25519 signature by
// the product key the file names, then what the signed payload says. No network: an app ships its
// product's public keys and keeps working while offline.

// Codes of a licence file verification, in the order the checks run (the first failure is answered).
const (
	CodeValid                = "valid"
	CodeMalformed            = "malformed"             // not four strings, not base64, or a payload that is not a JSON object with dates
	CodeUnsupportedAlgorithm = "unsupported_algorithm" // algorithm is not Ed25519
	CodeUnknownKey           = "unknown_key"           // no public key with the file's kid
	CodeBadSignature         = "bad_signature"         // the signature does not hold (a changed file, or another key)
	CodeKidMismatch          = "kid_mismatch"          // the signed kid is not the one outside
	CodeNotActive            = "not_active"            // the licence was not active when the file was signed
	CodeExpired              = "expired"               // valid_until has passed
	CodeNotYetValid          = "not_yet_valid"         // issued more than 5 minutes ahead of this clock (turned back)
	CodeFingerprintRequired  = "fingerprint_required"  // a file bound to a machine, checked without a fingerprint
	CodeFingerprintMismatch  = "fingerprint_mismatch"  // a file bound to another machine
	// CodeLicenseMismatch is App.VerifyOffline's only: a genuine file of another licence or product.
	CodeLicenseMismatch = "license_mismatch"
)

// ClockSkew is how far issued_at may lie ahead of this machine's clock before the clock is deemed turned back.
const ClockSkew = 5 * time.Minute

// PublicKey is a product signing key as GET /api/v1/products/{id}/signing-keys lists it.
type PublicKey struct {
	Kid          string `json:"kid"`
	Algorithm    string `json:"algorithm,omitempty"`
	PublicKeyPEM string `json:"public_key_pem"`
}

// LicenseFile is a signed licence file as the API answers it: the payload is base64 JSON, signed as those bytes.
type LicenseFile struct {
	Kid       string `json:"kid"`
	Algorithm string `json:"algorithm"`
	Payload   string `json:"payload"`
	Signature string `json:"signature"`
}

// LicenseFilePayload is the signed facts inside a licence file. Dates are ISO 8601 strings as signed.
type LicenseFilePayload struct {
	LicenseKey    string  `json:"license_key"`
	LicenseID     string  `json:"license_id"`
	ProductID     string  `json:"product_id"`
	CustomerEmail *string `json:"customer_email"`
	// Status is always "active" in a file that verifies: no file is issued for another status.
	Status    string  `json:"status"`
	ExpiresAt *string `json:"expires_at"`
	// Fingerprint is the machine the file is bound to, or nil.
	Fingerprint *string `json:"fingerprint"`
	IssuedAt    string  `json:"issued_at"`
	// ValidUntil: the file is worth nothing after this (never later than the licence's expiry plus grace).
	ValidUntil string `json:"valid_until"`
	Kid        string `json:"kid"`
	// Entitlements are the licence's effective feature codes when the file was issued.
	Entitlements []string `json:"entitlements,omitempty"`
	// ExpirationStrategy is what an expired licence may still download; "" (files issued before the
	// field existed) means "restrict".
	ExpirationStrategy string `json:"expiration_strategy,omitempty"`
	// PaidThrough and GraceUntil are set for subscription licences only: an offline app may keep
	// working until GraceUntil, a date it can trust.
	PaidThrough *string `json:"paid_through,omitempty"`
	GraceUntil  *string `json:"grace_until,omitempty"`
}

// VerifyOptions are what a licence file is checked against.
type VerifyOptions struct {
	// Fingerprint is this machine's fingerprint. A file bound to a machine is refused when it is nil
	// (a bound file proves nothing on a machine that cannot say which it is).
	Fingerprint *string
	// Now is the time to check against; the zero time means time.Now().
	Now time.Time
}

// Verification is the answer of VerifyLicenseFile.
type Verification struct {
	Valid bool `json:"valid"`
	// Code is CodeValid or the first check that failed.
	Code string `json:"code"`
	// Payload is the signed JSON object, byte for byte, when Valid; nil otherwise.
	Payload json.RawMessage `json:"payload"`
	// License is Payload decoded, when Valid.
	License *LicenseFilePayload `json:"-"`
}

// ParsePublicKeys reads the product's public keys as JSON: an array of {kid, public_key_pem}, or the
// REST body {data: [...]} of GET /api/v1/products/{id}/signing-keys. Every key's PEM must be an
// Ed25519 public key, so a broken key set is found when it is loaded, not when a file fails.
func ParsePublicKeys(data []byte) ([]PublicKey, error) {
	trimmed := bytes.TrimSpace(data)
	var keys []PublicKey
	if len(trimmed) > 0 && trimmed[0] == '{' {
		var body struct {
			Data *[]PublicKey `json:"data"`
		}
		if err := json.Unmarshal(trimmed, &body); err != nil {
			return nil, fmt.Errorf("public keys: %w", err)
		}
		if body.Data == nil {
			return nil, errors.New("public keys: an object must hold the keys in data")
		}
		keys = *body.Data
	} else if err := json.Unmarshal(trimmed, &keys); err != nil || keys == nil {
		return nil, errors.New("public keys: expected a JSON array of {kid, public_key_pem}, or {data: [...]}")
	}
	for i, k := range keys {
		if k.Kid == "" || k.PublicKeyPEM == "" {
			return nil, fmt.Errorf("public keys: key %d needs a kid and a public_key_pem", i)
		}
		if _, err := parsePublicKeyPEM(k.PublicKeyPEM); err != nil {
			return nil, fmt.Errorf("public keys: key %s: %w", k.Kid, err)
		}
	}
	return keys, nil
}

// VerifyLicenseFileJSON checks a licence file as JSON text (as the API answered it, or as kept on disk).
// Anything but a JSON object of four strings kid, algorithm, payload and signature is CodeMalformed.
func VerifyLicenseFileJSON(data []byte, keys []PublicKey, opts VerifyOptions) Verification {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil || fields == nil {
		return refused(CodeMalformed)
	}
	var file LicenseFile
	for name, into := range map[string]*string{
		"kid": &file.Kid, "algorithm": &file.Algorithm, "payload": &file.Payload, "signature": &file.Signature,
	} {
		raw, ok := fields[name]
		if !ok || len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, into) != nil {
			return refused(CodeMalformed)
		}
	}
	return VerifyLicenseFile(file, keys, opts)
}

// VerifyLicenseFile checks a licence file, in this order, answering the first failure: the algorithm is
// Ed25519, its kid is one of keys, the signature holds over the payload's bytes (never re-serialised),
// the payload is a UTF-8 JSON object whose kid is the file's, issued_at and valid_until are dates,
// status is active, valid_until is not before now, issued_at is at most ClockSkew after now, and a file
// bound to a machine is checked with that machine's fingerprint.
func VerifyLicenseFile(file LicenseFile, keys []PublicKey, opts VerifyOptions) Verification {
	if file.Algorithm != "Ed25519" {
		return refused(CodeUnsupportedAlgorithm)
	}
	var key *PublicKey
	for i := range keys {
		if keys[i].Kid == file.Kid {
			key = &keys[i]
			break
		}
	}
	if key == nil {
		return refused(CodeUnknownKey)
	}
	payload, errPayload := decodeBase64(file.Payload)
	signature, errSignature := decodeBase64(file.Signature)
	if errPayload != nil || errSignature != nil {
		return refused(CodeMalformed)
	}
	// A key set given as a struct may hold a broken PEM (ParsePublicKeys refuses one): it verifies nothing.
	publicKey, err := parsePublicKeyPEM(key.PublicKeyPEM)
	if err != nil || !ed25519.Verify(publicKey, payload, signature) {
		return refused(CodeBadSignature)
	}

	// A byte order mark is dropped before reading, as the TypeScript SDK's TextDecoder drops it.
	object := bytes.TrimPrefix(payload, []byte("\xef\xbb\xbf"))
	var claims map[string]json.RawMessage
	if !utf8.Valid(object) || json.Unmarshal(object, &claims) != nil || claims == nil {
		return refused(CodeMalformed)
	}
	// The kid inside is signed; the one outside is not, so they must agree.
	if kid, ok := jsonString(claims["kid"]); !ok || kid != file.Kid {
		return refused(CodeKidMismatch)
	}
	issuedAt, okIssued := jsonDate(claims["issued_at"])
	validUntil, okUntil := jsonDate(claims["valid_until"])
	if !okIssued || !okUntil {
		return refused(CodeMalformed)
	}
	if status, _ := jsonString(claims["status"]); status != "active" {
		return refused(CodeNotActive)
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	// Milliseconds, as the dates are written and as every other port compares them.
	nowMs := now.UnixMilli()
	if validUntil.UnixMilli() < nowMs {
		return refused(CodeExpired)
	}
	if issuedAt.UnixMilli() > nowMs+ClockSkew.Milliseconds() {
		return refused(CodeNotYetValid)
	}
	// A file bound to one machine is valid on that machine only.
	if bound, present := claims["fingerprint"]; present && string(bound) != "null" {
		if opts.Fingerprint == nil {
			return refused(CodeFingerprintRequired)
		}
		if fingerprint, ok := jsonString(bound); !ok || fingerprint != *opts.Fingerprint {
			return refused(CodeFingerprintMismatch)
		}
	}
	v := Verification{Valid: true, Code: CodeValid, Payload: json.RawMessage(object)}
	var license LicenseFilePayload
	if json.Unmarshal(object, &license) == nil {
		v.License = &license
	}
	return v
}

func refused(code string) Verification { return Verification{Code: code} }

// jsonString reads a JSON string value; false for anything else (absent, null, a number…).
func jsonString(raw json.RawMessage) (string, bool) {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// jsonDate reads a JSON string holding an RFC 3339 date-time (as the API writes them), or a bare date.
func jsonDate(raw json.RawMessage) (time.Time, bool) {
	s, ok := jsonString(raw)
	if !ok {
		return time.Time{}, false
	}
	return parseDate(s)
}

func parseDate(s string) (time.Time, bool) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, true
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, true
	}
	return time.Time{}, false
}
