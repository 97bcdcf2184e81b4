// Command conformance runs the Go library as docs/sdk-conformance.md says: `sdks/conformance go COMMAND
// [options]` builds and runs it. It prints one JSON object on one line and exits 0 when the answer is
// valid or the call succeeded, 1 when not, and 2 on a usage error (the message on stderr).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	licensing "github.com/licensing-oss/licensing/sdks/go"
	"github.com/licensing-oss/licensing/sdks/go/internal/conformance"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// usage is a usage error: an unknown command or option, a missing value.
type usage string

func (u usage) Error() string { return string(u) }

// options are the --name value pairs (repeatable ones collected) and the words that are not options.
type options struct {
	values map[string][]string
	words  []string
}

var repeatable = map[string]bool{"entitlement": true}

func parse(args []string) (options, error) {
	o := options{values: map[string][]string{}}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "--") {
			o.words = append(o.words, a)
			continue
		}
		if i+1 >= len(args) {
			return o, usage(a + " needs a value")
		}
		name := a[2:]
		i++
		if repeatable[name] {
			o.values[name] = append(o.values[name], args[i])
		} else {
			o.values[name] = []string{args[i]}
		}
	}
	return o, nil
}

// only refuses any option not in allowed, then need refuses a missing required one.
func (o options) only(allowed ...string) error {
	for name := range o.values {
		found := false
		for _, a := range allowed {
			found = found || a == name
		}
		if !found {
			return usage("unknown option --" + name)
		}
	}
	return nil
}

func (o options) need(names ...string) error {
	for _, n := range names {
		if _, ok := o.values[n]; !ok {
			return usage("--" + n + " is required")
		}
	}
	return nil
}

func (o options) get(name string) string {
	if v := o.values[name]; len(v) > 0 {
		return v[len(v)-1]
	}
	return ""
}

func (o options) optional(name string) *string {
	if v := o.values[name]; len(v) > 0 {
		return &v[len(v)-1]
	}
	return nil
}

// refusal is what an API call that failed prints (no answer at all is status 0).
type refusal struct {
	Status     int     `json:"status"`
	Code       string  `json:"code"`
	Detail     string  `json:"detail"`
	NextAction *string `json:"next_action"`
}

// result is what to print and whether it is a success (exit 0) or not (exit 1).
type result struct {
	answer any
	ok     bool
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	r, err := dispatch(ctx, args)
	var u usage
	var apiErr *licensing.Error
	switch {
	case errors.As(err, &u):
		fmt.Fprintln(stderr, u)
		fmt.Fprintln(stderr, "usage: sdks/conformance go COMMAND [options] (docs/sdk-conformance.md)")
		return 2
	case errors.As(err, &apiErr):
		out := refusal{Status: apiErr.Status, Code: apiErr.Code, Detail: apiErr.Detail}
		if apiErr.NextAction != "" {
			out.NextAction = &apiErr.NextAction
		}
		emit(stdout, struct {
			Error refusal `json:"error"`
		}{out})
		return 1
	case err != nil:
		fmt.Fprintln(stderr, err)
		return 1
	}
	emit(stdout, r.answer)
	if r.ok {
		return 0
	}
	return 1
}

func emit(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // one line, ending in a newline
}

func dispatch(ctx context.Context, args []string) (result, error) {
	if len(args) == 0 {
		return result{}, usage("no command")
	}
	command := args[0]
	o, err := parse(args[1:])
	if err != nil {
		return result{}, err
	}
	if command == "check-key" {
		if len(o.words) != 1 || len(o.values) > 0 {
			return result{}, usage("check-key takes one KEY")
		}
		answer := conformance.CheckKey(o.words[0])
		return result{answer, answer.WellFormed}, nil
	}
	if len(o.words) > 0 {
		return result{}, usage("unexpected " + o.words[0])
	}
	switch command {
	case "verify-file":
		return verifyFile(o)
	case "verify-webhook":
		return verifyWebhook(o)
	case "vectors":
		return vectors(o)
	case "validate", "activate", "heartbeat", "deactivate", "fetch-file":
		return callAPI(ctx, command, o)
	}
	return result{}, usage("unknown command " + command)
}

