package conformance

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"

	licensing "github.com/licensing-oss/licensing/sdks/go"
)

// Failure is one case whose answer differs from the expected one.
type Failure struct {
	File     string `json:"file"`
	Name     string `json:"name"`
	Expected any    `json:"expected"`
	Got      any    `json:"got"`
}

// Report is the `vectors` command's answer.
type Report struct {
	Passed int       `json:"passed"`
	Failed []Failure `json:"failed"`
}

// Case is one case of a vector file, judged.
type Case struct {
	File, Name    string
	Expected, Got any
	Passed        bool
}

type licenseFiles struct {
	KeySets map[string][]licensing.PublicKey `json:"key_sets"`
	Cases   []struct {
		Name        string          `json:"name"`
		KeySet      string          `json:"key_set"`
		File        json.RawMessage `json:"file"`
		Fingerprint *string         `json:"fingerprint"`
		Now         string          `json:"now"`
		Expect      json.RawMessage `json:"expect"`
	} `json:"cases"`
}

type webhooks struct {
	Cases []struct {
		Name      string          `json:"name"`
		Secret    string          `json:"secret"`
		ID        string          `json:"id"`
		Timestamp string          `json:"timestamp"`
		Signature string          `json:"signature"`
		Body      string          `json:"body"`
		Now       json.Number     `json:"now"`
		Expect    json.RawMessage `json:"expect"`
	} `json:"cases"`
}

type licenseKeys struct {
	Cases []struct {
		Name   string          `json:"name"`
		Input  string          `json:"input"`
		Expect json.RawMessage `json:"expect"`
	} `json:"cases"`
}

// Cases runs every case of the three vector files in dir (license-files.json, webhooks.json,
// license-keys.json) through the same answers as the single commands.
func Cases(dir string) ([]Case, error) {
	var out []Case
	judge := func(file, name string, expected json.RawMessage, got any) error {
		var want, have any
		if err := json.Unmarshal(expected, &want); err != nil {
			return fmt.Errorf("%s: %s: expect: %w", file, name, err)
		}
		text, err := json.Marshal(got)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(text, &have); err != nil {
			return err
		}
		out = append(out, Case{File: file, Name: name, Expected: want, Got: have, Passed: reflect.DeepEqual(want, have)})
		return nil
	}

	var files licenseFiles
	if err := read(dir, "license-files.json", &files); err != nil {
		return nil, err
	}
	for _, c := range files.Cases {
		keys, ok := files.KeySets[c.KeySet]
		if !ok {
			return nil, fmt.Errorf("license-files.json: %s: no key set %q", c.Name, c.KeySet)
		}
		got, err := VerifyFile(c.File, keys, c.Fingerprint, c.Now)
		if err != nil {
			return nil, fmt.Errorf("license-files.json: %s: %w", c.Name, err)
		}
		if err := judge("license-files.json", c.Name, c.Expect, got); err != nil {
			return nil, err
		}
	}

	var hooks webhooks
	if err := read(dir, "webhooks.json", &hooks); err != nil {
		return nil, err
	}
	for _, c := range hooks.Cases {
		got, err := VerifyWebhook(c.Secret, c.ID, c.Timestamp, c.Signature, []byte(c.Body), c.Now.String())
		if err != nil {
			return nil, fmt.Errorf("webhooks.json: %s: %w", c.Name, err)
		}
		if err := judge("webhooks.json", c.Name, c.Expect, got); err != nil {
			return nil, err
		}
	}

	var keys licenseKeys
	if err := read(dir, "license-keys.json", &keys); err != nil {
		return nil, err
	}
	for i, c := range keys.Cases {
		name := c.Name
		if name == "" {
			name = strconv.Quote(c.Input) + " (case " + strconv.Itoa(i) + ")"
		}
		if err := judge("license-keys.json", name, c.Expect, CheckKey(c.Input)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Vectors is the `vectors` command: how many cases passed, and each that failed.
func Vectors(dir string) (Report, error) {
	cases, err := Cases(dir)
	if err != nil {
		return Report{}, err
	}
	report := Report{Failed: []Failure{}}
	for _, c := range cases {
		if c.Passed {
			report.Passed++
		} else {
			report.Failed = append(report.Failed, Failure{File: c.File, Name: c.Name, Expected: c.Expected, Got: c.Got})
		}
	}
	return report, nil
}

func read(dir, name string, into any) error {
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, into); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}
