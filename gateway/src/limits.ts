import type { NextFunction, Request, Response } from 'express';
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { AppError, type Logger } from '@licensing/runtime';
import type { Principal } from './auth';

// Rate limits (the spec gives two statements; both hold):
//   "hour"   per account, by plan: free 100, pro 1,000, enterprise 10,000
//   "minute" per API key: 100 by default
// An operator may raise either for one account. Counters live in Redis, shared
// by every gateway; when Redis is unreachable or slow each gateway falls back
// to its own in-memory counters (rate-limiter-flexible's insurance limiter).

export const PLAN_HOURLY_QUOTA: Record<string, number> = { free: 100, pro: 1000, enterprise: 10_000 };
export const DEFAULT_PER_MINUTE = 100;

export interface LimitSettings {
  enabled: boolean;
  keyPrefix: string;
  minuteWindowS: number;
  hourWindowS: number;
  authFailuresPerMinute: number;
}

/** The effective limits of a caller: overrides win over the plan. */
export function limitsFor(p: Pick<Principal, 'plan' | 'perMinuteOverride' | 'perHourOverride'>): { minute: number; hour: number } {
  return { minute: p.perMinuteOverride || DEFAULT_PER_MINUTE, hour: p.perHourOverride || PLAN_HOURLY_QUOTA[p.plan] || PLAN_HOURLY_QUOTA.free };
}

export interface WindowState {
  name: 'minute' | 'hour';
  limit: number;
  windowS: number;
  remaining: number;
  resetS: number;
}

/** The window closest to running out: fewest requests left, then the later reset. */
export function bindingWindow(windows: WindowState[]): WindowState {
  return [...windows].sort((a, b) => a.remaining - b.remaining || b.resetS - a.resetS)[0];
}

/** IETF draft-ietf-httpapi-ratelimit-headers-10 fields plus the X-RateLimit-* trio for the same window. */
export function rateLimitHeaders(windows: WindowState[], nowS: number): Record<string, string> {
  const order: WindowState['name'][] = ['hour', 'minute'];
  const sorted = [...windows].sort((a, b) => order.indexOf(a.name) - order.indexOf(b.name));
  const w = bindingWindow(windows);
  return {
    'RateLimit-Policy': sorted.map((x) => `"${x.name}";q=${x.limit};w=${x.windowS}`).join(', '),
    RateLimit: `"${w.name}";r=${w.remaining};t=${w.resetS}`,
    'X-RateLimit-Limit': String(w.limit),
    'X-RateLimit-Remaining': String(w.remaining),
    // Epoch seconds, as GitHub and most clients expect.
    'X-RateLimit-Reset': String(nowS + w.resetS),
  };
}

export function rejectionDetail(w: WindowState, plan: string): string {
  return w.name === 'minute'
    ? `the per-minute limit of ${w.limit} requests for this API key was reached; retry in ${w.resetS} s`
    : `the hourly quota of ${w.limit} requests for this account (${plan} plan) was reached; retry in ${w.resetS} s`;
}

/** One named window whose limit differs per caller: one limiter per distinct limit, sharing the counters. */
class Window {
  private readonly limiters = new Map<number, RateLimiterRedis>();

  constructor(
    readonly name: string,
    readonly windowS: number,
    private readonly redis: Redis,
    private readonly keyPrefix: string,
  ) {}

  private limiter(limit: number): RateLimiterRedis {
    let l = this.limiters.get(limit);
    if (!l) {
      l = new RateLimiterRedis({
        storeClient: this.redis,
        // The same prefix for every limit: a changed plan keeps counting the same requests.
        keyPrefix: `${this.keyPrefix}:${this.name}`,
        points: limit,
        duration: this.windowS,
        rejectIfRedisNotReady: true,
        insuranceLimiter: new RateLimiterMemory({ keyPrefix: `${this.keyPrefix}:${this.name}:mem`, points: limit, duration: this.windowS }),
      });
      this.limiters.set(limit, l);
    }
    return l;
  }

  /** Counts one request; never throws for Redis (the insurance limiter answers instead). */
  async consume(key: string, limit: number): Promise<{ allowed: boolean; state: WindowState }> {
    let res: RateLimiterRes;
    let allowed = true;
    try {
      res = await this.limiter(limit).consume(key, 1);
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      res = rejection;
      allowed = false;
    }
    return { allowed, state: { name: this.name as WindowState['name'], limit, windowS: this.windowS, remaining: res.remainingPoints, resetS: Math.max(1, Math.ceil(res.msBeforeNext / 1000)) } };
  }

  async refund(key: string, limit: number): Promise<void> {
    await this.limiter(limit).reward(key, 1).catch(() => undefined);
  }

  /** Current state without counting; null when nothing was counted in this window yet. */
  async peek(key: string, limit: number): Promise<RateLimiterRes | null> {
    return this.limiter(limit).get(key).catch(() => null);
  }

  async count(key: string, limit: number): Promise<void> {
    await this.limiter(limit).consume(key, 1).catch(() => undefined);
  }
}

/**
 * Counts failed attempts per key (an address, an e-mail) in a fixed window and
 * says when a key has had too many: for throttling guessing, not for quotas.
 */
