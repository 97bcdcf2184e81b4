package licensing

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeAPI answers the app routes the way the gateway does, and records what it was sent.
type fakeAPI struct {
	t        *testing.T
	mu       sync.Mutex
	requests []recorded
	// answer, when set, answers a request first (attempt counts from 1 per method and path); false
	// falls through to the default answers below.
	answer   func(w http.ResponseWriter, r *http.Request, attempt int) bool
	attempts map[string]int
	lease    any // the policy's lease_seconds: nil for node-locked
}

type recorded struct {
	method, path, query, authorization string
	body                               map[string]any
}

func newFake(t *testing.T) (*fakeAPI, *httptest.Server) {
	f := &fakeAPI{t: t, attempts: map[string]int{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if data, _ := io.ReadAll(r.Body); len(data) > 0 {
		if err := json.Unmarshal(data, &body); err != nil {
			f.t.Errorf("%s %s: the body is not JSON: %s", r.Method, r.URL.Path, data)
		}
	}
	f.mu.Lock()
	f.requests = append(f.requests, recorded{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Authorization"), body})
	route := r.Method + " " + r.URL.Path
	f.attempts[route]++
	attempt := f.attempts[route]
	answer := f.answer
	lease := f.lease
	f.mu.Unlock()
	if answer != nil && answer(w, r, attempt) {
		return
	}
	json := func(status int, v any) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(status)
		_ = jsonEncode(w, v)
	}
	seat := map[string]any{"id": "act_1", "fingerprint": "machine-1", "name": nil, "created_at": "2026-06-01T12:00:00.000Z", "lease_expires_at": nil}
	if lease != nil {
		seat["lease_expires_at"] = "2026-06-01T12:01:00.000Z"
	}
	key := "/api/v1/licenses/" + exampleKey
	switch {
	case route == "POST /api/v1/keys/validate":
		json(200, map[string]any{
			"valid": true, "code": "valid", "detail": "the licence is valid", "status": "active", "expires_at": nil,
			"entitlements": []string{"pdf-export"}, "next_action": "none", "cache_until": "2026-06-02T12:00:00.000Z",
			"trial_end": nil, "license": map[string]any{"id": "lic_1", "key": exampleKey, "product_id": "prod_1",
				"status": "active", "policy": map[string]any{"lease_seconds": lease, "require_activation": true}},
			"something_new": 1,
		})
	case route == "POST "+key+"/activations":
		json(201, seat)
	case route == "POST "+key+"/activations/act_1/heartbeat":
		json(200, seat)
	case route == "DELETE "+key+"/activations/act_1":
		w.WriteHeader(204)
	case route == "POST "+key+"/file":
		json(201, LicenseFile{Kid: "kid_a", Algorithm: "Ed25519", Payload: "e30=", Signature: "AA=="})
	case route == "GET /api/v1/products/prod_1/updates":
		json(200, map[string]any{"update_available": true,
			"release":  map[string]any{"id": "rel_1", "product_id": "prod_1", "version": "1.3.0", "channel": "stable"},
			"artifact": map[string]any{"filename": "app.dmg", "platform": "macos", "arch": "aarch64", "url": "http://x/a", "size": 10, "sha256": "ab"}})
	default:
		json(404, map[string]any{"type": "/docs#error-not_found", "title": "Not Found", "status": 404, "code": "not_found", "detail": "no such route"})
	}
}

func jsonEncode(w io.Writer, v any) error { return json.NewEncoder(w).Encode(v) }

func (f *fakeAPI) sent() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.requests...)
}

// newTestApp makes an App on the fake whose waits are recorded, not slept.
func newTestApp(t *testing.T, srv *httptest.Server, change func(*AppOptions)) (*App, *[]time.Duration) {
	t.Helper()
	opts := AppOptions{BaseURL: srv.URL + "/", LicenseKey: " " + exampleKey + " ", ProductID: "prod_1", Fingerprint: "machine-1"}
	if change != nil {
		change(&opts)
	}
	app, err := NewApp(opts)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	waits := &[]time.Duration{}
	app.transport.sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		*waits = append(*waits, d)
		mu.Unlock()
		return ctx.Err()
	}
	app.transport.random = func() float64 { return 0.5 }
	return app, waits
}

