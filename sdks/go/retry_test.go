package licensing

import (
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		value string
		want  time.Duration
		ok    bool
	}{
		{"", 0, false},
		{"0", 0, true},
		{" 33 ", 33 * time.Second, true},
		{"-3", 0, false},
		{"1.5", 0, false},
		{"Mon, 01 Jun 2026 12:00:10 GMT", 10 * time.Second, true},
		{"Mon, 01 Jun 2026 11:59:00 GMT", 0, true},
		{"soon", 0, false},
	}
	for _, c := range cases {
		got, ok := parseRetryAfter(c.value, now)
		if got != c.want || ok != c.ok {
			t.Errorf("parseRetryAfter(%q) = %v, %v; want %v, %v", c.value, got, ok, c.want, c.ok)
		}
	}
}

func TestBackoff(t *testing.T) {
	for attempt, want := range []time.Duration{250, 500, 1000, 2000, 4000, 4000, 4000} {
		if lo := backoff(attempt, func() float64 { return 0 }); lo != want*time.Millisecond {
			t.Errorf("attempt %d: %v, want %v", attempt, lo, want*time.Millisecond)
		}
		if hi := backoff(attempt, func() float64 { return 0.999999 }); hi > 2*want*time.Millisecond {
			t.Errorf("attempt %d: %v is more than the step", attempt, hi)
		}
	}
}
