package licensing

import (
	"encoding/json"
	"time"
)

// What the API answers the app, as far as an app reads it (docs/api.md). Every answer that can carry
// more keeps its body in Raw.

// Activation is this machine's seat.
type Activation struct {
	ID          string    `json:"id"`
	Fingerprint string    `json:"fingerprint"`
	Name        *string   `json:"name"`
	CreatedAt   time.Time `json:"created_at"`
	// LeaseExpiresAt is when a floating seat lapses without a heartbeat; nil for a node-locked one.
	LeaseExpiresAt *time.Time `json:"lease_expires_at"`
}

// Validation is the answer of POST /api/v1/keys/validate. A "no" is an answer, not an error: read
// Valid, Code, Detail and NextAction.
type Validation struct {
	Valid bool `json:"valid"`
	// Code: valid, expired_in_grace (still valid), not_found, product_mismatch, revoked,
	// subscription_unpaid, suspended, expired, lease_expired, activation_limit_reached, not_activated,
	// entitlements_missing.
	Code   string `json:"code"`
	Detail string `json:"detail"`
	// Status is the licence's: active, suspended, revoked or expired; nil when no licence is shown.
	Status    *string    `json:"status"`
	ExpiresAt *time.Time `json:"expires_at"`
	// Entitlements is the licence's effective set of feature codes.
	Entitlements []string `json:"entitlements"`
	// NextAction: none, activate, renew, contact_vendor, free_a_seat, update_payment, update_key.
	NextAction string `json:"next_action"`
	// CacheUntil is how long the app may trust this answer offline.
	CacheUntil time.Time  `json:"cache_until"`
	TrialEnd   *time.Time `json:"trial_end"`
	License    *License   `json:"license"`
	// Raw is the answer as the server sent it.
	Raw json.RawMessage `json:"-"`
}

// License is the licence as an app credential sees it (no vendor metadata).
type License struct {
	ID            string     `json:"id"`
	Key           string     `json:"key"`
	ProductID     string     `json:"product_id"`
	CustomerEmail *string    `json:"customer_email"`
	Status        string     `json:"status"`
	ExpiresAt     *time.Time `json:"expires_at"`
	Policy        *Policy    `json:"policy"`
	Entitlements  []string   `json:"entitlements"`
	CreatedAt     time.Time  `json:"created_at"`
}

// Policy is the part of the licence's policy an app acts on.
type Policy struct {
	// LeaseSeconds is the floating seat's lease; nil for node-locked activations (no heartbeats).
	LeaseSeconds       *int   `json:"lease_seconds"`
	MaxActivations     *int   `json:"max_activations"`
	RequireActivation  bool   `json:"require_activation"`
	GraceDays          int    `json:"grace_days"`
	MaxFileTTLDays     int    `json:"max_file_ttl_days"`
	ExpirationStrategy string `json:"expiration_strategy"`
}

// UpdateQuery is what CheckForUpdate asks the update feed.
type UpdateQuery struct {
	// Version is the version running now (Semantic Versioning): only newer releases are offered.
	Version string
	// Platform is macos, windows or linux.
	Platform string
	// Arch is x86_64 or aarch64.
	Arch string
	// Channel is the least stable channel the user accepts: stable (the default when ""), beta, alpha, dev.
	Channel string
}

// UpdateCheck is the update feed's answer: Release and Artifact are set when UpdateAvailable.
type UpdateCheck struct {
	UpdateAvailable bool            `json:"update_available"`
	Release         *Release        `json:"release,omitempty"`
	Artifact        *UpdateArtifact `json:"artifact,omitempty"`
}

// Release is a published release of the product.
type Release struct {
	ID           string     `json:"id"`
	ProductID    string     `json:"product_id"`
	Version      string     `json:"version"`
	Channel      string     `json:"channel"`
	Notes        *string    `json:"notes"`
	PublishedAt  *time.Time `json:"published_at"`
	Entitlements []string   `json:"entitlements"`
}

// UpdateArtifact is the file of an update that fits this machine. Check what you download against
// Size and SHA256 (and Signature) before installing it.
type UpdateArtifact struct {
	Filename string `json:"filename"`
	Platform string `json:"platform"`
	Arch     string `json:"arch"`
	// URL downloads it with the licence credential (a 303 to a link that works for 5 minutes).
	URL       string  `json:"url"`
	Size      int64   `json:"size"`
	SHA256    string  `json:"sha256"`
	Signature *string `json:"signature"`
}
