import type { NextFunction, Request, Response } from 'express';
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { AppError, addressKey, type Logger } from '@licensing/runtime';
import type { Plan } from '@licensing/proto';
import type { Principal } from '../auth/authenticate';
import { QuotaCounter, type Counted, type LocalWindow, type WindowSpec } from './quota';

// Rate limits (docs/api.md): two windows count each request, its key's minute and one of its account's hours:
//   "hour"     per account, by plan: free 100, pro 1,000, enterprise 10,000 (full-scope keys)
//   "minute"   per API key: 100 by default
//   "app_hour" per account: app traffic (validate-scope keys, which ship inside
//              customers' apps) has an hourly allowance of its own, ten times the
//              hourly quota, and never spends the quota above: anyone holding a
//              copy of the app could otherwise lock the vendor out of the API.
// An operator may raise either for one account (a raised hour raises the app
// allowance with it). Counters live in Redis, shared by every gateway, touched
// at most once per request (quota.ts); when Redis is unreachable or slow each
// gateway falls back to its own counts.

/** Each plan's hourly quota: a plan added to proto/rules/vocabulary.ts does not compile without one. */
export const PLAN_HOURLY_QUOTA: Record<Plan, number> = { free: 100, pro: 1000, enterprise: 10_000 };
/** App traffic's hourly allowance is this many times the account's hourly quota (free 1,000, pro 10,000, enterprise 100,000). */
export const APP_ALLOWANCE_FACTOR = 10;
export const DEFAULT_PER_MINUTE = 100;

/** The budgets of one account: which hourly window a request spends depends on who sends it. */
export interface AccountLimits {
  /** Per API key (and per dashboard session), per minute. */
  minute: number;
  /** Per account, per hour: the vendor's own traffic (full-scope keys, the dashboard). */
  hour: number;
  /** Per account, per hour: app traffic (validate-scope keys). */
  appHour: number;
}

export interface LimitSettings {
  enabled: boolean;
  keyPrefix: string;
  minuteWindowS: number;
  hourWindowS: number;
  authFailuresPerMinute: number;
  /** Share of a large limit one gateway may admit between syncs with Redis (0 = ask Redis on every request). */
  localShare: number;
}

/** The effective limits of a caller: overrides win over the plan. */
export function limitsFor(p: Pick<Principal, 'plan' | 'perMinuteOverride' | 'perHourOverride'>): AccountLimits {
  const hour = p.perHourOverride || PLAN_HOURLY_QUOTA[p.plan as Plan] || PLAN_HOURLY_QUOTA.free;
  return { minute: p.perMinuteOverride || DEFAULT_PER_MINUTE, hour, appHour: hour * APP_ALLOWANCE_FACTOR };
}

/** App traffic: requests that spend the app allowance, not the account's hourly quota. */
export const isAppTraffic = (p: Pick<Principal, 'scope'>): boolean => p.scope === 'validate';

export type WindowName = 'minute' | 'hour' | 'app_hour';

export interface WindowState {
  name: WindowName;
  limit: number;
  windowS: number;
  remaining: number;
  resetS: number;
}

/** The window closest to running out: fewest requests left, then the later reset. */
export function bindingWindow(windows: WindowState[]): WindowState {
  let best = windows[0];
  for (const w of windows)
    if (w.remaining < best.remaining || (w.remaining === best.remaining && w.resetS > best.resetS)) best = w;
  return best;
}

/** RateLimit-Policy: both windows, the hour (the account's quota or its app allowance) first; the same for every request of one caller. */
export function rateLimitPolicy(windows: Pick<WindowState, 'name' | 'limit' | 'windowS'>[]): string {
  const hour = windows.find((x) => x.name !== 'minute');
  const minute = windows.find((x) => x.name === 'minute');
  const policy = (x: Pick<WindowState, 'name' | 'limit' | 'windowS'>) => `"${x.name}";q=${x.limit};w=${x.windowS}`;
  return hour && minute ? `${policy(hour)}, ${policy(minute)}` : windows.map(policy).join(', ');
}

/**
 * IETF draft-ietf-httpapi-ratelimit-headers-10 fields plus the X-RateLimit-* trio for the same window
 * (on every request: no sorting), appended to a flat [name, value, …] list as writeHead takes it.
 */
export function pushRateLimitHeaders(
  out: string[],
  windows: WindowState[],
  nowS: number,
  policy = rateLimitPolicy(windows),
): string[] {
  const w = bindingWindow(windows);
  out.push(
    'RateLimit-Policy',
    policy,
    'RateLimit',
    `"${w.name}";r=${w.remaining};t=${w.resetS}`,
    'X-RateLimit-Limit',
    String(w.limit),
    'X-RateLimit-Remaining',
    String(w.remaining),
    // Epoch seconds, as GitHub and most clients expect.
    'X-RateLimit-Reset',
    String(nowS + w.resetS),
  );
  return out;
}

