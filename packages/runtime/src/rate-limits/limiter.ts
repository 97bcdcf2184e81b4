import type { Redis } from 'ioredis';
import type { Principal } from './principal';
import { AttemptThrottle } from './attempt-throttle';
import { isAppTraffic, limitsFor, type AccountLimits, type BudgetName, type BudgetState } from './budgets';
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

/** What counting one request said: its budgets as it left them, and the one that refused it, if any. */
export interface RateVerdict {
  budgets: BudgetState[];
  rejectedBy?: BudgetState;
  /** RateLimit-Policy for these budgets (worked out once per caller). */
  policy: string;
}

/** What an app request names, as far as its budgets care (budgets.ts). */
export interface AppRequest {
  /** The client's address (addressKey(req.ip)): "unknown_minute" is per credential and address. */
  address: string;
  /** The licence a validate-scope key's request names (namedLicenseDigest()); a licence credential names its own. */
  licenseDigest?: string;
  /** The activation a heartbeat renews: it spends that activation's "heartbeat" budget instead of the minutes. */
  heartbeatOf?: string;
}

/** The budgets one request spends: their names and counters, in counting order, and RateLimit-Policy. */
interface Spent {
  names: BudgetName[];
  counters: CounterSpec[];
  policy: string;
}

const budgetState = (name: BudgetName, c: LocalCount, limit: number, windowS: number, nowMs: number): BudgetState => ({
  name,
  limit,
  windowS,
  remaining: Math.max(0, limit - c.count - c.pending),
  resetS: Math.max(1, Math.ceil((c.resetAt - nowMs) / 1000)),
});

