import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';

/** A fixed-window count of attempts in Redis (rate-limiter-flexible), with an in-memory insurance limiter. */
class AttemptCounter {
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
  private readonly counter: AttemptCounter;

  constructor(
    redis: Redis,
    keyPrefix: string,
    name: string,
    private readonly maxFailures: number,
    windowS: number,
  ) {
    this.counter = new AttemptCounter(name, windowS, redis, keyPrefix);
  }

  // There is deliberately no "check, then count later": parallel requests would
  // all pass the check before any of them was counted. Every attempt is
  // counted and judged in one atomic step; one that turns out to be a success
  // may be given back afterwards.

  /** Counts one attempt (or failure) and, atomically with it, says how long to wait if that was one too many (null: not throttled). */
  async fail(key: string): Promise<number | null> {
    const { allowed, retryAfterS } = await this.counter.hit(key, this.maxFailures);
    return allowed ? null : retryAfterS;
  }

  /** Takes back an attempt counted by fail() that succeeded (a right password is not a guess). */
  forgive(key: string): Promise<void> {
    return this.counter.giveBack(key, this.maxFailures);
  }
}

/** A throttle per e-mail and one per client address, counted together. */
export interface AttemptThrottles {
  perEmail: AttemptThrottle;
  perAddress: AttemptThrottle;
}

/** Counts one attempt against both throttles atomically; seconds to wait if either refuses, else null. */
export async function attemptBoth(t: AttemptThrottles, email: string, address: string): Promise<number | null> {
  const [byEmail, byAddress] = await Promise.all([t.perEmail.fail(email || '-'), t.perAddress.fail(address)]);
  return byEmail === null && byAddress === null ? null : Math.max(byEmail ?? 0, byAddress ?? 0);
}
