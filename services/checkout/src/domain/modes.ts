// Which payment provider runs, and whether that is allowed: pure rules,
// checked once at start-up (main.ts) so a misconfigured checkout never serves.

export interface PaymentModeSettings {
  NODE_ENV: string;
  PAYMENT_PROVIDER: string;
  CHECKOUT_TEST_MODE: boolean;
  STRIPE_SECRET_KEY: string;
  STRIPE_WEBHOOK_SECRET: string;
  STRIPE_API_URL: string;
}

/**
 * A Stripe secret not given yet: empty, or the placeholder deploy/make-secrets.sh writes when it has no
 * key ("replace-me: …"). A value that is given but malformed is a mistake, and still refuses to start.
 */
const notGiven = (secret: string) => secret.trim() === '' || /^replace-me\b/.test(secret.trim());

/**
 * Stripe chosen and neither of its secrets given: checkout runs without payments (new sessions are refused
 * with a clear 503, /api/v1/status says "payments: not configured") until an operator gives the keys and
 * restarts it, so a fresh deployment comes up without Stripe keys instead of waiting on checkout forever.
 */
export const paymentsNotConfigured = (c: PaymentModeSettings) =>
  c.PAYMENT_PROVIDER === 'stripe' && notGiven(c.STRIPE_SECRET_KEY) && notGiven(c.STRIPE_WEBHOOK_SECRET);

/** What a refused session, and the Stripe webhook, say while payments are not configured. */
export const NOT_CONFIGURED_MESSAGE =
  'payments are not configured: give STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET (deploy/make-secrets.sh, docs/operations.md "Payments") and restart the checkout service';

/** Every reason these settings cannot run, for one start-up message (empty: fine). */
export function paymentModeProblems(c: PaymentModeSettings): string[] {
  const problems: string[] = [];
  const production = c.NODE_ENV === 'production';
  if (paymentsNotConfigured(c)) return problems;
  if (c.PAYMENT_PROVIDER === 'test' && production && !c.CHECKOUT_TEST_MODE) {
    problems.push(
      'PAYMENT_PROVIDER=test in production: the test card would issue real licences without payment. Set PAYMENT_PROVIDER=stripe, or CHECKOUT_TEST_MODE=true to run test mode on purpose',
    );
  }
  if (c.PAYMENT_PROVIDER === 'stripe') {
    if (!/^(sk|rk)_(live|test)_[A-Za-z0-9_]+$/.test(c.STRIPE_SECRET_KEY))
      problems.push(
        'PAYMENT_PROVIDER=stripe needs STRIPE_SECRET_KEY (or STRIPE_SECRET_KEY_FILE): a Stripe secret key, sk_live_… or sk_test_…',
      );
    // A test key lets Stripe's test cards "pay", and a paid session issues a real licence: in
    // production that is the same hole as the built-in test mode, closed the same way.
    else if (production && !keyIsLive(c.STRIPE_SECRET_KEY) && !c.CHECKOUT_TEST_MODE)
      problems.push(
        'STRIPE_SECRET_KEY is a Stripe test key (sk_test_…/rk_test_…) in production: test cards would issue real licences without payment. Give the live key (sk_live_…), or set CHECKOUT_TEST_MODE=true to run a staging stack on purpose',
      );
    if (!/^whsec_[A-Za-z0-9+/=_-]+$/.test(c.STRIPE_WEBHOOK_SECRET))
      problems.push(
        'PAYMENT_PROVIDER=stripe needs STRIPE_WEBHOOK_SECRET (or STRIPE_WEBHOOK_SECRET_FILE): the whsec_… signing secret of the webhook endpoint',
      );
    if (c.STRIPE_API_URL && production)
      problems.push('STRIPE_API_URL is for stripe-mock in development and tests; production talks to api.stripe.com');
    if (c.STRIPE_API_URL && !/^https?:\/\/[^/]+\/?$/.test(c.STRIPE_API_URL))
      problems.push('STRIPE_API_URL must be http(s)://host:port');
  }
  return problems;
}

/** Whether a payment is real money: only a live Stripe key takes real payments. */
export const keyIsLive = (secretKey: string) => /^(sk|rk)_live_/.test(secretKey);