func verifyFile(o options) (result, error) {
	if err := o.only("public-keys", "file", "fingerprint", "now"); err != nil {
		return result{}, err
	}
	if err := o.need("public-keys", "file"); err != nil {
		return result{}, err
	}
	keyText, err := os.ReadFile(o.get("public-keys"))
	if err != nil {
		return result{}, err
	}
	keys, err := licensing.ParsePublicKeys(keyText)
	if err != nil {
		return result{}, err
	}
	file, err := os.ReadFile(o.get("file"))
	if err != nil {
		return result{}, err
	}
	v, err := conformance.VerifyFile(file, keys, o.optional("fingerprint"), o.get("now"))
	if err != nil {
		return result{}, err
	}
	return result{v, v.Valid}, nil
}

func verifyWebhook(o options) (result, error) {
	if err := o.only("secret", "id", "timestamp", "signature", "body-file", "now"); err != nil {
		return result{}, err
	}
	if err := o.need("secret", "id", "timestamp", "signature", "body-file"); err != nil {
		return result{}, err
	}
	body, err := os.ReadFile(o.get("body-file"))
	if err != nil {
		return result{}, err
	}
	v, err := conformance.VerifyWebhook(o.get("secret"), o.get("id"), o.get("timestamp"), o.get("signature"), body, o.get("now"))
	if err != nil {
		return result{}, err
	}
	return result{v, v.Valid}, nil
}

func vectors(o options) (result, error) {
	if err := o.only("dir"); err != nil {
		return result{}, err
	}
	if err := o.need("dir"); err != nil {
		return result{}, err
	}
	report, err := conformance.Vectors(o.get("dir"))
	if err != nil {
		return result{}, err
	}
	return result{report, len(report.Failed) == 0}, nil
}

// callAPI runs one call as the licence itself (Authorization: License <key>).
func callAPI(ctx context.Context, command string, o options) (result, error) {
	allowed := map[string][]string{
		"validate":   {"fingerprint", "entitlement"},
		"activate":   {"fingerprint", "name"},
		"heartbeat":  {"activation-id"},
		"deactivate": {"activation-id"},
		"fetch-file": {"fingerprint"},
	}[command]
	if err := o.only(append([]string{"base-url", "license-key"}, allowed...)...); err != nil {
		return result{}, err
	}
	if err := o.need("base-url", "license-key"); err != nil {
		return result{}, err
	}
	switch command {
	case "activate":
		if err := o.need("fingerprint"); err != nil {
			return result{}, err
		}
	case "heartbeat", "deactivate":
		if err := o.need("activation-id"); err != nil {
			return result{}, err
		}
	}
	app, err := licensing.NewApp(licensing.AppOptions{
		BaseURL:      o.get("base-url"),
		LicenseKey:   o.get("license-key"),
		Fingerprint:  o.get("fingerprint"),
		ActivationID: o.get("activation-id"),
		Timeout:      30 * time.Second,
		MaxRetries:   2,
		MaxRetryWait: 30 * time.Second,
	})
	if err != nil {
		return result{}, err
	}
	switch command {
	case "validate":
		v, err := app.Validate(ctx, o.values["entitlement"]...)
		if err != nil {
			return result{}, err
		}
		return result{v.Raw, v.Valid}, nil
	case "activate":
		seat, err := app.Activate(ctx, o.get("name"))
		if err != nil {
			return result{}, err
		}
		return result{map[string]any{"activation_id": seat.ID}, true}, nil
	case "heartbeat":
		seat, err := app.Heartbeat(ctx)
		if err != nil {
			return result{}, err
		}
		var lease *string
		if seat.LeaseExpiresAt != nil {
			// As the API writes dates: UTC with milliseconds.
			s := seat.LeaseExpiresAt.UTC().Format("2006-01-02T15:04:05.000Z")
			lease = &s
		}
		return result{map[string]any{"activation_id": seat.ID, "lease_expires_at": lease}, true}, nil
	case "deactivate":
		if err := app.DeactivateID(ctx, o.get("activation-id")); err != nil {
			return result{}, err
		}
		return result{map[string]any{"deactivated": true}, true}, nil
	default: // fetch-file
		file, err := app.LicenseFile(ctx)
		if err != nil {
			return result{}, err
		}
		return result{file, true}, nil
	}
}
