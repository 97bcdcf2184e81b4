package licensing

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Licence keys: six groups of five Crockford base32 characters, e.g. 7K3QF-9XW2M-T0RBH-PZ4DN-C8E1V-Q3ATG.
// The first 28 characters are random; the last two are a check value, sum(position × value) mod 1021.
// 1021 is prime and larger than any weight or value difference, so every single mistyped character and
// every swap of two neighbours changes it: a typo is refused here, without asking the server.
//
// This is the gateway's own reading (proto/rules/license-key.ts), character for character, so that the
// app never refuses a key the server would take, nor sends one the server refuses for its shape.

const (
	keyAlphabet     = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	keyRandomChars  = 28
	keyChars        = 30
	keyModulus      = 1021
	keyGroup        = 5
	maxKeyLength    = 64 // in UTF-16 code units, as the gateway counts
	minForeignChars = 8
)

// Kinds of licence key.
const (
	// KindNative is a key this system issued: it carries check characters.
	KindNative = "native"
	// KindForeign is a key imported from another system (Keygen, Lemon Squeezy, Gumroad, a
	// spreadsheet): matched by its exact text, never refused for a check value it does not have.
	KindForeign = "foreign"
)

// Reasons a key is not well formed.
const (
	// ReasonFormat: not the shape of any key (too short, too long, characters no key has).
	ReasonFormat = "format"
	// ReasonChecksum: shaped as a native key, but its check characters do not match: a typo.
	ReasonChecksum = "checksum"
)

// KeyCheck is what CheckKey found.
type KeyCheck struct {
	// WellFormed is true when the key may exist; false means it never will (ask the user to retype it).
	WellFormed bool `json:"well_formed"`
	// Normalized is the key in the form the server stores it (native: upper case in groups of five;
	// foreign: trimmed only), or "" when not well formed.
	Normalized string `json:"normalized"`
	// Kind is KindNative or KindForeign, or "" when not well formed.
	Kind string `json:"kind"`
	// Reason is ReasonFormat or ReasonChecksum when not well formed, else "".
	Reason string `json:"reason"`
}

// CheckKey reads a licence key as a person typed it. At most 64 characters; surrounding white space,
// case, hyphens and the look-alikes O (for 0) and I, L (for 1) are set aside: 30 characters of the
// alphabet are a native key, well formed when its check characters match. Anything else of 8 to 64
// characters of A-Z a-z 0-9 . _ ~ + = : - (once trimmed) is a foreign key, taken exactly as it is.
func CheckKey(input string) KeyCheck {
	native := checkNativeKey(input)
	if native.WellFormed || native.Reason == ReasonChecksum || utf16Length(input) > maxKeyLength {
		return native
	}
	trimmed := trimJS(input)
	if isForeignKey(trimmed) {
		return KeyCheck{WellFormed: true, Normalized: trimmed, Kind: KindForeign}
	}
	return native
}

// checkNativeKey is the native reading alone.
func checkNativeKey(input string) KeyCheck {
	notWellFormed := func(reason string) KeyCheck { return KeyCheck{Reason: reason} }
	if utf16Length(input) > maxKeyLength {
		return notWellFormed(ReasonFormat)
	}
	values := make([]int, 0, keyChars)
	for _, r := range upperJS(trimJS(input)) {
		switch r {
		case '-':
			continue
		case 'O':
			r = '0'
		case 'I', 'L':
			r = '1'
		}
		v := strings.IndexRune(keyAlphabet, r)
		if v < 0 || len(values) == keyChars {
			// A character no key has, or more than 30: the count alone already decides "format".
			return notWellFormed(ReasonFormat)
		}
		values = append(values, v)
	}
	if len(values) != keyChars {
		return notWellFormed(ReasonFormat)
	}
	sum := 0
	for i, v := range values[:keyRandomChars] {
		sum += (i + 1) * v
	}
	if sum%keyModulus != values[keyRandomChars]*32+values[keyRandomChars+1] {
		return notWellFormed(ReasonChecksum)
	}
	var b strings.Builder
	for i, v := range values {
		if i > 0 && i%keyGroup == 0 {
			b.WriteByte('-')
		}
		b.WriteByte(keyAlphabet[v])
	}
	return KeyCheck{WellFormed: true, Normalized: b.String(), Kind: KindNative}
}

// isForeignKey matches ^[A-Za-z0-9._~+=:-]{8,64}$.
func isForeignKey(s string) bool {
	if len(s) < minForeignChars || len(s) > maxKeyLength {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.IndexByte("._~+=:-", c) >= 0
		if !ok {
			return false
		}
	}
	return true
}

// utf16Length counts as JavaScript's String.length does, which is how the gateway limits a key.
func utf16Length(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// isSpaceJS is JavaScript's white space and line terminators (String.prototype.trim), which differ
// from Go's unicode.IsSpace: U+FEFF is trimmed there, U+0085 is not.
func isSpaceJS(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0x00A0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

func trimJS(s string) string { return strings.TrimFunc(s, isSpaceJS) }

// fullUpper holds the letters whose upper case is several letters of the key alphabet in JavaScript's
// toUpperCase (Unicode's full case mapping) but stays one letter in Go's simple mapping: with them, a
// key typed with "ß" or a ligature reads as the server reads it.
var fullUpper = map[rune]string{
	'ß': "SS", 'ﬀ': "FF", 'ﬁ': "FI", 'ﬂ': "FL", 'ﬃ': "FFI", 'ﬄ': "FFL", 'ﬅ': "ST", 'ﬆ': "ST",
}

// upperJS upper-cases as JavaScript does, as far as it can change whether a key is read.
func upperJS(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < utf8.RuneSelf {
			if r >= 'a' && r <= 'z' {
				r -= 'a' - 'A'
			}
			b.WriteRune(r)
		} else if up, ok := fullUpper[r]; ok {
			b.WriteString(up)
		} else {
			b.WriteRune(unicode.ToUpper(r))
		}
	}
	return b.String()
}
