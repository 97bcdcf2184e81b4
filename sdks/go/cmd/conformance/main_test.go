package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const key = "7K3QF-9XW2M-T0RBH-PZ4DN-C8E1V-Q3ATG"

func runCommand(t *testing.T, args ...string) (int, map[string]any, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, &stdout, &stderr)
	var answer map[string]any
	if out := stdout.String(); out != "" {
		if strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "\n") {
			t.Fatalf("not one line: %q", out)
		}
		if err := json.Unmarshal([]byte(out), &answer); err != nil {
			t.Fatalf("not JSON: %q", out)
		}
	}
	return code, answer, stderr.String()
}

func TestExitStatuses(t *testing.T) {
	cases := []struct {
		args []string
		code int
	}{
		{[]string{"check-key", key}, 0},
		{[]string{"check-key", "abc"}, 1},
		{[]string{"check-key"}, 2},
		{[]string{"check-key", "a", "b"}, 2},
		{[]string{"nope"}, 2},
		{[]string{}, 2},
		{[]string{"vectors"}, 2},
		{[]string{"vectors", "--dir"}, 2},
		{[]string{"vectors", "--dir", "../../../test-vectors", "--extra", "1"}, 2},
		{[]string{"vectors", "--dir", "../../../test-vectors", "stray"}, 2},
		{[]string{"validate", "--base-url", "http://127.0.0.1:1"}, 2},
		{[]string{"activate", "--base-url", "http://x", "--license-key", key}, 2},
		{[]string{"heartbeat", "--base-url", "http://x", "--license-key", key, "--fingerprint", "f"}, 2},
		{[]string{"vectors", "--dir", t.TempDir()}, 1},
	}
	for _, c := range cases {
		if code, _, stderr := runCommand(t, c.args...); code != c.code {
			t.Errorf("%v: exit %d (stderr %q), want %d", c.args, code, stderr, c.code)
		} else if c.code == 2 && stderr == "" {
			t.Errorf("%v: a usage error says why on stderr", c.args)
		}
	}
}

func TestVectorsCommand(t *testing.T) {
	code, answer, _ := runCommand(t, "vectors", "--dir", "../../../test-vectors")
	if code != 0 || answer["passed"].(float64) < 40 || len(answer["failed"].([]any)) != 0 {
		t.Fatalf("exit %d: %v", code, answer)
	}
}

func TestOfflineCommands(t *testing.T) {
	var files struct {
		KeySets map[string]json.RawMessage `json:"key_sets"`
		Cases   []struct {
			Name string          `json:"name"`
			File json.RawMessage `json:"file"`
			Now  string          `json:"now"`
		} `json:"cases"`
	}
	data, err := os.ReadFile("../../../test-vectors/license-files.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &files); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, content []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, content, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	keys := write("keys.json", []byte(`{"data":`+string(files.KeySets["product_a"])+`}`))
	file := write("file.json", files.Cases[0].File)
	code, answer, _ := runCommand(t, "verify-file", "--public-keys", keys, "--file", file, "--now", files.Cases[0].Now)
	if code != 0 || answer["valid"] != true || answer["code"] != "valid" || answer["payload"].(map[string]any)["license_key"] != key {
		t.Fatalf("exit %d: %v", code, answer)
	}
	code, answer, _ = runCommand(t, "verify-file", "--public-keys", keys, "--file", file, "--now", "2030-01-01T00:00:00Z")
	if code != 1 || answer["code"] != "expired" || answer["payload"] != nil {
		t.Fatalf("exit %d: %v", code, answer)
	}
	notJSON := write("not.json", []byte("hello"))
	if code, answer, _ = runCommand(t, "verify-file", "--public-keys", keys, "--file", notJSON); code != 1 || answer["code"] != "malformed" {
		t.Fatalf("exit %d: %v", code, answer)
	}

	body := write("body.json", []byte(`{}`))
	code, answer, _ = runCommand(t, "verify-webhook", "--secret", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "--id", "evt_1",
		"--timestamp", "1780315200", "--signature", "v1,AAAA", "--body-file", body, "--now", "1780315200")
	if code != 1 || answer["valid"] != false || answer["code"] != "bad_signature" {
		t.Fatalf("exit %d: %v", code, answer)
	}
}

func TestAPICommands(t *testing.T) {
	var gotAuth, gotBody string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth = r.Header.Get("Authorization")
		b, _ := io.ReadAll(r.Body)
		gotBody = string(b)
		w.Header().Set("Content-Type", "application/json")
		switch r.Method + " " + r.URL.Path {
		case "POST /api/v1/keys/validate":
			_, _ = io.WriteString(w, `{"valid":false,"code":"not_activated","detail":"activate first","next_action":"activate","entitlements":[],"cache_until":"2026-06-01T12:00:00.000Z","license":null}`)
		case "POST /api/v1/licenses/" + key + "/activations/act_1/heartbeat":
			_, _ = io.WriteString(w, `{"id":"act_1","fingerprint":"f","name":null,"created_at":"2026-06-01T12:00:00.000Z","lease_expires_at":"2026-06-01T12:01:30.000Z"}`)
		default:
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(409)
			_, _ = io.WriteString(w, `{"status":409,"code":"conflict","detail":"activation_limit_reached: every seat is taken","next_action":"free_a_seat"}`)
		}
	}))
	defer srv.Close()

	code, answer, _ := runCommand(t, "validate", "--base-url", srv.URL, "--license-key", key, "--entitlement", "a", "--entitlement", "b")
	if code != 1 || answer["code"] != "not_activated" || answer["next_action"] != "activate" {
		t.Fatalf("exit %d: %v", code, answer)
	}
	if gotAuth != "License "+key || gotBody != `{"entitlements":["a","b"],"key":"`+key+`"}` {
		t.Fatalf("sent %q %s", gotAuth, gotBody)
	}

	code, answer, _ = runCommand(t, "heartbeat", "--base-url", srv.URL, "--license-key", key, "--activation-id", "act_1")
	if code != 0 || answer["activation_id"] != "act_1" || answer["lease_expires_at"] != "2026-06-01T12:01:30.000Z" {
		t.Fatalf("exit %d: %v", code, answer)
	}

	code, answer, _ = runCommand(t, "activate", "--base-url", srv.URL, "--license-key", key, "--fingerprint", "f")
	want := map[string]any{"status": float64(409), "code": "conflict", "detail": "activation_limit_reached: every seat is taken", "next_action": "free_a_seat"}
	if code != 1 || mustJSON(answer["error"]) != mustJSON(want) {
		t.Fatalf("exit %d: %v", code, answer)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
