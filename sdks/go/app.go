package licensing

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// AppOptions configure an App. BaseURL and LicenseKey are required.
type AppOptions struct {
	// BaseURL is where the gateway answers, e.g. https://licensing.example.com.
	BaseURL string
	// LicenseKey is the customer's licence key: the app's only credential (Authorization: License …).
	LicenseKey string
	// ProductID, when set, makes a key of another product validate as product_mismatch, and is the
	// product CheckForUpdate asks about.
	ProductID string
	// Fingerprint is a stable, non-identifying id of this machine (e.g. a hash of a hardware id), at
	// most 200 characters. Needed to activate (Start, Activate); sent with Validate and LicenseFile.
	Fingerprint string
	// Name names this machine in the licence's activation list (optional, at most 100 characters).
	Name string
	// PublicKeys are the product's signing keys, shipped with the app: needed by VerifyOffline.
	PublicKeys []PublicKey
	// ActivationID is a seat this machine took earlier (a previous run kept its id): Heartbeat and
	// Deactivate act on it without activating first.
	ActivationID string
	// FileTTLDays is how long a file from LicenseFile is valid offline (0: the server's default, 30
	// days or the policy's max_file_ttl_days if smaller).
	FileTTLDays int

	// HTTPClient sends the requests (nil: a client of its own).
	HTTPClient *http.Client
	// Timeout limits each attempt (0: DefaultTimeout). Keep it short at start-up, where a user waits.
	Timeout time.Duration
	// MaxRetries is how many further tries follow a 429, a 503 or a connection failure (0:
	// DefaultMaxRetries; negative: none).
	MaxRetries int
	// MaxRetryWait bounds the waits between tries of one call, together (0: DefaultMaxRetryWait). A
	// Retry-After beyond what is left is not waited for: the *Error is answered at once.
	MaxRetryWait time.Duration

	// OnHeartbeat is called after every successful background heartbeat (Start), with the renewed seat.
	OnHeartbeat func(Activation)
	// OnError is called with every failure of a background heartbeat. The timer keeps going: at a third
	// of the lease, two missed beats still leave the seat alive. The last failure is also in LastError.
	OnError func(error)
}

// App is one licensed app on one machine, speaking for its licence with the licence key alone. Its
// methods are safe for concurrent use.
type App struct {
	opts      AppOptions
	key       string
	transport *transport

	mu      sync.Mutex
	current *Activation
	lastErr error

	activating sync.Mutex // activations one at a time: the second gets the seat the first took

	session // Start and Stop (session.go)
}

// NewApp checks the options; it sends nothing until a method is called.
func NewApp(opts AppOptions) (*App, error) {
	base, err := checkBaseURL(opts.BaseURL)
	if err != nil {
		return nil, err
	}
	authorization, err := licenseAuthorization(opts.LicenseKey)
	if err != nil {
		return nil, err
	}
	if opts.FileTTLDays < 0 {
		return nil, errors.New("licensing: FileTTLDays must not be negative")
	}
	client := opts.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	t := &transport{
		base:          base,
		authorization: authorization,
		client:        client,
		timeout:       orDefault(opts.Timeout, DefaultTimeout),
		maxRetries:    DefaultMaxRetries,
		maxRetryWait:  orDefault(opts.MaxRetryWait, DefaultMaxRetryWait),
		userAgent:     "licensing-go/" + Version,
		sleep:         sleepContext,
		random:        defaultRandom,
		now:           time.Now,
	}
	if opts.MaxRetries > 0 {
		t.maxRetries = opts.MaxRetries
	} else if opts.MaxRetries < 0 {
		t.maxRetries = 0
	}
	a := &App{opts: opts, key: strings.TrimSpace(opts.LicenseKey), transport: t}
	if opts.ActivationID != "" {
		a.current = &Activation{ID: opts.ActivationID, Fingerprint: opts.Fingerprint}
	}
	a.session.interval = heartbeatInterval
	a.session.gate = make(chan struct{}, 1)
	return a, nil
}

func orDefault(d, otherwise time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return otherwise
}

func checkBaseURL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("licensing: BaseURL must be an http(s) URL such as https://licensing.example.com, got %q", raw)
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// LicenseKey is the licence key this app speaks for.
func (a *App) LicenseKey() string { return a.key }

// Activation is this machine's remembered seat, or nil before Activate and after Deactivate.
func (a *App) Activation() *Activation {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.current == nil {
		return nil
	}
	seat := *a.current
	return &seat
}

