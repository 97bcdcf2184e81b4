// The limits of a webhook endpoint's request, declared once for the gateway's request shapes and the
// webhook service's checks (its url is checkout-limits.ts's URL_MAX_LENGTH).

/** An endpoint's description. */
export const WEBHOOK_DESCRIPTION_MAX_LENGTH = 500;