/** The same fields as an object (Express's res.set). */
export function rateLimitHeaders(windows: WindowState[], nowS: number, policy?: string): Record<string, string> {
  const list = pushRateLimitHeaders([], windows, nowS, policy);
  const headers: Record<string, string> = {};
  for (let i = 0; i < list.length; i += 2) headers[list[i]] = list[i + 1];
  return headers;
}

export function rejectionDetail(w: WindowState, plan: string): string {
  if (w.name === 'minute')
    return `the per-minute limit of ${w.limit} requests for this API key was reached; retry in ${w.resetS} s`;
  if (w.name === 'app_hour')
    return `the hourly allowance of ${w.limit} app requests (validate-scope keys) for this account (${plan} plan) was reached; retry in ${w.resetS} s`;
  return `the hourly quota of ${w.limit} requests for this account (${plan} plan) was reached; retry in ${w.resetS} s`;
}

/** A fixed window of failed attempts in Redis (rate-limiter-flexible), with an in-memory insurance limiter. */
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
        keyPrefix: `${this.keyPrefix}:${this.name}`,
        points: limit,
        duration: this.windowS,
        rejectIfRedisNotReady: true,
        insuranceLimiter: new RateLimiterMemory({
          keyPrefix: `${this.keyPrefix}:${this.name}:mem`,
          points: limit,
          duration: this.windowS,
        }),
      });
      this.limiters.set(limit, l);
    }
    return l;
  }

  /** Counts one attempt and says, in the same atomic step, whether it was over the limit. */
  async hit(key: string, limit: number): Promise<{ allowed: boolean; retryAfterS: number }> {
    try {
      const res = await this.limiter(limit).consume(key, 1);
      return { allowed: true, retryAfterS: Math.max(1, Math.ceil(res.msBeforeNext / 1000)) };
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) return { allowed: true, retryAfterS: 0 };
      return { allowed: false, retryAfterS: Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)) };
    }
  }

  /** Gives one counted attempt back (it turned out to be a success). */
  async giveBack(key: string, limit: number): Promise<void> {
    await this.limiter(limit)
      .reward(key, 1)
      .catch(() => undefined);
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
    this.window = new Window(name, windowS, redis, keyPrefix);
  }

  // There is deliberately no "check, then count later": parallel requests would
  // all pass the check before any of them was counted. Every attempt is
  // counted and judged in one atomic step; one that turns out to be a success
  // may be given back afterwards.

  /** Counts one attempt (or failure) and, atomically with it, says how long to wait if that was one too many (null: not throttled). */
  async fail(key: string): Promise<number | null> {
    const { allowed, retryAfterS } = await this.window.hit(key, this.maxFailures);
    return allowed ? null : retryAfterS;
  }

  /** Takes back an attempt counted by fail() that succeeded (a right password is not a guess). */
  forgive(key: string): Promise<void> {
    return this.window.giveBack(key, this.maxFailures);
  }
}

export interface RateVerdict {
  windows: WindowState[];
  rejectedBy?: WindowState;
  /** RateLimit-Policy for these windows (worked out once per caller). */
  policy: string;
}

interface LimitSpec {
  /** The per-minute limit and the hourly one this caller spends (the quota, or the app allowance). */
  limits: { minute: number; hour: number };
  /** Which hourly window that is. */
  hourName: 'hour' | 'app_hour';
  windows: [WindowSpec, WindowSpec];
  policy: string;
}

const windowState = (
  name: WindowState['name'],
  w: LocalWindow,
  limit: number,
  windowS: number,
  nowMs: number,
): WindowState => ({
  name,
  limit,
  windowS,
  remaining: Math.max(0, limit - w.count - w.pending),
  resetS: Math.max(1, Math.ceil((w.resetAt - nowMs) / 1000)),
});

export class RateLimits {
  private readonly quota: QuotaCounter;
  private readonly authFailures: AttemptThrottle;

  constructor(
    readonly redis: Redis,
    readonly settings: LimitSettings,
  ) {
    this.quota = new QuotaCounter(redis, settings.localShare);
    this.authFailures = new AttemptThrottle(
      redis,
      settings.keyPrefix,
      'auth-failures',
      settings.authFailuresPerMinute,
      60,
    );
  }

