import type { Response } from 'express';
import { rateLimitHeaders, sha256, type Principal, type RateLimits, type RateVerdict } from '@licensing/runtime';
import { layout } from './pages';
import type { DashboardSession } from './session';
import { html, sendPage, type Html } from '../kit/template';

// The signed-in dashboard is metered like the API: every signed-in page and
// form (each reaches the services) spends the account's hourly quota, the same
// counter full-scope API keys spend, and a per-minute limit of its own per
// session, as an API key has. Otherwise a free account could script unlimited
// licences, products and keys through the dashboard. Not counted: the static
// assets, the sign-in and sign-up pages (throttled on their own), pages that
// need no session, and signing out (always possible).

/** A session as the rate limits see it: the account's limits, and its own minute window. */
export function sessionPrincipal(s: DashboardSession): Principal {
  return {
    accountId: s.accountId,
    plan: s.plan,
    perMinuteOverride: s.perMinuteLimit,
    perHourOverride: s.perHourLimit,
    // A digest of the cookie, never the cookie itself, names the session's minute window in Redis.
    keyId: `session_${sha256(`rate-limit:${s.token}`, 'hex').slice(0, 32)}`,
    scope: 'full',
    credential: 'api_key',
  };
}

/** The dashboard's 429 page: which budget ran out, and when to come back. */
export function rateLimitedPage(s: DashboardSession, refused: NonNullable<RateVerdict['rejectedBy']>): Html {
  const wait = refused.resetS < 120 ? `${refused.resetS} seconds` : `${Math.ceil(refused.resetS / 60)} minutes`;
  const why =
    refused.name === 'minute'
      ? `This session made more than ${refused.limit.toLocaleString('en')} requests in a minute.`
      : `This account has used its ${refused.limit.toLocaleString('en')} requests for this hour (${s.plan} plan). The dashboard and API requests with full-scope keys share that quota; apps validating with validate-scope keys are not affected.`;
  return layout(
    'Too many requests',
    html`<div class="card narrow" role="alert">
  <p>${why}</p>
  <p>Nothing was changed. Try again in <strong data-testid="retry-after">${wait}</strong>.</p>
  <p><a href="/dashboard/settings">Plan and limits</a></p>
</div>`,
    s,
  );
}

/**
 * Counts one signed-in request; true when it may go on. When a limit is
 * reached it answers the 429 page itself (with Retry-After and the same
 * rate-limit headers as the API) and returns false.
 */
export function sessionMeter(limits: RateLimits) {
  return async (res: Response, s: DashboardSession): Promise<boolean> => {
    if (!limits.settings.enabled) return true;
    const verdict = await limits.check(sessionPrincipal(s));
    res.set(rateLimitHeaders(verdict.budgets, Math.floor(Date.now() / 1000), verdict.policy));
    if (!verdict.rejectedBy) return true;
    res.setHeader('Retry-After', String(verdict.rejectedBy.resetS));
    res.locals.rateLimitWindow = verdict.rejectedBy.name;
    sendPage(res, rateLimitedPage(s, verdict.rejectedBy), 429);
    return false;
  };
}
