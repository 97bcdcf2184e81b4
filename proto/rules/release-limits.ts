// The limits of a product's releases, declared once for the gateway's request shapes and the product
// service's checks (which judge every rule of a release: its version, channel, notes and entitlements).

/**
 * A release's version: Semantic Versioning 2.0.0, the regular expression semver.org gives (numbers
 * without leading zeros, a pre-release tag after `-`, build metadata after `+`); groups 1 to 5 are
 * major, minor, patch, pre-release and build. No `v` prefix: `v1.0.0` is no version.
 */
export const SEMVER_PATTERN = String.raw`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$`;

/** A release's version has at most this many characters. */
export const RELEASE_VERSION_MAX_LENGTH = 64;
/** A release's notes. */
export const RELEASE_NOTES_MAX_LENGTH = 10_000;
/** The most entitlement codes a release may require (each an entitlement code as a policy's). */
export const RELEASE_ENTITLEMENTS_MAX = 50;

export const releaseLimits = {
  /**
   * Releases one product may have (409 for one more). A product's releases are listed in version
   * order, which no index gives, so a listing reads the product's whole list (its ids and versions)
   * and pages it in memory: this bound is what keeps that read small.
   */
  per_product: 1000,
} as const;
