package licensing_test

import (
	"encoding/json"
	"testing"

	"github.com/licensing-oss/licensing/sdks/go/internal/conformance"
)

// The shared test vectors (sdks/test-vectors), made by the system's own code: every case must answer
// exactly what the TypeScript SDK answers.
func TestVectors(t *testing.T) {
	cases, err := conformance.Cases("../test-vectors")
	if err != nil {
		t.Fatal(err)
	}
	perFile := map[string]int{}
	for _, c := range cases {
		perFile[c.File]++
		t.Run(c.File+"/"+c.Name, func(t *testing.T) {
			if !c.Passed {
				want, _ := json.Marshal(c.Expected)
				got, _ := json.Marshal(c.Got)
				t.Fatalf("\nwant %s\ngot  %s", want, got)
			}
		})
	}
	for _, f := range []string{"license-files.json", "webhooks.json", "license-keys.json"} {
		if perFile[f] == 0 {
			t.Errorf("%s has no cases", f)
		}
	}
}
