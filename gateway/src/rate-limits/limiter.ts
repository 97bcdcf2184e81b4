import type { Redis } from 'ioredis';
import type { Principal } from '../auth/principal';
import { AttemptThrottle } from './attempt-throttle';
import { isAppTraffic, limitsFor, type BudgetName, type BudgetState } from './budgets';
import { rateLimitPolicy } from './headers';
import { QuotaCounter, type Counted, type CounterSpec, type LocalCount } from './quota';

// The rate limiter: a caller's budgets (budgets.ts) counted in Redis, shared by every gateway,
// touched at most once per request (quota.ts); when Redis is unreachable or slow each gateway falls
// back to its own counts.

export interface LimitSettings {
  enabled: boolean;
  keyPrefix: string;
  minuteWindowS: number;
  hourWindowS: number;
  authFailuresPerMinute: number;
  /** Share of a large limit one gateway may admit between syncs with Redis (0 = ask Redis on every request). */
  localShare: number;
  /** Requests one licence may make per minute (app traffic that names a licence). */
  licensePerMinute: number;
}

/** What counting one request said: both budgets as it left them, and the one that refused it, if any. */
export interface RateVerdict {
  budgets: BudgetState[];
  rejectedBy?: BudgetState;
  /** RateLimit-Policy for these budgets (worked out once per caller). */
  policy: string;
}

type HourBudget = Extract<BudgetName, 'hour' | 'app_hour'>;
type MinuteBudget = Extract<BudgetName, 'minute' | 'license_minute'>;

/** What one caller spends, worked out once per caller (and per licence it names). */
interface CallerBudgets {
  /** The per-minute limit and the hourly one this caller spends (the quota, or the app allowance). */
  limits: { minute: number; hour: number };
  /** Which budgets those are: the key's minute or the licence's, the quota or the app allowance. */
  minuteBudget: MinuteBudget;
  hourBudget: HourBudget;
  /** Their counters in Redis: the minute's, then the hour's. */
  counters: [CounterSpec, CounterSpec];
  policy: string;
}

const budgetState = (name: BudgetName, c: LocalCount, limit: number, windowS: number, nowMs: number): BudgetState => ({
  name,
  limit,
  windowS,
  remaining: Math.max(0, limit - c.count - c.pending),
  resetS: Math.max(1, Math.ceil((c.resetAt - nowMs) / 1000)),
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
   * Both budgets must allow it: the minute is counted first; if it refuses, the
   * hour is not touched; if the hour refuses, the minute's point is given back.
   * Answers synchronously when the counts in memory decide (see quota.ts).
   */
  /**
   * `licenseDigest`: the licence a validate-scope key's request names (licenseBudgetId()); it then
   * spends that licence's minute instead of the key's. A licence credential always spends its own.
   */
  check(p: Principal, licenseDigest?: string): RateVerdict | Promise<RateVerdict> {
    const spent = this.budgetsOf(p, licenseDigest);
    const counted = this.quota.count(...spent.counters);
    return counted instanceof Promise ? counted.then((c) => this.verdict(c, spent)) : this.verdict(counted, spent);
  }

  /** Admits the request only if memory alone decides it (see quota.ts); undefined = nothing counted, use check(). */
  checkLocally(p: Principal, licenseDigest?: string): RateVerdict | undefined {
    const spent = this.budgetsOf(p, licenseDigest);
    const counted = this.quota.countLocally(...spent.counters);
    return counted && this.verdict(counted, spent);
  }

  /** A principal's budgets and counter keys, worked out once per principal (the auth caches hand out the same object). */
  private readonly callers = new WeakMap<Principal, CallerBudgets>();
  /** A validate-scope key's budgets when its request names a licence (only the minute's counter key differs per licence). */
  private readonly licensed = new WeakMap<Principal, CallerBudgets>();

  private budgetsOf(p: Principal, licenseDigest?: string): CallerBudgets {
    const own = p.license?.digest;
    if (licenseDigest === undefined || own !== undefined || !isAppTraffic(p)) return this.callerBudgets(p, own);
    let base = this.licensed.get(p);
    if (!base) {
      base = this.callerBudgets(p, licenseDigest, false);
      this.licensed.set(p, base);
    }
    const minute = { ...base.counters[0], key: this.licenseMinuteKey(p.accountId, licenseDigest) };
    return { ...base, counters: [minute, base.counters[1]] };
  }

  private callerBudgets(p: Principal, licenseDigest: string | undefined, remember = true): CallerBudgets {
    let spent = remember ? this.callers.get(p) : undefined;
    if (!spent) {
      const all = limitsFor(p, this.settings.licensePerMinute);
      const hourBudget: HourBudget = isAppTraffic(p) ? 'app_hour' : 'hour';
      const minuteBudget: MinuteBudget = licenseDigest !== undefined ? 'license_minute' : 'minute';
      const limits = {
        minute: minuteBudget === 'license_minute' ? all.licenseMinute : all.minute,
        hour: hourBudget === 'app_hour' ? all.appHour : all.hour,
      };
      const policy = rateLimitPolicy([
        { name: hourBudget, limit: limits.hour, windowS: this.settings.hourWindowS },
        { name: minuteBudget, limit: limits.minute, windowS: this.settings.minuteWindowS },
      ]);
      const minuteKey =
        licenseDigest !== undefined
          ? this.licenseMinuteKey(p.accountId, licenseDigest)
          : `${this.settings.keyPrefix}:minute:${p.keyId}`;
      const counters: [CounterSpec, CounterSpec] = [
        { key: minuteKey, limit: limits.minute, windowMs: this.settings.minuteWindowS * 1000 },
        { key: this.hourKey(p.accountId, hourBudget), limit: limits.hour, windowMs: this.settings.hourWindowS * 1000 },
      ];
      spent = { limits, minuteBudget, hourBudget, counters, policy };
      if (remember) this.callers.set(p, spent);
    }
    return spent;
  }

  /** A licence's minute counter: per account and licence key digest (a validate key and the licence itself share it). */
  private licenseMinuteKey(accountId: string, licenseDigest: string): string {
    return `${this.settings.keyPrefix}:license_minute:${accountId}:${licenseDigest}`;
  }

  /** The account's hourly counter in Redis: the quota ("hour") or the app allowance ("app_hour"). */
  private hourKey(accountId: string, hourBudget: HourBudget): string {
    return `${this.settings.keyPrefix}:${hourBudget}:${accountId}`;
  }

  private verdict(c: Counted, { limits, minuteBudget, hourBudget, policy }: CallerBudgets): RateVerdict {
    const now = Date.now();
    const budgets = [
      budgetState(hourBudget, c.hour, limits.hour, this.settings.hourWindowS, now),
      budgetState(minuteBudget, c.minute, limits.minute, this.settings.minuteWindowS, now),
    ];
    const refused = c.refusedBy === 'hour' ? hourBudget : c.refusedBy === 'minute' ? minuteBudget : undefined;
    return { budgets, rejectedBy: refused ? budgets.find((b) => b.name === refused) : undefined, policy };
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
