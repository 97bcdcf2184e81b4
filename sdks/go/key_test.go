package licensing

import (
	"strings"
	"testing"
)

const exampleKey = "7K3QF-9XW2M-T0RBH-PZ4DN-C8E1V-Q3ATG"

func TestCheckKey(t *testing.T) {
	native := KeyCheck{WellFormed: true, Normalized: exampleKey, Kind: KindNative}
	format := KeyCheck{Reason: ReasonFormat}
	checksum := KeyCheck{Reason: ReasonChecksum}
	cases := []struct {
		name, input string
		want        KeyCheck
	}{
		{"as issued", exampleKey, native},
		{"lower case, no hyphens", strings.ToLower(strings.ReplaceAll(exampleKey, "-", "")), native},
		{"JavaScript white space around it (NBSP, BOM)", "\u00a0" + exampleKey + "\ufeff", native},
		{"U+0085 is no white space to JavaScript: a foreign key cannot hold it either", "\u0085" + exampleKey, format},
		{"one character mistyped", "7K3ZF-9XW2M-T0RBH-PZ4DN-C8E1V-Q3ATG", checksum},
		{"a letter U, not in the alphabet", "UK3QF-9XW2M-T0RBH-PZ4DN-C8E1V-Q3ATG", KeyCheck{WellFormed: true, Normalized: "UK3QF-9XW2M-T0RBH-PZ4DN-C8E1V-Q3ATG", Kind: KindForeign}},
		{"31 characters: foreign", exampleKey + "0", KeyCheck{WellFormed: true, Normalized: exampleKey + "0", Kind: KindForeign}},
		{"8 characters is the shortest foreign key", "abcdefgh", KeyCheck{WellFormed: true, Normalized: "abcdefgh", Kind: KindForeign}},
		{"7 is too short", "abcdefg", format},
		{"64 characters", strings.Repeat("a", 64), KeyCheck{WellFormed: true, Normalized: strings.Repeat("a", 64), Kind: KindForeign}},
		{"65 characters", strings.Repeat("a", 65), format},
		{"64 counted as JavaScript counts: an emoji is two", strings.Repeat("\U0001F600", 32) + "x", format},
		{"spaces around a long key count towards 64", strings.Repeat(" ", 60) + "abcdefgh", format},
		{"a slash", "abcd/efgh", format},
		{"empty", "", format},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := CheckKey(c.input); got != c.want {
				t.Fatalf("CheckKey(%q) = %+v, want %+v", c.input, got, c.want)
			}
		})
	}
}

// The server upper-cases as JavaScript does: ß is SS and ﬀ is FF there, letters of the alphabet.
func TestCheckKeyFullCaseMapping(t *testing.T) {
	body := "0123456789SS23456789FF234567"
	sum := 0
	for i := range body {
		sum += (i + 1) * strings.IndexByte(keyAlphabet, body[i])
	}
	key := body + string(keyAlphabet[sum%keyModulus/32]) + string(keyAlphabet[sum%keyModulus%32])
	typed := strings.Replace(strings.Replace(key, "SS", "ß", 1), "FF", "ﬀ", 1)
	got := CheckKey(typed)
	if !got.WellFormed || got.Kind != KindNative || strings.ReplaceAll(got.Normalized, "-", "") != key {
		t.Fatalf("CheckKey(%q) = %+v, want the native key %s", typed, got, key)
	}
}

func TestCanonicalKey(t *testing.T) {
	if canonicalKey(" 7k3qf9xw2mt0rbhpz4dnc8e1vq3atg") != exampleKey {
		t.Fatal("a native key in another spelling is the same key")
	}
	if canonicalKey("38b1460a-5104") != "38b1460a-5104" || canonicalKey("38B1460A-5104") == "38b1460a-5104" {
		t.Fatal("a foreign key is its exact text")
	}
}
