// A minimal licensed Go app: at start-up it validates its licence with the licence key alone
// (Authorization: License <key>), keeps a signed licence file for later, and when the server cannot be
// reached it starts from that file, verified offline with the product's public keys it ships with.
//
//	LICENSING_BASE_URL=https://licensing.example.com LICENSE_KEY=7K3QF-9XW2M-T0RBH-PZ4DN-C8E1V-Q3ATG go run .
//
// Optional: LICENSING_PRODUCT_ID (refuse another product's key), LICENSE_FILE (where the file is kept,
// default license-file.json), LICENSING_PUBLIC_KEYS (the product's keys as GET
// /api/v1/products/{id}/signing-keys answers them, default public-keys.json).
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	licensing "github.com/licensing-oss/licensing/sdks/go"
)

func main() {
	os.Exit(run())
}

func run() int {
	baseURL := os.Getenv("LICENSING_BASE_URL")
	key := os.Getenv("LICENSE_KEY")
	filePath := envOr("LICENSE_FILE", "license-file.json")
	if baseURL == "" || key == "" {
		fmt.Fprintln(os.Stderr, "set LICENSING_BASE_URL and LICENSE_KEY")
		return 2
	}
	// A typo is refused here, before any network call.
	if check := licensing.CheckKey(key); !check.WellFormed {
		fmt.Printf("licence key %q cannot be right (%s): check your typing\n", key, check.Reason)
		return 1
	}

	app, err := licensing.NewApp(licensing.AppOptions{
		BaseURL:     baseURL,
		LicenseKey:  key,
		ProductID:   os.Getenv("LICENSING_PRODUCT_ID"),
		Fingerprint: fingerprint(),
		Name:        hostname(),
		PublicKeys:  publicKeys(envOr("LICENSING_PUBLIC_KEYS", "public-keys.json")),
		// A user waits at start-up: give up early and start offline instead.
		Timeout:      5 * time.Second,
		MaxRetryWait: 5 * time.Second,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	v, err := app.Validate(ctx)
	if err == nil && v.NextAction == "activate" {
		// The policy wants this machine activated (or its floating seat lapsed): take a seat, ask again.
		if _, err = app.Activate(ctx, ""); err == nil {
			v, err = app.Validate(ctx)
		}
	}
	var apiErr *licensing.Error
	switch {
	case err == nil:
		fmt.Printf("online: valid=%v code=%s next_action=%s entitlements=%v\n  %s\n", v.Valid, v.Code, v.NextAction, v.Entitlements, v.Detail)
		if !v.Valid {
			return 1
		}
		saveFile(ctx, app, filePath)
		return 0
	case errors.As(err, &apiErr) && apiErr.Status != 0 && apiErr.Status < 500 && apiErr.Status != 429:
		// The server answered and refused: a licence file does not overrule it.
		fmt.Printf("refused: %d %s: %s (next action: %s)\n", apiErr.Status, apiErr.Code, apiErr.Detail, orNone(apiErr.NextAction))
		return 1
	default:
		fmt.Printf("the licensing server is out of reach (%v): checking the licence file offline\n", err)
		return offline(app, filePath)
	}
}

// saveFile keeps a signed licence file for the next start without network (best effort).
func saveFile(ctx context.Context, app *licensing.App, path string) {
	file, err := app.LicenseFile(ctx)
	if err != nil {
		fmt.Printf("  no licence file kept: %v\n", err)
		return
	}
	data, _ := json.Marshal(file)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		fmt.Printf("  no licence file kept: %v\n", err)
		return
	}
	fmt.Printf("  licence file kept in %s for offline starts\n", path)
}

func offline(app *licensing.App, path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		fmt.Printf("offline: no licence file (%v)\n", err)
		return 1
	}
	var file licensing.LicenseFile
	if err := json.Unmarshal(data, &file); err != nil {
		fmt.Printf("offline: %s is not a licence file\n", path)
		return 1
	}
	v := app.VerifyOffline(file, time.Time{})
	if !v.Valid {
		fmt.Printf("offline: the licence file is refused: %s\n", v.Code)
		return 1
	}
	fmt.Printf("offline: valid until %s, entitlements=%v\n", v.License.ValidUntil, v.License.Entitlements)
	return 0
}

func publicKeys(path string) []licensing.PublicKey {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil // then every offline check answers unknown_key
	}
	keys, err := licensing.ParsePublicKeys(data)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", path, err)
		return nil
	}
	return keys
}

// fingerprint identifies this machine without saying anything about it: a hash of its machine id (or
// host name), stable across runs.
func fingerprint() string {
	id, err := os.ReadFile("/etc/machine-id")
	if err != nil || len(strings.TrimSpace(string(id))) == 0 {
		id = []byte(hostname())
	}
	sum := sha256.Sum256([]byte("go-app example: " + strings.TrimSpace(string(id))))
	return hex.EncodeToString(sum[:16])
}

func hostname() string {
	name, err := os.Hostname()
	if err != nil || name == "" {
		return "unknown"
	}
	if len(name) > 100 {
		name = name[:100]
	}
	return name
}

func envOr(name, otherwise string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return otherwise
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