/** A licence credential that may only spend "unknown_minute": no licence has its key, or it was revoked. */
const isDeadLicense = (p: Principal): boolean => p.license?.status === 'unknown' || p.license?.status === 'revoked';

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
   * Every budget the request spends must allow it (budgets.ts): they are counted in order, and when
   * one refuses, what the ones before it counted is given back. Answers synchronously when the counts
   * in memory decide (see quota.ts). `app`: what an app credential's request names (app traffic only).
   */
  check(p: Principal, app?: AppRequest): RateVerdict | Promise<RateVerdict> {
    const spent = this.budgetsOf(p, app);
    const counted = this.quota.count(...spent.counters);
    return counted instanceof Promise ? counted.then((c) => this.verdict(c, spent)) : this.verdict(counted, spent);
  }

  /** Admits the request only if memory alone decides it (see quota.ts); undefined = nothing counted, use check(). */
  checkLocally(p: Principal, app?: AppRequest): RateVerdict | undefined {
    const spent = this.budgetsOf(p, app);
    const counted = this.quota.countLocally(...spent.counters);
    return counted && this.verdict(counted, spent);
  }

  /**
   * The answer said an app request named nothing that is there: a licence no licence has (or a
   * malformed key), a revoked licence, an activation that does not exist. Its "app_hour" is given
   * back and its credential's "unknown_minute" from this address counted instead, both with the
   * next sync (no request waits for Redis).
   */
  namedNothing(p: Principal, app: AppRequest): void {
    if (!this.settings.enabled || !isAppTraffic(p) || isDeadLicense(p) || !p.accountId) return;
    const limits = this.limitsOf(p);
    this.quota.adjust(this.appHourCounter(p, limits.appHour), -1);
    this.quota.adjust(this.unknownCounter(p, app.address, limits.unknownMinute), 1);
  }

  /** A vendor's own request's budgets, worked out once per principal (the auth caches hand out the same object). */
  private readonly callers = new WeakMap<Principal, Spent>();
  /** The policies of an app credential's kinds of request, worked out once per principal. */
  private readonly appPolicies = new WeakMap<Principal, Map<string, string>>();

  private limitsOf(p: Principal): AccountLimits {
    return limitsFor(p, this.settings.licensePerMinute);
  }

  private budgetsOf(p: Principal, app?: AppRequest): Spent {
    if (!isAppTraffic(p)) return this.vendorBudgets(p);
    const limits = this.limitsOf(p);
    const address = app?.address ?? '';
    const names: BudgetName[] = [];
    const counters: CounterSpec[] = [];
    const add = (name: BudgetName, spec: CounterSpec) => {
      names.push(name);
      counters.push(spec);
    };
    if (isDeadLicense(p)) {
      add('unknown_minute', this.unknownCounter(p, address, limits.unknownMinute, false));
      return { names, counters, policy: this.appPolicy(p, 'dead', names, counters) };
    }
    const minute = this.settings.minuteWindowS * 1000;
    const licenseDigest = p.license?.digest ?? app?.licenseDigest;
    if (app?.heartbeatOf !== undefined) {
      add('heartbeat', {
        key: `${this.settings.keyPrefix}:heartbeat:${p.accountId}:${app.heartbeatOf}`,
        limit: limits.heartbeatMinute,
        windowMs: minute,
      });
    } else {
      if (licenseDigest !== undefined)
        add('license_minute', {
          key: this.licenseMinuteKey(p.accountId, licenseDigest),
          limit: limits.licenseMinute,
          windowMs: minute,
        });
      add('app_minute', {
        key: `${this.settings.keyPrefix}:app_minute:${this.credentialId(p)}`,
        limit: p.license ? limits.licenseMinute : limits.validateKeyMinute,
        windowMs: minute,
      });
    }
    add('app_hour', this.appHourCounter(p, limits.appHour));
    add('unknown_minute', this.unknownCounter(p, address, limits.unknownMinute, true));
    const kind = app?.heartbeatOf !== undefined ? 'heartbeat' : licenseDigest !== undefined ? 'license' : 'app';
    return { names, counters, policy: this.appPolicy(p, kind, names, counters) };
  }

  /** RateLimit-Policy of one kind of an app credential's requests (the check-only budget is not shown). */
  private appPolicy(p: Principal, kind: string, names: BudgetName[], counters: CounterSpec[]): string {
    let policies = this.appPolicies.get(p);
    if (!policies) {
      policies = new Map();
      this.appPolicies.set(p, policies);
    }
    let policy = policies.get(kind);
    if (policy === undefined) {
      policy = rateLimitPolicy(
        counters.flatMap((c, i) =>
          c.checkOnly ? [] : [{ name: names[i], limit: c.limit, windowS: Math.round(c.windowMs / 1000) }],
        ),
      );
      policies.set(kind, policy);
    }
    return policy;
  }

  private vendorBudgets(p: Principal): Spent {
    let spent = this.callers.get(p);
    if (!spent) {
      const limits = this.limitsOf(p);
      const counters: CounterSpec[] = [
        {
          key: `${this.settings.keyPrefix}:minute:${p.keyId}`,
          limit: limits.minute,
          windowMs: this.settings.minuteWindowS * 1000,
        },
        { key: this.hourKey(p.accountId, 'hour'), limit: limits.hour, windowMs: this.settings.hourWindowS * 1000 },
      ];
      const names: BudgetName[] = ['minute', 'hour'];
      const policy = rateLimitPolicy([
        { name: 'hour', limit: limits.hour, windowS: this.settings.hourWindowS },
        { name: 'minute', limit: limits.minute, windowS: this.settings.minuteWindowS },
      ]);
      spent = { names, counters, policy };
      this.callers.set(p, spent);
    }
    return spent;
  }

  /** An app credential, as its counters name it: a validate-scope key by its id, a licence by its key's digest. */
  private credentialId(p: Principal): string {
    return p.license ? `license:${p.license.digest}` : `key:${p.keyId}`;
  }

  private appHourCounter(p: Principal, limit: number): CounterSpec {
    return { key: this.hourKey(p.accountId, 'app_hour'), limit, windowMs: this.settings.hourWindowS * 1000 };
  }

  /** A credential's "unknown_minute" from one address; `checkOnly`: refuses once spent, counts nothing (see namedNothing). */
  private unknownCounter(p: Principal, address: string, limit: number, checkOnly = false): CounterSpec {
    return {
      key: `${this.settings.keyPrefix}:unknown_minute:${this.credentialId(p)}:${address}`,
      limit,
      windowMs: this.settings.minuteWindowS * 1000,
      checkOnly,
    };
  }

  /** A licence's minute counter: per account and licence key digest (a validate key and the licence itself share it). */
  private licenseMinuteKey(accountId: string, licenseDigest: string): string {
    return `${this.settings.keyPrefix}:license_minute:${accountId}:${licenseDigest}`;
  }

  /** The account's hourly counter in Redis: the quota ("hour") or the app allowance ("app_hour"). */
  private hourKey(accountId: string, hourBudget: 'hour' | 'app_hour'): string {
    return `${this.settings.keyPrefix}:${hourBudget}:${accountId}`;
  }

  private verdict(c: Counted, { names, counters, policy }: Spent): RateVerdict {
    const now = Date.now();
    const budgets: BudgetState[] = [];
    let rejectedBy: BudgetState | undefined;
    for (const [i, spec] of counters.entries()) {
      if (spec.checkOnly && c.refusedBy !== i) continue;
      const windowS = Math.round(spec.windowMs / 1000);
      const state = budgetState(names[i], c.counts[i], spec.limit, windowS, now);
      if (c.refusedBy === i) rejectedBy = state;
      budgets.push(state);
    }
    return { budgets, rejectedBy, policy };
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
