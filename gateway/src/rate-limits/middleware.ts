import type { NextFunction, Request, Response } from 'express';
import { AppError, addressKey, type Logger } from '@licensing/runtime';
import { appRouteOf } from '../auth/app-routes';
import { namedLicenseDigest } from '../auth/license-credentials';
import type { Principal } from '../auth/principal';
import { namesNothing, rejectionDetail } from '@licensing/runtime';
import { rateLimitHeaders } from '@licensing/runtime';
import type { AppRequest, RateLimits, RateVerdict } from '@licensing/runtime';

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

/** An activation id as a heartbeat's own budget may be named by (anything else spends the minutes). */
const ACTIVATION_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * What an app request names, for its budgets (budgets.ts): the client's address; for a validate-scope
 * key, the licence its path or query names ('body' when only its body does: POST
 * /api/v1/keys/validate, counted once the body is read); for a heartbeat, its activation.
 */
function appRequestOf(req: Request, p: Principal): (AppRequest & { inBody?: true }) | undefined {
  if (p.scope !== 'validate') return undefined;
  const app: AppRequest & { inBody?: true } = { address: addressKey(req.ip) };
  const match = appRouteOf(req.method, `${req.baseUrl}${req.path}`);
  if (!match) return app;
  if (match.route.heartbeat && match.activationId !== undefined && ACTIVATION_ID.test(match.activationId))
    app.heartbeatOf = match.activationId;
  if (p.credential === 'license') return app;
  if (match.route.namedIn === 'body') app.inBody = true;
  else {
    const sent = match.route.namedIn === 'query' || match.route.keyInQuery ? req.query.license_key : match.key;
    if (typeof sent === 'string') app.licenseDigest = namedLicenseDigest(sent);
  }
  return app;
}

/**
 * After authentication: counts the request in its budgets and sets the headers, or refuses it with
 * 429. A validate-scope key's validation whose licence is in the body is counted by
 * enforceRateLimitsAfterBody(), once the body is read. An app request whose answer names nothing
 * there (a 404, a validation answering not_found or revoked: res.locals.validationCode) gives its
 * "app_hour" back and spends its credential's "unknown_minute" instead.
 */
export function enforceRateLimits(limits: RateLimits) {
  const count = rateLimitCounter(limits);
  return (req: Request, res: Response, next: NextFunction) => {
    if (!limits.settings.enabled) return next();
    const p = res.locals.principal as Principal;
    const app = appRequestOf(req, p);
    if (app?.inBody) {
      res.locals.rateLimitAfterBody = app;
      return next();
    }
    return count(res, p, app, next);
  };
}

/** The count enforceRateLimits() left for after the body (the licence named in its `key`). */
export function enforceRateLimitsAfterBody(limits: RateLimits) {
  const count = rateLimitCounter(limits);
  return (req: Request, res: Response, next: NextFunction) => {
    const app = res.locals.rateLimitAfterBody as AppRequest | undefined;
    if (!app) return next();
    const sent = (req.body as { key?: unknown } | undefined)?.key;
    return count(
      res,
      res.locals.principal as Principal,
      { address: app.address, licenseDigest: typeof sent === 'string' ? namedLicenseDigest(sent) : undefined },
      next,
    );
  };
}

function rateLimitCounter(limits: RateLimits) {
  const apply = (res: Response, p: Principal, verdict: RateVerdict, app: AppRequest | undefined) => {
    res.set(rateLimitHeaders(verdict.budgets, Math.floor(Date.now() / 1000), verdict.policy));
    if (verdict.rejectedBy) {
      res.setHeader('Retry-After', String(verdict.rejectedBy.resetS));
      res.locals.rateLimitWindow = verdict.rejectedBy.name;
      throw new AppError('rate_limited', rejectionDetail(verdict.rejectedBy, p.plan));
    }
    if (app)
      res.once('finish', () => {
        const code = res.locals.validationCode as string | undefined;
        if (res.statusCode === 404 || (code !== undefined && namesNothing(code))) limits.namedNothing(p, app);
      });
  };
  return (res: Response, p: Principal, app: AppRequest | undefined, next: NextFunction) => {
    const verdict = limits.check(p, app);
    if (!(verdict instanceof Promise)) {
      apply(res, p, verdict, app);
      return next();
    }
    return verdict.then((v) => {
      apply(res, p, v, app);
      next();
    });
  };
}