  /** 'ok' while Redis answers; 'degraded' while each gateway counts on its own. */
  get redisStatus(): 'ok' | 'degraded' {
    return this.redis.status === 'ready' ? 'ok' : 'degraded';
  }

  /**
   * Both windows must pass: the minute is counted first; if it refuses, the
   * hour is not touched; if the hour refuses, the minute's point is given back.
   * Answers synchronously when the counts in memory decide (see quota.ts).
   */
  check(p: Principal): RateVerdict | Promise<RateVerdict> {
    const spec = this.specOf(p);
    const counted = this.quota.count(...spec.windows);
    return counted instanceof Promise ? counted.then((c) => this.verdict(c, spec)) : this.verdict(counted, spec);
  }

  /** Admits the request only if memory alone decides it (see quota.ts); undefined = nothing counted, use check(). */
  checkLocally(p: Principal): RateVerdict | undefined {
    const spec = this.specOf(p);
    const counted = this.quota.countLocally(...spec.windows);
    return counted && this.verdict(counted, spec);
  }

  /** A principal's limits and window keys, worked out once per principal (the auth cache hands out the same object). */
  private readonly specs = new WeakMap<Principal, LimitSpec>();

  private specOf(p: Principal): LimitSpec {
    let spec = this.specs.get(p);
    if (!spec) {
      const all = limitsFor(p);
      const hourName = isAppTraffic(p) ? 'app_hour' : 'hour';
      const limits = { minute: all.minute, hour: hourName === 'app_hour' ? all.appHour : all.hour };
      const policy = rateLimitPolicy([
        { name: hourName, limit: limits.hour, windowS: this.settings.hourWindowS },
        { name: 'minute', limit: limits.minute, windowS: this.settings.minuteWindowS },
      ]);
      spec = { limits, hourName, windows: this.windowsOf(p, limits, hourName), policy };
      this.specs.set(p, spec);
    }
    return spec;
  }

  private windowsOf(
    p: Principal,
    limits: { minute: number; hour: number },
    hourName: LimitSpec['hourName'],
  ): [WindowSpec, WindowSpec] {
    return [
      {
        key: `${this.settings.keyPrefix}:minute:${p.keyId}`,
        limit: limits.minute,
        windowMs: this.settings.minuteWindowS * 1000,
      },
      {
        key: this.hourKey(p.accountId, hourName),
        limit: limits.hour,
        windowMs: this.settings.hourWindowS * 1000,
      },
    ];
  }

  /** The account's hourly counter in Redis: the quota ("hour") or the app allowance ("app_hour"). */
  private hourKey(accountId: string, hourName: LimitSpec['hourName']): string {
    return `${this.settings.keyPrefix}:${hourName}:${accountId}`;
  }

  private verdict(c: Counted, { limits, hourName, policy }: LimitSpec): RateVerdict {
    const now = Date.now();
    const windows = [
      windowState(hourName, c.hour, limits.hour, this.settings.hourWindowS, now),
      windowState('minute', c.minute, limits.minute, this.settings.minuteWindowS, now),
    ];
    const refused = c.refusedBy === 'hour' ? hourName : c.refusedBy;
    return { windows, rejectedBy: refused ? windows.find((w) => w.name === refused) : undefined, policy };
  }

  /**
   * Requests counted so far in the account's hourly window, as Redis holds
   * them (the dashboard's usage meter; counts a gateway admitted from memory
   * arrive within its sync interval): the quota, or with `app` the app
   * allowance. Undefined while Redis is away.
   */
  async hourlyUsage(accountId: string, app = false): Promise<{ used: number; resetsInS: number } | undefined> {
    if (this.redis.status !== 'ready') return undefined;
    try {
      const key = this.hourKey(accountId, app ? 'app_hour' : 'hour');
      const [used, pttl] = await Promise.all([this.redis.get(key), this.redis.pttl(key)]);
      return { used: Number(used ?? 0), resetsInS: pttl > 0 ? Math.ceil(pttl / 1000) : this.settings.hourWindowS };
    } catch {
      return undefined;
    }
  }

  /** Counts a failed authentication of the address; seconds to wait when it has had too many, else null. */
  authFailure(ip: string): Promise<number | null> {
    return this.authFailures.fail(ip).catch(() => null);
  }

  close(): Promise<void> {
    return this.quota.close();
  }
}

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

/** After authentication: counts the request in both windows and sets the headers, or refuses it with 429. */
export function enforceRateLimits(limits: RateLimits) {
  const apply = (res: Response, p: Principal, verdict: RateVerdict) => {
    res.set(rateLimitHeaders(verdict.windows, Math.floor(Date.now() / 1000), verdict.policy));
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
