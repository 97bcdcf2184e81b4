package licensing

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// When to try a request again, and how long to wait first.

// Defaults of AppOptions.
const (
	DefaultTimeout      = 30 * time.Second
	DefaultMaxRetries   = 2
	DefaultMaxRetryWait = 30 * time.Second
)

const (
	backoffBase = 500 * time.Millisecond
	backoffMax  = 8 * time.Second
)

// retryableStatus: rate limited (refused before any work), or a backing service down.
func retryableStatus(status int) bool { return status == 429 || status == 503 }

// parseRetryAfter reads Retry-After as delta-seconds or an HTTP date (RFC 9110 §10.2.3); 0 and false
// when absent or unreadable.
func parseRetryAfter(value string, now time.Time) (time.Duration, bool) {
	value = strings.TrimSpace(value)
	if value == "" {
		return 0, false
	}
	if strings.Trim(value, "0123456789") == "" {
		seconds, err := strconv.ParseInt(value, 10, 64)
		if err != nil || seconds > 1<<31 {
			return 0, false
		}
		return time.Duration(seconds) * time.Second, true
	}
	at, err := http.ParseTime(value)
	if err != nil {
		return 0, false
	}
	// Whole seconds, rounded up, as the server counts them.
	wait := at.Sub(now)
	if wait <= 0 {
		return 0, true
	}
	return ((wait + time.Second - 1) / time.Second) * time.Second, true
}

// backoff is exponential with "equal jitter": half the step fixed, half random, so that many clients
// that failed together spread out but none retries at once. attempt counts retries from 0.
func backoff(attempt int, random func() float64) time.Duration {
	step := backoffMax
	if attempt < 5 {
		step = min(backoffMax, backoffBase<<attempt)
	}
	return step/2 + time.Duration(random()*float64(step/2))
}

// sleepContext waits d, or less when ctx ends first.
func sleepContext(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func defaultRandom() float64 { return rand.Float64() }
