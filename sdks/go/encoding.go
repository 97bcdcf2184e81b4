package licensing

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"strings"
)

// decodeBase64 takes standard or URL-safe base64, padded or not, as the TypeScript SDK does: the API
// writes standard base64, while the docs' examples read base64url, and either must verify.
func decodeBase64(s string) ([]byte, error) {
	s = strings.TrimRight(s, "=")
	s = strings.NewReplacer("-", "+", "_", "/").Replace(s)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/') {
			return nil, errors.New("not valid base64")
		}
	}
	if len(s)%4 == 1 {
		return nil, errors.New("not valid base64")
	}
	// Not Strict(): lenient about the unused low bits of the last character, as atob is.
	out := make([]byte, base64.RawStdEncoding.DecodedLen(len(s)))
	n, err := base64.RawStdEncoding.Decode(out, []byte(s))
	return out[:n], err
}

// parsePublicKeyPEM reads an Ed25519 public key in SPKI PEM ("-----BEGIN PUBLIC KEY-----"), also when
// its line breaks were lost or became spaces on the way into a configuration file.
func parsePublicKeyPEM(pemText string) (ed25519.PublicKey, error) {
	const begin, end = "-----BEGIN PUBLIC KEY-----", "-----END PUBLIC KEY-----"
	start := strings.Index(pemText, begin)
	if start < 0 {
		return nil, errors.New(`not a PEM "PUBLIC KEY" block`)
	}
	body := pemText[start+len(begin):]
	stop := strings.Index(body, end)
	if stop < 0 {
		return nil, errors.New(`not a PEM "PUBLIC KEY" block`)
	}
	der, err := decodeBase64(strings.Join(strings.Fields(body[:stop]), ""))
	if err != nil {
		return nil, errors.New("the PEM block is not valid base64")
	}
	key, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		return nil, err
	}
	ed, ok := key.(ed25519.PublicKey)
	if !ok {
		return nil, errors.New("not an Ed25519 public key")
	}
	return ed, nil
}