export class AttemptThrottle {
  private readonly window: Window;

  constructor(
    redis: Redis,
    keyPrefix: string,
    name: string,
    private readonly maxFailures: number,
    windowS: number,
  ) {
    this.window = new Window(name as 'minute', windowS, redis, keyPrefix);
  }

  /** Seconds until the key may try again, or null if it may try now. */
  async blockedFor(key: string): Promise<number | null> {
    const res = await this.window.peek(key, this.maxFailures);
    return res && res.consumedPoints >= this.maxFailures ? Math.max(1, Math.ceil(res.msBeforeNext / 1000)) : null;
  }

  recordFailure(key: string): Promise<void> {
    return this.window.count(key, this.maxFailures);
  }
}

export class RateLimits {
  private readonly minute: Window;
  private readonly hour: Window;
  private readonly authFailures: AttemptThrottle;

  constructor(
    readonly redis: Redis,
    readonly settings: LimitSettings,
  ) {
    this.minute = new Window('minute', settings.minuteWindowS, redis, settings.keyPrefix);
    this.hour = new Window('hour', settings.hourWindowS, redis, settings.keyPrefix);
    this.authFailures = new AttemptThrottle(redis, settings.keyPrefix, 'auth-failures', settings.authFailuresPerMinute, 60);
  }

  /** 'ok' while Redis answers; 'degraded' while each gateway counts on its own. */
  get redisStatus(): 'ok' | 'degraded' {
    return this.redis.status === 'ready' ? 'ok' : 'degraded';
  }

  /**
   * Both windows must pass. The minute is counted first; if it refuses, the
   * hour is not touched; if the hour refuses, the minute's point is given back.
   */
  async check(p: Principal): Promise<{ allowed: boolean; windows: WindowState[]; rejectedBy?: WindowState }> {
    const limits = limitsFor(p);
    const minute = await this.minute.consume(p.keyId, limits.minute);
    if (!minute.allowed) {
      const hourNow = await this.hour.peek(p.accountId, limits.hour);
      const hour: WindowState = { name: 'hour', limit: limits.hour, windowS: this.settings.hourWindowS, remaining: hourNow ? hourNow.remainingPoints : limits.hour, resetS: hourNow ? Math.max(1, Math.ceil(hourNow.msBeforeNext / 1000)) : this.settings.hourWindowS };
      return { allowed: false, windows: [hour, minute.state], rejectedBy: minute.state };
    }
    const hour = await this.hour.consume(p.accountId, limits.hour);
    if (!hour.allowed) {
      await this.minute.refund(p.keyId, limits.minute);
      return { allowed: false, windows: [hour.state, { ...minute.state, remaining: minute.state.remaining + 1 }], rejectedBy: hour.state };
    }
    return { allowed: true, windows: [hour.state, minute.state] };
  }

  authFailuresExhausted(ip: string): Promise<number | null> {
    return this.authFailures.blockedFor(ip);
  }

  recordAuthFailure(ip: string): Promise<void> {
    return this.authFailures.recordFailure(ip);
  }
}

/**
 * Before authentication: a client IP that sent too many bad keys in the last
 * minute is refused without looking at its key, so keys cannot be guessed at
 * speed. Every 401 it gets counts (see countAuthFailure, called by authenticate).
 */
export function throttleAuthFailures(limits: RateLimits, log: Logger) {
  return async (req: Request, res: Response, next: NextFunction) => {
    if (!limits.settings.enabled) return next();
    // req.ip: the client's address, from X-Forwarded-For only when the hop is a trusted proxy.
    const ip = req.ip ?? 'unknown';
    const retryAfter = await limits.authFailuresExhausted(ip);
    if (retryAfter !== null) {
      log.warn({ request_id: res.locals.requestId, ip }, 'client throttled after repeated authentication failures');
      res.setHeader('Retry-After', String(retryAfter));
      res.locals.rateLimitWindow = 'auth_failures';
      throw new AppError('rate_limited', `too many requests with a missing or invalid API key from this address; retry in ${retryAfter} s`);
    }
    next();
  };
}

/** What authenticate() calls before answering 401: one more failure for the client's address. */
export function countAuthFailure(limits: RateLimits) {
  return async (req: Request): Promise<void> => {
    if (!limits.settings.enabled) return;
    await limits.recordAuthFailure(req.ip ?? 'unknown').catch(() => undefined);
  };
}

/** After authentication: counts the request in both windows and sets the headers, or refuses it with 429. */
export function enforceRateLimits(limits: RateLimits) {
  return async (_req: Request, res: Response, next: NextFunction) => {
    if (!limits.settings.enabled) return next();
    const p = res.locals.principal as Principal;
    const verdict = await limits.check(p);
    res.set(rateLimitHeaders(verdict.windows, Math.floor(Date.now() / 1000)));
    if (verdict.rejectedBy) {
      res.setHeader('Retry-After', String(verdict.rejectedBy.resetS));
      res.locals.rateLimitWindow = verdict.rejectedBy.name;
      throw new AppError('rate_limited', rejectionDetail(verdict.rejectedBy, p.plan));
    }
    next();
  };
}
