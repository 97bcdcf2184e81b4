import type { Redis } from 'ioredis';
import { admitsLocally, MIN_LOCAL_BATCH, QuotaCounter } from '../../gateway/src/rate-limits/quota';

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
  async quotaConsume(minute: string, hour: string, ...argv: (string | number)[]): Promise<number[]> {
    const [minuteLimit, , hourLimit, , pm, ph] = argv.map(Number);
    this.add(minute, pm);
    this.add(hour, ph);
    const m = this.add(minute, 1);
    if (m > minuteLimit) return [0, m, 60_000, this.counts.get(hour) ?? 0, 60_000];
    const h = this.add(hour, 1);
    if (h > hourLimit) return [0, this.add(minute, -1), 60_000, h, 60_000];
    return [1, m, 60_000, h, 60_000];
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
