package licensing

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"testing"
	"time"
)

func TestVerifyWebhook(t *testing.T) {
	key := []byte("a secret of thirty-two bytes!!!!")
	secret := "whsec_" + base64.StdEncoding.EncodeToString(key)
	other := "whsec_" + base64.StdEncoding.EncodeToString([]byte("another secret"))
	body := []byte(`{"id":"evt_1","type":"license.created","data":{}}`)
	sent := time.Unix(1780315200, 0)
	ts := strconv.FormatInt(sent.Unix(), 10)
	sign := func(k []byte, ts string, body []byte) string {
		mac := hmac.New(sha256.New, k)
		mac.Write([]byte("evt_1." + ts + "."))
		mac.Write(body)
		return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	}
	good := sign(key, ts, body)

	cases := []struct {
		name, ts, signature, secret string
		body                        []byte
		now                         time.Time
		want                        string
	}{
		{"valid", ts, good, secret, body, sent, CodeValid},
		{"a bare base64 secret", ts, good, base64.StdEncoding.EncodeToString(key), body, sent, CodeValid},
		{"one of two signatures (rotation)", ts, sign([]byte("old"), ts, body) + " " + good, secret, body, sent, CodeValid},
		{"299.9 s later", ts, good, secret, body, sent.Add(299900 * time.Millisecond), CodeValid},
		{"300.001 s later", ts, good, secret, body, sent.Add(300001 * time.Millisecond), CodeTimestampOutOfTolerance},
		{"from the future", ts, good, secret, body, sent.Add(-301 * time.Second), CodeTimestampOutOfTolerance},
		{"tampered body", ts, good, secret, []byte(`{"id":"evt_2"}`), sent, CodeBadSignature},
		{"another secret", ts, good, other, body, sent, CodeBadSignature},
		{"v2 only", ts, "v2," + good[3:], secret, body, sent, CodeBadSignature},
		{"signature not base64", ts, "v1,@@@", secret, body, sent, CodeBadSignature},
		{"timestamp with a fraction", ts + ".0", good, secret, body, sent, CodeInvalidTimestamp},
		{"negative timestamp", "-1", good, secret, body, sent, CodeInvalidTimestamp},
		{"13 digits", "1780315200000", good, secret, body, sent, CodeInvalidTimestamp},
		{"no signature header", ts, "", secret, body, sent, CodeMissingHeaders},
		{"no secret", ts, good, "", body, sent, CodeInvalidSecret},
		{"a secret that is not base64", ts, good, "whsec_!!", body, sent, CodeInvalidSecret},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := VerifyWebhook(c.body, "evt_1", c.ts, c.signature, c.secret, c.now)
			if got.Code != c.want || got.Valid != (c.want == CodeValid) {
				t.Fatalf("got %+v, want %s", got, c.want)
			}
		})
	}
}