func problem(w http.ResponseWriter, status int, body string, headers ...string) {
	for i := 0; i+1 < len(headers); i += 2 {
		w.Header().Set(headers[i], headers[i+1])
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

func TestValidateSendsTheLicenceCredential(t *testing.T) {
	f, srv := newFake(t)
	app, _ := newTestApp(t, srv, nil)
	v, err := app.Validate(context.Background(), "pdf-export")
	if err != nil {
		t.Fatal(err)
	}
	if !v.Valid || v.Code != "valid" || v.NextAction != "none" || v.Entitlements[0] != "pdf-export" || v.License.Policy.RequireActivation != true {
		t.Fatalf("answer: %+v", v)
	}
	if !strings.Contains(string(v.Raw), `"something_new":1`) {
		t.Fatalf("Raw keeps the whole answer: %s", v.Raw)
	}
	r := f.sent()[0]
	if r.method != "POST" || r.path != "/api/v1/keys/validate" || r.authorization != "License "+exampleKey {
		t.Fatalf("sent %+v", r)
	}
	want := map[string]any{"key": exampleKey, "product_id": "prod_1", "fingerprint": "machine-1", "entitlements": []any{"pdf-export"}}
	if b1, b2 := mustJSON(r.body), mustJSON(want); b1 != b2 {
		t.Fatalf("body %s, want %s", b1, b2)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestRetriesAfter429WithRetryAfter(t *testing.T) {
	f, srv := newFake(t)
	f.answer = func(w http.ResponseWriter, r *http.Request, attempt int) bool {
		if attempt > 1 {
			return false
		}
		problem(w, 429, `{"status":429,"code":"rate_limited","detail":"the per-minute limit of 60 requests for this licence was reached; retry in 2 s"}`, "Retry-After", "2")
		return true
	}
	app, waits := newTestApp(t, srv, nil)
	v, err := app.Validate(context.Background())
	if err != nil || !v.Valid {
		t.Fatalf("%v %+v", v, err)
	}
	if len(f.sent()) != 2 || len(*waits) != 1 || (*waits)[0] != 2*time.Second {
		t.Fatalf("requests %d, waits %v: want 2 requests and one wait of 2s", len(f.sent()), *waits)
	}
}

func TestRetriesAreBounded(t *testing.T) {
	t.Run("three tries at most, back-off between", func(t *testing.T) {
		f, srv := newFake(t)
		f.answer = func(w http.ResponseWriter, r *http.Request, attempt int) bool {
			problem(w, 503, `{"status":503,"code":"service_unavailable","detail":"the store is failing over"}`)
			return true
		}
		app, waits := newTestApp(t, srv, nil)
		_, err := app.Validate(context.Background())
		var e *Error
		if !errors.As(err, &e) || e.Status != 503 || e.Code != "service_unavailable" {
			t.Fatalf("got %v", err)
		}
		if len(f.sent()) != 3 || len(*waits) != 2 || (*waits)[0] != 375*time.Millisecond || (*waits)[1] != 750*time.Millisecond {
			t.Fatalf("requests %d, waits %v", len(f.sent()), *waits)
		}
	})
	t.Run("a Retry-After beyond the budget is answered at once", func(t *testing.T) {
		f, srv := newFake(t)
		f.answer = func(w http.ResponseWriter, r *http.Request, attempt int) bool {
			problem(w, 429, `{"status":429,"code":"rate_limited","detail":"retry in 1800 s"}`, "Retry-After", "1800")
			return true
		}
		app, waits := newTestApp(t, srv, nil)
		_, err := app.Validate(context.Background())
		var e *Error
		if !errors.As(err, &e) || e.Status != 429 || e.RetryAfter != 1800*time.Second || len(*waits) != 0 || len(f.sent()) != 1 {
			t.Fatalf("got %v, waits %v, requests %d", err, *waits, len(f.sent()))
		}
	})
	t.Run("no retries when told so", func(t *testing.T) {
		f, srv := newFake(t)
		f.answer = func(w http.ResponseWriter, r *http.Request, attempt int) bool {
			problem(w, 503, `{"status":503,"code":"service_unavailable","detail":"down"}`)
			return true
		}
		app, _ := newTestApp(t, srv, func(o *AppOptions) { o.MaxRetries = -1 })
		if _, err := app.Validate(context.Background()); err == nil || len(f.sent()) != 1 {
			t.Fatalf("got %v after %d requests", err, len(f.sent()))
		}
	})
	t.Run("a refusal is not retried", func(t *testing.T) {
		f, srv := newFake(t)
		f.answer = func(w http.ResponseWriter, r *http.Request, attempt int) bool {
			problem(w, 401, `{"status":401,"code":"unauthorized","detail":"unknown licence"}`)
			return true
		}
		app, _ := newTestApp(t, srv, nil)
		if _, err := app.Validate(context.Background()); err == nil || len(f.sent()) != 1 {
			t.Fatalf("got %v after %d requests", err, len(f.sent()))
		}
	})
}

func TestRetriesAfterAConnectionFailure(t *testing.T) {
	f, srv := newFake(t)
	f.answer = func(w http.ResponseWriter, r *http.Request, attempt int) bool {
		if attempt > 1 {
			return false
		}
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Fatal(err)
		}
		conn.Close() // no answer at all
		return true
	}
	app, waits := newTestApp(t, srv, nil)
	if _, err := app.Validate(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(*waits) != 1 || len(f.sent()) != 2 {
		t.Fatalf("waits %v, requests %d", *waits, len(f.sent()))
	}

	srv.Close()
	_, err := app.Validate(context.Background())
	var e *Error
	if !errors.As(err, &e) || e.Status != 0 || e.Code != CodeNetworkError || e.Err == nil {
		t.Fatalf("a closed server: %v", err)
	}
}

func TestEachAttemptHasATimeLimit(t *testing.T) {
	f, srv := newFake(t)
	f.answer = func(w http.ResponseWriter, r *http.Request, attempt int) bool {
		<-r.Context().Done()
		return true
	}
	app, _ := newTestApp(t, srv, func(o *AppOptions) { o.Timeout = 20 * time.Millisecond; o.MaxRetries = -1 })
	_, err := app.Validate(context.Background())
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeTimeout {
		t.Fatalf("got %v", err)
	}
}

func TestErrorFieldsAreRead(t *testing.T) {
	f, srv := newFake(t)
	f.answer = func(w http.ResponseWriter, r *http.Request, attempt int) bool {
		switch r.URL.Path {
		case "/api/v1/licenses/" + exampleKey + "/activations":
			problem(w, 409, `{"type":"/docs#error-conflict","title":"Conflict","status":409,"code":"conflict",
				"detail":"activation_limit_reached: the licence is already active on 2 machines; deactivate one first",
				"request_id":"req_1","next_action":"free_a_seat"}`)
		case "/api/v1/products/prod_1/updates":
			problem(w, 403, `{"status":403,"code":"forbidden","detail":"the licence expired","validation_code":"expired","next_action":"renew",
				"errors":[{"field":"version","message":"x"}]}`, "X-Request-Id", "req_2")
		default:
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(502)
			_, _ = io.WriteString(w, "<html>Bad Gateway</html>")
		}
		return true
	}
	app, _ := newTestApp(t, srv, func(o *AppOptions) { o.MaxRetries = -1 })

	_, err := app.Activate(context.Background(), "")
	var e *Error
	if !errors.As(err, &e) || e.Status != 409 || e.Code != "conflict" || e.NextAction != "free_a_seat" ||
		e.RequestID != "req_1" || e.Title != "Conflict" || !strings.HasPrefix(e.Detail, "activation_limit_reached") {
		t.Fatalf("got %#v", err)
	}
	if !strings.Contains(e.Error(), "409 conflict: activation_limit_reached") {
		t.Fatalf("message %q", e.Error())
	}

	_, err = app.CheckForUpdate(context.Background(), UpdateQuery{Version: "1.0.0", Platform: "macos", Arch: "aarch64"})
	if !errors.As(err, &e) || e.Status != 403 || e.ValidationCode != "expired" || e.NextAction != "renew" || e.RequestID != "req_2" || len(e.Errors) != 1 {
		t.Fatalf("got %#v", err)
	}

	_, err = app.Validate(context.Background())
	if !errors.As(err, &e) || e.Status != 502 || e.Code != "service_unavailable" || e.Detail != "<html>Bad Gateway</html>" {
		t.Fatalf("a proxy's answer: %#v", err)
	}
}

func TestActivateHeartbeatDeactivate(t *testing.T) {
	f, srv := newFake(t)
	f.lease = 90
	app, _ := newTestApp(t, srv, func(o *AppOptions) { o.Name = "Work laptop" })
	ctx := context.Background()
	seat, err := app.Activate(ctx, "")
	if err != nil || seat.ID != "act_1" || seat.LeaseExpiresAt == nil || app.Activation().ID != "act_1" {
		t.Fatalf("%+v %v", seat, err)
	}
	if _, err := app.Heartbeat(ctx); err != nil {
		t.Fatal(err)
	}
	if err := app.Deactivate(ctx); err != nil || app.Activation() != nil {
		t.Fatalf("%v %+v", err, app.Activation())
	}
	if err := app.Deactivate(ctx); err != nil {
		t.Fatal("nothing to release is no error")
	}
	sent := f.sent()
	if len(sent) != 3 {
		t.Fatalf("sent %+v", sent)
	}
	if mustJSON(sent[0].body) != `{"fingerprint":"machine-1","name":"Work laptop"}` {
		t.Fatalf("activation body %v", sent[0].body)
	}
	if sent[1].path != "/api/v1/licenses/"+exampleKey+"/activations/act_1/heartbeat" {
		t.Fatalf("heartbeat %+v", sent[1])
	}
	if sent[2].method != "DELETE" || sent[2].query != "fingerprint=machine-1" {
		t.Fatalf("release %+v", sent[2])
	}
}

func TestHeartbeatOfALapsedSeatActivatesAgain(t *testing.T) {
	f, srv := newFake(t)
	f.lease = 30
	f.answer = func(w http.ResponseWriter, r *http.Request, attempt int) bool {
		if strings.HasSuffix(r.URL.Path, "/heartbeat") {
			problem(w, 409, `{"status":409,"code":"conflict","detail":"lease_expired: the seat lapsed; activate again"}`)
			return true
		}
		return false
	}
	app, _ := newTestApp(t, srv, func(o *AppOptions) { o.ActivationID = "act_old" })
	seat, err := app.Heartbeat(context.Background())
	if err != nil || seat.ID != "act_1" {
		t.Fatalf("%+v %v", seat, err)
	}
	sent := f.sent()
	if len(sent) != 2 || !strings.HasSuffix(sent[0].path, "/act_old/heartbeat") || !strings.HasSuffix(sent[1].path, "/activations") {
		t.Fatalf("sent %+v", sent)
	}

	// Without a fingerprint there is nothing to activate: the refusal is answered.
	bare, _ := newTestApp(t, srv, func(o *AppOptions) { o.Fingerprint = ""; o.ActivationID = "act_old" })
	var e *Error
	if _, err := bare.Heartbeat(context.Background()); !errors.As(err, &e) || e.Status != 409 {
		t.Fatalf("got %v", err)
	}
}

func TestDeactivateID(t *testing.T) {
	_, srv := newFake(t)
	app, _ := newTestApp(t, srv, func(o *AppOptions) { o.Fingerprint = "" })
	if err := app.DeactivateID(context.Background(), "act_1"); err != nil {
		t.Fatal(err)
	}
	var e *Error
	if err := app.DeactivateID(context.Background(), "act_unknown"); !errors.As(err, &e) || e.Status != 404 {
		t.Fatalf("an unknown activation: %v", err)
	}
}

func TestStartHeartbeatsAndStopReleases(t *testing.T) {
	f, srv := newFake(t)
	f.lease = 30
	beats := make(chan Activation, 10)
	app, _ := newTestApp(t, srv, func(o *AppOptions) { o.OnHeartbeat = func(a Activation) { beats <- a } })
	var asked []int
	app.session.interval = func(lease int) time.Duration {
		asked = append(asked, lease)
		return 5 * time.Millisecond
	}
	state, err := app.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if state.LeaseSeconds != 30 || state.HeartbeatEvery != 5*time.Millisecond || state.Activation.ID != "act_1" ||
		!state.Validation.Valid || state.Entitlements[0] != "pdf-export" || len(asked) != 1 || !app.IsRunning() {
		t.Fatalf("state %+v, intervals asked for %v", state, asked)
	}
	for i := 0; i < 2; i++ {
		select {
		case <-beats:
		case <-time.After(5 * time.Second):
			t.Fatal("no heartbeat")
		}
	}
	if err := app.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if app.IsRunning() || app.Activation() != nil || app.LastError() != nil {
		t.Fatal("Stop leaves no heartbeats and no seat")
	}
	sent := f.sent()
	last := sent[len(sent)-1]
	if last.method != "DELETE" || last.path != "/api/v1/licenses/"+exampleKey+"/activations/act_1" || last.query != "fingerprint=machine-1" {
		t.Fatalf("the last request is the release: %+v", last)
	}
	n := len(sent)
	time.Sleep(20 * time.Millisecond)
	if len(f.sent()) != n {
		t.Fatal("a heartbeat after Stop")
	}
	if heartbeatInterval(30) != 10*time.Second || heartbeatInterval(1) != time.Second {
		t.Fatal("a third of the lease, at least a second")
	}
}

func TestBackgroundFailuresAreReported(t *testing.T) {
	f, srv := newFake(t)
	f.lease = 30
	f.answer = func(w http.ResponseWriter, r *http.Request, attempt int) bool {
		if strings.HasSuffix(r.URL.Path, "/heartbeat") {
			problem(w, 500, `{"status":500,"code":"internal","detail":"a bug"}`)
			return true
		}
		return false
	}
	failures := make(chan error, 10)
	app, _ := newTestApp(t, srv, func(o *AppOptions) { o.OnError = func(err error) { failures <- err } })
	app.session.interval = func(int) time.Duration { return 5 * time.Millisecond }
	if _, err := app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer app.Stop(context.Background())
	for i := 0; i < 2; i++ { // the timer goes on after a failure
		select {
		case err := <-failures:
			var e *Error
			if !errors.As(err, &e) || e.Code != "internal" {
				t.Fatalf("got %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no failure reported")
		}
	}
	if app.LastError() == nil {
		t.Fatal("LastError keeps the failure")
	}
}

func TestNodeLockedSeatHasNoHeartbeats(t *testing.T) {
	_, srv := newFake(t)
	app, _ := newTestApp(t, srv, nil)
	state, err := app.Start(context.Background())
	if err != nil || state.LeaseSeconds != 0 || state.HeartbeatEvery != 0 || app.IsRunning() {
		t.Fatalf("%+v %v", state, err)
	}
}

func TestStopBeforeStartStartsNothing(t *testing.T) {
	f, srv := newFake(t)
	f.lease = 30
	app, _ := newTestApp(t, srv, nil)
	// Stop while Start waits for the server: Start ends without heartbeats, and Stop releases the seat.
	release := make(chan struct{})
	f.answer = func(w http.ResponseWriter, r *http.Request, attempt int) bool {
		if r.URL.Path == "/api/v1/keys/validate" {
			<-release
		}
		return false
	}
	started := make(chan error, 1)
	go func() { _, err := app.Start(context.Background()); started <- err }()
	for len(f.sent()) < 2 {
		time.Sleep(time.Millisecond)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- app.Stop(context.Background()) }()
	time.Sleep(5 * time.Millisecond)
	close(release)
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	if app.IsRunning() || app.Activation() != nil {
		t.Fatal("Stop wins over a Start on its way")
	}
}

func TestLicenseFileAndOfflineCheck(t *testing.T) {
	f, srv := newFake(t)
	app, _ := newTestApp(t, srv, func(o *AppOptions) { o.FileTTLDays = 7 })
	file, err := app.LicenseFile(context.Background())
	if err != nil || file.Kid != "kid_a" {
		t.Fatalf("%+v %v", file, err)
	}
	if mustJSON(f.sent()[0].body) != `{"fingerprint":"machine-1","ttl_days":7}` {
		t.Fatalf("body %v", f.sent()[0].body)
	}

	s := newSigner(t, "kid_a")
	bound := func(key, product string) LicenseFile {
		return s.file(claims("kid_a", func(c map[string]any) {
			c["license_key"], c["product_id"], c["fingerprint"] = key, product, "machine-1"
		}))
	}
	offline, _ := newTestApp(t, srv, func(o *AppOptions) { o.PublicKeys = []PublicKey{s.key} })
	if v := offline.VerifyOffline(bound("7k3qf9xw2mt0rbhpz4dnc8e1vq3atg", "prod_1"), fileNow); !v.Valid {
		t.Fatalf("this licence's file, in another spelling: %+v", v)
	}
	if v := offline.VerifyOffline(bound("38b1460a-5104-4067-a91d-77b872934d51", "prod_1"), fileNow); v.Code != CodeLicenseMismatch {
		t.Fatalf("another licence's file: %+v", v)
	}
	if v := offline.VerifyOffline(bound(exampleKey, "prod_2"), fileNow); v.Code != CodeLicenseMismatch {
		t.Fatalf("another product's file: %+v", v)
	}
	if v := app.VerifyOffline(bound(exampleKey, "prod_1"), fileNow); v.Code != CodeUnknownKey {
		t.Fatalf("no public keys: %+v", v)
	}
}

func TestCheckForUpdate(t *testing.T) {
	f, srv := newFake(t)
	app, _ := newTestApp(t, srv, nil)
	u, err := app.CheckForUpdate(context.Background(), UpdateQuery{Version: "1.2.0", Platform: "macos", Arch: "aarch64", Channel: "beta"})
	if err != nil || !u.UpdateAvailable || u.Release.Version != "1.3.0" || u.Artifact.Filename != "app.dmg" {
		t.Fatalf("%+v %v", u, err)
	}
	if q := f.sent()[0].query; q != "arch=aarch64&channel=beta&platform=macos&version=1.2.0" {
		t.Fatalf("query %s", q)
	}
	if _, err := app.CheckForUpdate(context.Background(), UpdateQuery{Version: "1.2.0"}); err == nil {
		t.Fatal("platform and arch are needed")
	}
	noProduct, _ := newTestApp(t, srv, func(o *AppOptions) { o.ProductID = "" })
	if _, err := noProduct.CheckForUpdate(context.Background(), UpdateQuery{Version: "1", Platform: "linux", Arch: "x86_64"}); err == nil {
		t.Fatal("the product is needed")
	}
}

func TestNewAppChecksItsOptions(t *testing.T) {
	for name, opts := range map[string]AppOptions{
		"no base URL":          {LicenseKey: exampleKey},
		"not http":             {BaseURL: "ftp://x", LicenseKey: exampleKey},
		"no key":               {BaseURL: "https://x"},
		"a key with a newline": {BaseURL: "https://x", LicenseKey: "abc\r\nX-Other: 1"},
	} {
		if _, err := NewApp(opts); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	app, err := NewApp(AppOptions{BaseURL: "https://licensing.example.com/base/", LicenseKey: exampleKey})
	if err != nil || app.transport.base != "https://licensing.example.com/base" {
		t.Fatalf("%v %+v", err, app)
	}
	if _, err := app.Activate(context.Background(), ""); err == nil {
		t.Fatal("activating needs a fingerprint")
	}
}
