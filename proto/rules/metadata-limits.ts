// Vendor metadata (a small flat map of strings on a licence or a checkout session), Stripe-style: its limits,
// declared once for the gateway's request shapes and the licence and checkout services' checks.

/** Entries one map holds at most. */
export const METADATA_MAX_ENTRIES = 50;
/** Characters one value holds at most. */
export const METADATA_VALUE_MAX_LENGTH = 500;
