package licensing

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"strings"
	"testing"
	"time"
)

var fileNow = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

type signer struct {
	kid  string
	priv ed25519.PrivateKey
	key  PublicKey
}

func newSigner(t *testing.T, kid string) signer {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	pemText := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	return signer{kid: kid, priv: priv, key: PublicKey{Kid: kid, Algorithm: "Ed25519", PublicKeyPEM: pemText}}
}

// file signs the payload bytes as they are (the tests choose them, BOM and all).
func (s signer) file(payload []byte) LicenseFile {
	return LicenseFile{
		Kid:       s.kid,
		Algorithm: "Ed25519",
		Payload:   base64.StdEncoding.EncodeToString(payload),
		Signature: base64.StdEncoding.EncodeToString(ed25519.Sign(s.priv, payload)),
	}
}

func claims(kid string, change func(map[string]any)) []byte {
	c := map[string]any{
		"license_key": exampleKey, "license_id": "lic_1", "product_id": "prod_1", "customer_email": nil,
		"status": "active", "expires_at": nil, "fingerprint": nil, "entitlements": []string{"sync"},
		"issued_at": "2026-06-01T00:00:00.000Z", "valid_until": "2026-07-01T00:00:00.000Z", "kid": kid,
	}
	if change != nil {
		change(c)
	}
	b, _ := json.Marshal(c)
	return b
}

func strPtr(s string) *string { return &s }

func TestVerifyLicenseFile(t *testing.T) {
	s := newSigner(t, "kid_a")
	keys := []PublicKey{s.key}
	opts := VerifyOptions{Now: fileNow}

	v := VerifyLicenseFile(s.file(claims("kid_a", nil)), keys, opts)
	if !v.Valid || v.Code != CodeValid || v.License == nil || v.License.LicenseKey != exampleKey || v.License.Entitlements[0] != "sync" {
		t.Fatalf("a good file: %+v", v)
	}
	if string(v.Payload) != string(claims("kid_a", nil)) {
		t.Fatal("Payload must be the signed bytes as they are")
	}

	cases := []struct {
		name string
		file LicenseFile
		opts VerifyOptions
		want string
	}{
		{"another algorithm", func() LicenseFile { f := s.file(claims("kid_a", nil)); f.Algorithm = "RS256"; return f }(), opts, CodeUnsupportedAlgorithm},
		{"unknown kid", func() LicenseFile { f := s.file(claims("kid_a", nil)); f.Kid = "kid_b"; return f }(), opts, CodeUnknownKey},
		{"payload not base64", func() LicenseFile { f := s.file(claims("kid_a", nil)); f.Payload = "!!"; return f }(), opts, CodeMalformed},
		{"signature of other bytes", func() LicenseFile {
			f := s.file(claims("kid_a", nil))
			f.Signature = s.file([]byte("{}")).Signature
			return f
		}(), opts, CodeBadSignature},
		{"a JSON array signed", s.file([]byte(`[1]`)), opts, CodeMalformed},
		{"not UTF-8", s.file([]byte("{\"kid\":\"\xff\"}")), opts, CodeMalformed},
		{"kid inside differs", s.file(claims("kid_other", nil)), opts, CodeKidMismatch},
		{"valid_until not a date", s.file(claims("kid_a", func(c map[string]any) { c["valid_until"] = "soon" })), opts, CodeMalformed},
		{"issued_at a number", s.file(claims("kid_a", func(c map[string]any) { c["issued_at"] = 5 })), opts, CodeMalformed},
		{"suspended", s.file(claims("kid_a", func(c map[string]any) { c["status"] = "suspended" })), opts, CodeNotActive},
		{"one millisecond late", s.file(claims("kid_a", nil)), VerifyOptions{Now: time.Date(2026, 7, 1, 0, 0, 0, 1e6, time.UTC)}, CodeExpired},
		{"issued beyond the skew", s.file(claims("kid_a", nil)), VerifyOptions{Now: time.Date(2026, 5, 31, 23, 54, 59, 0, time.UTC)}, CodeNotYetValid},
		{"bound, no fingerprint", s.file(claims("kid_a", func(c map[string]any) { c["fingerprint"] = "m1" })), opts, CodeFingerprintRequired},
		{"bound, another machine", s.file(claims("kid_a", func(c map[string]any) { c["fingerprint"] = "m1" })), VerifyOptions{Now: fileNow, Fingerprint: strPtr("m2")}, CodeFingerprintMismatch},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := VerifyLicenseFile(c.file, keys, c.opts)
			if v.Valid || v.Code != c.want || v.Payload != nil || v.License != nil {
				t.Fatalf("got %+v, want %s with no payload", v, c.want)
			}
		})
	}

	t.Run("edges that verify", func(t *testing.T) {
		for name, c := range map[string]struct {
			file LicenseFile
			opts VerifyOptions
		}{
			"valid_until exactly now":    {s.file(claims("kid_a", nil)), VerifyOptions{Now: time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)}},
			"issued exactly 5 min ahead": {s.file(claims("kid_a", nil)), VerifyOptions{Now: time.Date(2026, 5, 31, 23, 55, 0, 0, time.UTC)}},
			"bound, this machine":        {s.file(claims("kid_a", func(c map[string]any) { c["fingerprint"] = "m1" })), VerifyOptions{Now: fileNow, Fingerprint: strPtr("m1")}},
			"a byte order mark":          {s.file(append([]byte("\xef\xbb\xbf"), claims("kid_a", nil)...)), opts},
			"base64url without padding": {func() LicenseFile {
				f := s.file(claims("kid_a", nil))
				f.Payload = strings.TrimRight(strings.NewReplacer("+", "-", "/", "_").Replace(f.Payload), "=")
				f.Signature = strings.TrimRight(strings.NewReplacer("+", "-", "/", "_").Replace(f.Signature), "=")
				return f
			}(), opts},
		} {
			if v := VerifyLicenseFile(c.file, keys, c.opts); !v.Valid {
				t.Errorf("%s: %+v", name, v)
			}
		}
	})

	t.Run("a broken PEM in a key set verifies nothing", func(t *testing.T) {
		broken := []PublicKey{{Kid: "kid_a", PublicKeyPEM: "not a key"}}
		if v := VerifyLicenseFile(s.file(claims("kid_a", nil)), broken, opts); v.Code != CodeBadSignature {
			t.Fatalf("got %+v", v)
		}
	})
}

