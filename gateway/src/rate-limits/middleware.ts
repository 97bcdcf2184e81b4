import type { NextFunction, Request, Response } from 'express';
import { AppError, addressKey, type Logger } from '@licensing/runtime';
import { appRouteOf } from '../auth/app-routes';
import { namedLicenseDigest } from '../auth/license-credentials';
import type { Principal } from '../auth/principal';
import { rejectionDetail } from './budgets';
import { rateLimitHeaders } from './headers';
import type { RateLimits, RateVerdict } from './limiter';

// The Express side of rate limiting. A refusal names what refused it in res.locals.rateLimitWindow,
// the `window` label of licensing_rate_limit_rejections_total (http/metrics.ts).

/**
 * What authenticate() calls before answering 401: one more failure for the
 * client's address, counted and checked in one atomic step. Only failures are
 * counted and only failures are refused: a valid key from the same address
 * (another app behind the same NAT) is never throttled by it.
 */
export function countAuthFailure(limits: RateLimits, log: Logger) {
  return async (req: Request, res: Response): Promise<void> => {
    if (!limits.settings.enabled) return;
    // req.ip: the client's address, from X-Forwarded-For only when the hop is a trusted proxy; IPv6 by its /64.
    const ip = addressKey(req.ip);
    const retryAfter = await limits.authFailure(ip);
    if (retryAfter === null) return;
    log.warn({ ip }, 'client throttled after repeated authentication failures');
    res.setHeader('Retry-After', String(retryAfter));
    res.locals.rateLimitWindow = 'auth_failures';
    throw new AppError(
      'rate_limited',
      `too many requests with a missing or invalid API key (or an unknown licence key) from this address; retry in ${retryAfter} s`,
    );
  };
}

/**
 * Which licence's minute a request spends (budgets.ts): a licence credential's own (the limiter knows
 * it); for a validate-scope key, the licence its path or query names, 'body' when only its body
 * does (POST /api/v1/keys/validate: counted once the body is read), undefined when none does.
 */
function namedLicense(req: Request, p: Principal): string | 'body' | undefined {
  if (p.credential === 'license' || p.scope !== 'validate') return undefined;
  const match = appRouteOf(req.method, `${req.baseUrl}${req.path}`);
  if (!match) return undefined;
  if (match.route.namedIn === 'body') return 'body';
  const sent = match.route.namedIn === 'query' ? req.query.license_key : match.key;
  return typeof sent === 'string' ? namedLicenseDigest(sent) : undefined;
}

/**
 * After authentication: counts the request in both budgets and sets the headers, or refuses it with
 * 429. An unknown licence key has no account to count in: the failure throttle of its address counted
 * it (authenticate.ts). A validate-scope key's validation whose licence is in the body is counted by
 * enforceRateLimitsAfterBody(), once the body is read.
 */
export function enforceRateLimits(limits: RateLimits) {
  const count = rateLimitCounter(limits);
  return (req: Request, res: Response, next: NextFunction) => {
    if (!limits.settings.enabled) return next();
    const p = res.locals.principal as Principal;
    if (!p.accountId) return next();
    const named = namedLicense(req, p);
    if (named === 'body') {
      res.locals.rateLimitAfterBody = true;
      return next();
    }
    return count(res, p, named, next);
  };
}

/** The count enforceRateLimits() left for after the body (the licence named in its `key`). */
export function enforceRateLimitsAfterBody(limits: RateLimits) {
  const count = rateLimitCounter(limits);
  return (req: Request, res: Response, next: NextFunction) => {
    if (!res.locals.rateLimitAfterBody) return next();
    const sent = (req.body as { key?: unknown } | undefined)?.key;
    return count(
      res,
      res.locals.principal as Principal,
      typeof sent === 'string' ? namedLicenseDigest(sent) : undefined,
      next,
    );
  };
}

function rateLimitCounter(limits: RateLimits) {
  const apply = (res: Response, p: Principal, verdict: RateVerdict) => {
    res.set(rateLimitHeaders(verdict.budgets, Math.floor(Date.now() / 1000), verdict.policy));
    if (verdict.rejectedBy) {
      res.setHeader('Retry-After', String(verdict.rejectedBy.resetS));
      res.locals.rateLimitWindow = verdict.rejectedBy.name;
      throw new AppError('rate_limited', rejectionDetail(verdict.rejectedBy, p.plan));
    }
  };
  return (res: Response, p: Principal, licenseDigest: string | undefined, next: NextFunction) => {
    const verdict = limits.check(p, licenseDigest);
    if (!(verdict instanceof Promise)) {
      apply(res, p, verdict);
      return next();
    }
    return verdict.then((v) => {
      apply(res, p, v);
      next();
    });
  };
}