// LastError is the last failure of a background heartbeat, or nil (a success clears it).
func (a *App) LastError() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.lastErr
}

func (a *App) licensePath() string { return "/api/v1/licenses/" + segment(a.key) }

// Validate asks whether this machine may run: POST /api/v1/keys/validate with the key, the
// fingerprint and the product, when set. entitlements are feature codes the licence must include (else
// the answer is entitlements_missing, its Detail naming the missing ones).
func (a *App) Validate(ctx context.Context, entitlements ...string) (*Validation, error) {
	body := map[string]any{"key": a.key}
	if a.opts.ProductID != "" {
		body["product_id"] = a.opts.ProductID
	}
	if a.opts.Fingerprint != "" {
		body["fingerprint"] = a.opts.Fingerprint
	}
	if len(entitlements) > 0 {
		body["entitlements"] = entitlements
	}
	var raw json.RawMessage
	err := a.transport.do(ctx, request{method: http.MethodPost, path: "/api/v1/keys/validate", body: body, idempotent: true}, &raw)
	if err != nil {
		return nil, err
	}
	var v Validation
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, &Error{Status: http.StatusOK, Code: CodeInvalidResponse, Detail: "the validation answer is not the JSON expected: " + err.Error(), Err: err}
	}
	v.Raw = raw
	return &v, nil
}

// Activate takes a seat for this machine: POST /api/v1/licenses/{key}/activations with the fingerprint
// and name (AppOptions.Name when ""). Idempotent per fingerprint: the server answers the seat already
// taken. The activation is remembered for Heartbeat and Deactivate.
//
// A 409 conflict whose NextAction is free_a_seat means every seat is taken.
func (a *App) Activate(ctx context.Context, name string) (*Activation, error) {
	if a.opts.Fingerprint == "" {
		return nil, errors.New("licensing: activating needs AppOptions.Fingerprint")
	}
	if name == "" {
		name = a.opts.Name
	}
	a.activating.Lock()
	defer a.activating.Unlock()
	body := map[string]any{"fingerprint": a.opts.Fingerprint}
	if name != "" {
		body["name"] = name
	}
	var seat Activation
	err := a.transport.do(ctx, request{method: http.MethodPost, path: a.licensePath() + "/activations", body: body, idempotent: true}, &seat)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	a.current = &seat
	a.mu.Unlock()
	return &seat, nil
}

// seatGone: the activation is no longer a seat (unknown, lapsed, reclaimed or deactivated).
func seatGone(err error) bool {
	var e *Error
	return errors.As(err, &e) && (e.Status == 404 || e.Status == 409 || e.Status == 410)
}

// Heartbeat renews the remembered seat's lease: POST …/activations/{id}/heartbeat. When the seat is gone
// (404, 409, 410) it activates once more (when it has a fingerprint) and answers the new seat; with no
// seat remembered yet it activates.
func (a *App) Heartbeat(ctx context.Context) (*Activation, error) {
	seat := a.Activation()
	if seat == nil {
		return a.Activate(ctx, "")
	}
	var renewed Activation
	err := a.transport.do(ctx, request{
		method: http.MethodPost,
		path:   a.licensePath() + "/activations/" + segment(seat.ID) + "/heartbeat",
		// Repeating a heartbeat only extends the same lease again.
		idempotent: true,
	}, &renewed)
	if err != nil {
		if !seatGone(err) || a.opts.Fingerprint == "" {
			return nil, err
		}
		a.forget(seat.ID)
		return a.Activate(ctx, "")
	}
	a.mu.Lock()
	// A Stop or a new activation may have replaced the seat while this was on its way.
	if a.current != nil && a.current.ID == seat.ID {
		a.current = &renewed
	}
	a.mu.Unlock()
	return &renewed, nil
}

// Deactivate releases the remembered seat at once: DELETE …/activations/{id}?fingerprint=…. It does
// nothing when there is none; a seat the server no longer has (404) counts as released. It does not stop
// the heartbeats: Stop does both.
func (a *App) Deactivate(ctx context.Context) error {
	seat := a.Activation()
	if seat == nil {
		return nil
	}
	err := a.deactivate(ctx, seat.ID, seat.Fingerprint)
	var e *Error
	if err != nil && !(errors.As(err, &e) && e.Status == 404) {
		return err
	}
	a.forget(seat.ID)
	return nil
}