func TestVerifyLicenseFileJSON(t *testing.T) {
	s := newSigner(t, "kid_a")
	good, _ := json.Marshal(s.file(claims("kid_a", nil)))
	if v := VerifyLicenseFileJSON(good, []PublicKey{s.key}, VerifyOptions{Now: fileNow}); !v.Valid {
		t.Fatalf("got %+v", v)
	}
	for _, bad := range []string{``, `null`, `[]`, `"file"`, `{}`, `{"kid":"kid_a","algorithm":"Ed25519","payload":42,"signature":"x"}`,
		`{"kid":"kid_a","algorithm":"Ed25519","payload":"eyJ9","signature":null}`} {
		if v := VerifyLicenseFileJSON([]byte(bad), []PublicKey{s.key}, VerifyOptions{Now: fileNow}); v.Code != CodeMalformed {
			t.Errorf("%s: got %+v, want malformed", bad, v)
		}
	}
}

func TestParsePublicKeys(t *testing.T) {
	s := newSigner(t, "kid_a")
	list, _ := json.Marshal([]PublicKey{s.key})
	wrapped, _ := json.Marshal(map[string]any{"data": []PublicKey{s.key}})
	for _, text := range [][]byte{list, wrapped} {
		keys, err := ParsePublicKeys(text)
		if err != nil || len(keys) != 1 || keys[0].Kid != "kid_a" {
			t.Fatalf("ParsePublicKeys(%s) = %v, %v", text, keys, err)
		}
	}
	// A PEM whose line breaks became spaces still reads.
	flat := strings.ReplaceAll(s.key.PublicKeyPEM, "\n", " ")
	if _, err := parsePublicKeyPEM(flat); err != nil {
		t.Fatalf("a PEM on one line: %v", err)
	}
	for _, bad := range []string{`{}`, `null`, `[{"kid":"k"}]`, `[{"kid":"k","public_key_pem":"nope"}]`, `{"data":[{"public_key_pem":"x"}]}`} {
		if _, err := ParsePublicKeys([]byte(bad)); err == nil {
			t.Errorf("ParsePublicKeys(%s) took it", bad)
		}
	}
}
