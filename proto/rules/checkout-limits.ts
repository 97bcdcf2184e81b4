// The limits of a checkout session's request, declared once for the gateway's request shapes and the
// checkout service's checks.

/** A session's expires_in_minutes: from this... */
export const CHECKOUT_EXPIRES_MIN_MINUTES = 30;
/** ...to this, which is also its default (Stripe allows 30 minutes to 24 hours: the same range). */
export const CHECKOUT_EXPIRES_MAX_MINUTES = 1440;

/** A URL a vendor gives (a checkout's success_url and cancel_url, a webhook endpoint's url). */
export const URL_MAX_LENGTH = 2048;

/** How far past its subscription's clock one test-clock advance may go. */
export const TEST_CLOCK_MAX_ADVANCE_YEARS = 5;
