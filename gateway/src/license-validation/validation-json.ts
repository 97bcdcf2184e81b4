import type { ValidationAnswer } from './validator';

// Part of a validation's flow through license-validation/, drawn in validator.ts's header.

/** REST shape of GET /licenses/validate: written by the Express route (routes/licenses.ts) and the fast path alike. */
export const validationJson = (out: ValidationAnswer) => ({
  valid: out.valid,
  code: out.code,
  detail: out.detail,
  product_id: out.license?.product_id ?? null,
  customer_email: out.license?.customer_email || null,
  status: out.license?.status ?? null,
  expires_at: out.license?.expires_at || null,
  entitlements: out.license?.entitlements ?? [],
  next_action: out.next_action,
  cache_until: out.cache_until,
  trial_end: trialEndOf(out),
});

/** A trialing subscription licence's trial end (null otherwise): the app can show the days left. */
export const trialEndOf = (out: ValidationAnswer): string | null =>
  out.license?.subscription?.status === 'trialing' ? out.license.subscription.trial_end || null : null;
