import type { NextFunction, Request, Response } from 'express';
import { AppError, addressKey, type Logger } from '@licensing/runtime';
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
      `too many requests with a missing or invalid API key from this address; retry in ${retryAfter} s`,
    );
  };
}

/** After authentication: counts the request in both budgets and sets the headers, or refuses it with 429. */
export function enforceRateLimits(limits: RateLimits) {
  const apply = (res: Response, p: Principal, verdict: RateVerdict) => {
    res.set(rateLimitHeaders(verdict.budgets, Math.floor(Date.now() / 1000), verdict.policy));
    if (verdict.rejectedBy) {
      res.setHeader('Retry-After', String(verdict.rejectedBy.resetS));
      res.locals.rateLimitWindow = verdict.rejectedBy.name;
      throw new AppError('rate_limited', rejectionDetail(verdict.rejectedBy, p.plan));
    }
  };
  return (_req: Request, res: Response, next: NextFunction) => {
    if (!limits.settings.enabled) return next();
    const p = res.locals.principal as Principal;
    const verdict = limits.check(p);
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