// DeactivateID releases the activation with this id, which need not be this machine's; an unknown id
// is a 404 *Error. It counts against the customer's allowance of deactivations
// (customer_deactivations_per_30_days) unless it is this machine's own floating seat and
// AppOptions.Fingerprint is set.
func (a *App) DeactivateID(ctx context.Context, id string) error {
	if id == "" {
		return errors.New("licensing: DeactivateID needs an activation id")
	}
	if err := a.deactivate(ctx, id, a.opts.Fingerprint); err != nil {
		return err
	}
	a.forget(id)
	return nil
}

func (a *App) deactivate(ctx context.Context, id, fingerprint string) error {
	var query url.Values
	if fingerprint != "" {
		// Its own fingerprint: an app releasing its own floating seat never spends the customer's
		// allowance of deactivations.
		query = url.Values{"fingerprint": {fingerprint}}
	}
	return a.transport.do(ctx, request{
		method:     http.MethodDelete,
		path:       a.licensePath() + "/activations/" + segment(id),
		query:      query,
		idempotent: true,
	}, nil)
}

func (a *App) forget(id string) {
	a.mu.Lock()
	if a.current != nil && a.current.ID == id {
		a.current = nil
	}
	a.mu.Unlock()
}

// LicenseFile fetches a signed licence file for offline use: POST /api/v1/licenses/{key}/file, bound to
// this machine when AppOptions.Fingerprint is set. Keep it on disk (json.Marshal) and check it with
// VerifyOffline when the server cannot be reached. A licence that requires activation needs this
// machine activated first.
func (a *App) LicenseFile(ctx context.Context) (*LicenseFile, error) {
	body := map[string]any{}
	if a.opts.Fingerprint != "" {
		body["fingerprint"] = a.opts.Fingerprint
	}
	if a.opts.FileTTLDays > 0 {
		body["ttl_days"] = a.opts.FileTTLDays
	}
	var file LicenseFile
	err := a.transport.do(ctx, request{method: http.MethodPost, path: a.licensePath() + "/file", body: body, idempotent: true}, &file)
	if err != nil {
		return nil, err
	}
	return &file, nil
}

// VerifyOffline checks a licence file with no network, with AppOptions.PublicKeys and this machine's
// fingerprint (VerifyLicenseFile), and that it is a file of this licence key (and product, when set):
// a genuine file of another licence is CodeLicenseMismatch. Without PublicKeys every file is
// CodeUnknownKey. A zero now means time.Now().
func (a *App) VerifyOffline(file LicenseFile, now time.Time) Verification {
	opts := VerifyOptions{Now: now}
	if a.opts.Fingerprint != "" {
		fingerprint := a.opts.Fingerprint
		opts.Fingerprint = &fingerprint
	}
	v := VerifyLicenseFile(file, a.opts.PublicKeys, opts)
	if !v.Valid {
		return v
	}
	if v.License == nil || canonicalKey(v.License.LicenseKey) != canonicalKey(a.key) ||
		(a.opts.ProductID != "" && v.License.ProductID != a.opts.ProductID) {
		return refused(CodeLicenseMismatch)
	}
	return v
}

// canonicalKey is the stored form of a key in any spelling (or the key as it is, when not well formed).
func canonicalKey(key string) string {
	if c := CheckKey(key); c.WellFormed {
		return c.Normalized
	}
	return key
}

// CheckForUpdate asks the product's update feed whether a newer release fits this machine:
// GET /api/v1/products/{ProductID}/updates. Only releases the licence may have are offered. A licence
// that may have no updates at all gets a 403 *Error whose ValidationCode says why (e.g. expired) and
// NextAction what the user can do (renew).
func (a *App) CheckForUpdate(ctx context.Context, q UpdateQuery) (*UpdateCheck, error) {
	if a.opts.ProductID == "" {
		return nil, errors.New("licensing: CheckForUpdate needs AppOptions.ProductID")
	}
	query := url.Values{}
	for name, value := range map[string]string{"version": q.Version, "platform": q.Platform, "arch": q.Arch} {
		if strings.TrimSpace(value) == "" {
			return nil, fmt.Errorf("licensing: CheckForUpdate needs %s", name)
		}
		query.Set(name, strings.TrimSpace(value))
	}
	if q.Channel != "" {
		query.Set("channel", q.Channel)
	}
	var check UpdateCheck
	err := a.transport.do(ctx, request{
		method:     http.MethodGet,
		path:       "/api/v1/products/" + segment(a.opts.ProductID) + "/updates",
		query:      query,
		idempotent: true,
	}, &check)
	if err != nil {
		return nil, err
	}
	return &check, nil
}
