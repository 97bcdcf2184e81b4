import type { Redis } from 'ioredis';
import { admitsLocally, MIN_LOCAL_BATCH, QuotaCounter } from '@licensing/runtime';

// When a gateway may admit a request without asking Redis (quota.ts has the accuracy argument).
describe('local rate-limit decisions', () => {
  const now = 1_000_000;
  const open = (count: number, pending = 0) => ({ count, pending, pushing: 0, resetAt: now + 60_000 });

  it('needs a known, running window', () => {
    expect(admitsLocally(undefined, 1_000_000, now, 0.01)).toBe(false);
    expect(admitsLocally({ count: 0, pending: 0, pushing: 0, resetAt: now }, 1_000_000, now, 0.01)).toBe(false);
    expect(admitsLocally(open(0), 1_000_000, now, 0.01)).toBe(true);
  });

  it('never for small limits or a zero share: those ask Redis on every request', () => {
    expect(admitsLocally(open(0), 100, now, 0.01)).toBe(false);
    expect(admitsLocally(open(0), MIN_LOCAL_BATCH * 100 - 1, now, 0.01)).toBe(false);
    expect(admitsLocally(open(0), MIN_LOCAL_BATCH * 100, now, 0.01)).toBe(true);
    expect(admitsLocally(open(0), 1_000_000, now, 0)).toBe(false);
  });

  it('admits at most one batch (share × limit) between syncs', () => {
    expect(admitsLocally(open(0, 9_999), 1_000_000, now, 0.01)).toBe(true);
    expect(admitsLocally(open(0, 10_000), 1_000_000, now, 0.01)).toBe(false);
  });

  it('stops ten batches before the limit, where every request asks Redis', () => {
    expect(admitsLocally(open(899_999), 1_000_000, now, 0.01)).toBe(true);
    expect(admitsLocally(open(900_000), 1_000_000, now, 0.01)).toBe(false);
    expect(admitsLocally(open(899_000, 1_000), 1_000_000, now, 0.01)).toBe(false);
  });
});

/** Redis as the two quota scripts see it (counts by key), with a sync that can be held in flight. */
class ScriptedRedis {
  status = 'ready';
  readonly counts = new Map<string, number>();
  held?: Promise<void>;
  defineCommand(): void {}
  private add(key: string, n: number): number {
    const c = (this.counts.get(key) ?? 0) + n;
    this.counts.set(key, c);
    return c;
  }
  async quotaAdd(numKeys: number, ...args: (string | number)[]): Promise<number[]> {
    const keys = args.slice(0, numKeys) as string[];
    const amounts = keys.map((_, i) => Number(args[numKeys + 2 * i]));
    if (this.held) await this.held;
    return keys.flatMap((key, i) => [this.add(key, amounts[i]), 60_000]);
  }
  /** The consume script's rules: each counter in turn; the first past its limit (a check-only one at it) refuses, the earlier ones give back. */
  async quotaConsume(numKeys: number, ...args: (string | number)[]): Promise<number[]> {
    const keys = args.slice(0, numKeys) as string[];
    const argv = args.slice(numKeys).map(Number);
    for (const [i, key] of keys.entries()) this.add(key, argv[4 * i + 2]);
    const out = [1, 0];
    let refused = 0;
    for (const [i, key] of keys.entries()) {
      const [limit, , , checkOnly] = argv.slice(4 * i, 4 * i + 4);
      let c: number;
      if (refused || checkOnly) {
        c = this.counts.get(key) ?? 0;
        if (!refused && c >= limit) refused = i + 1;
      } else {
        c = this.add(key, 1);
        if (c > limit) refused = i + 1;
      }
      out.push(c, 60_000);
      if (refused === i + 1)
        for (let j = 0; j < i; j++)
          if (!argv[4 * j + 3]) {
            this.add(keys[j], -1);
            out[2 + 2 * j]--;
          }
    }
    if (refused) [out[0], out[1]] = [0, refused];
    return out;
  }
}

describe('local admissions reach Redis once', () => {
  it('a request counted in Redis while a sync is in flight does not send what the sync is sending', async () => {
    const redis = new ScriptedRedis();
    const quota = new QuotaCounter(redis as unknown as Redis, 0.05);
    const minute = { key: 'm', limit: 200, windowMs: 60_000 };
    const hour = { key: 'h', limit: 1_000_000, windowMs: 3_600_000 };
    redis.counts.set('m', 94);
    await quota.count(minute, hour); // asks Redis: 95, and the window is known here
    let admitted = 1;
    // Local while count + pending stays ten batches (of 10) below 200.
    while (quota.countLocally(minute, hour)) admitted++;
    expect(admitted).toBe(6);
    let release!: () => void;
    redis.held = new Promise((r) => (release = r));
    const sync = quota.sync(); // sends the 5 admitted here, and waits
    expect((await quota.count(minute, hour)).allowed).toBe(true); // asks Redis meanwhile
    admitted++;
    release();
    await sync;
    expect(redis.counts.get('m')).toBe(94 + admitted);
    await quota.close();
  });
});

describe('several counters in one request', () => {
  const minute = (key: string, limit: number, checkOnly = false) => ({ key, limit, windowMs: 60_000, checkOnly });

  it('a later counter that refuses gives back what the earlier ones counted', async () => {
    const redis = new ScriptedRedis();
    const quota = new QuotaCounter(redis as unknown as Redis, 0);
    redis.counts.set('c', 5);
    const counted = await quota.count(minute('a', 10), minute('b', 10), minute('c', 5));
    expect(counted).toMatchObject({ allowed: false, refusedBy: 2 });
    expect([redis.counts.get('a'), redis.counts.get('b')]).toEqual([0, 0]);
  });

  it('a check-only counter refuses at its limit and counts nothing; adjust() counts it later, without a request waiting', async () => {
    const redis = new ScriptedRedis();
    const quota = new QuotaCounter(redis as unknown as Redis, 0);
    const specs = [minute('a', 100), minute('hour', 1000), minute('unknown', 2, true)];
    expect((await quota.count(...specs)).allowed).toBe(true);
    expect(redis.counts.get('unknown') ?? 0).toBe(0);
    quota.adjust(specs[1], -1); // given back
    quota.adjust(specs[2], 2); // counted once the answer said so
    await quota.sync();
    expect([redis.counts.get('hour'), redis.counts.get('unknown')]).toEqual([0, 2]);
    expect(await quota.count(...specs)).toMatchObject({ allowed: false, refusedBy: 2 });
    expect([redis.counts.get('a'), redis.counts.get('hour')]).toEqual([1, 0]);
    await quota.close();
  });
});
