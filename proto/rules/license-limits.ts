// The limits of a licence's requests that cross the gateway–service boundary, each declared here once:
// the gateway's request shapes (and through them the OpenAPI document and the SDK's types) and the licence
// service's own checks read the same constant, so the two cannot drift apart. (The key's own length is
// license-key.ts's MAX_LICENSE_KEY_LENGTH; a batch's metadata is metadata-limits.ts's.)

/** Licences one batch (POST /api/v1/licenses/batch) issues at most. */
export const BATCH_MAX_ITEMS = 1000;

/** Hours a rerolled licence's old key may keep validating (answering next_action update_key). */
export const REROLL_GRACE_HOURS_MAX = 720;

/** Days a licence file is valid offline when none are asked for. */
export const FILE_TTL_DEFAULT_DAYS = 30;
/** Days a licence file may be valid offline at most (an app credential's cap is its policy's max_file_ttl_days). */
export const FILE_TTL_MAX_DAYS = 365;

/** A machine's fingerprint: 1 to this many printable ASCII characters. */
export const FINGERPRINT_MAX_LENGTH = 200;
/** An activation's optional name. */
export const ACTIVATION_NAME_MAX_LENGTH = 100;

/** Seats one licence may be bought with (a checkout's quantity, a subscription's): its max_activations times this. */
export const SEATS_MAX = 1000;

/** Validations one ValidateLicenses call carries at most (the gateway's batched lookups stay below it). */
export const MAX_VALIDATIONS_PER_CALL = 256;
