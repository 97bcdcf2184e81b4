import type { Redis } from 'ioredis';

// The counters of a request's two budgets (budgets.ts: "minute" per API key, "hour" or "app_hour"
// per account) in Redis, shared by every gateway, at most one Redis round trip per request. A
// counter is a CounterSpec (its key, limit and window length); this gateway's view of one is a
// LocalCount (what Redis held at the last answer, and what was admitted here since):
//
// - Exact mode: one Lua script counts the minute, then the hour, and gives the
//   minute back if the hour refuses, atomically.
// - Local mode, for counters with large limits (at least MIN_LOCAL_BATCH / share,
//   i.e. 1,000 at the default share of 1 %): while a counter has more than 10
//   batches left, a gateway admits up to one batch (share × limit) on its own
//   and adds it to Redis in the background every SYNC_MS. Accuracy: the
//   counters in Redis trail by at most one batch per gateway; with up to five
//   gateways a counter never passes its limit, each gateway more may add two
//   batches (2 % of the limit). Near the limit every request asks Redis.
// - Redis away: each gateway decides on its own counts (documented fallback)
//   and adds what it admitted to Redis when it is back.

export const MIN_LOCAL_BATCH = 10;
const SYNC_MS = 50;
/** After a Redis failure, decide locally this long before trying Redis on the request path again. */
const REDIS_BACKOFF_MS = 1000;
const MAX_COUNTS = 100_000;

/** This gateway's view of one counter in its current window. */
export interface LocalCount {
  /** Count in Redis at the last answer (includes what this gateway pushed). */
  count: number;
  /** Admitted here and not yet added to Redis. */
  pending: number;
  /**
   * The part of `pending` on its way to Redis (a sync or a counted request awaits the answer): the other
   * one sends only the rest, or both would add it and the counter would refuse early.
   */
  pushing: number;
  /** When the window ends (epoch ms). */
  resetAt: number;
}

/** May this gateway admit one more request on the counter without asking Redis? */
export function admitsLocally(c: LocalCount | undefined, limit: number, nowMs: number, share: number): boolean {
  if (!c || nowMs >= c.resetAt) return false;
  const batch = Math.floor(limit * share);
  if (batch < MIN_LOCAL_BATCH) return false;
  return c.pending < batch && c.count + c.pending + 1 <= limit - 10 * batch;
}

/** A counter in Redis: its key, the limit it enforces, and the length of its window. */
export interface CounterSpec {
  key: string;
  limit: number;
  windowMs: number;
}

export interface Counted {
  allowed: boolean;
  /** The counter that refused, when one did. */
  refusedBy?: 'minute' | 'hour';
  minute: LocalCount;
  hour: LocalCount;
}

// KEYS: minute, hour. ARGV: minute limit, minute ms, hour limit, hour ms,
// minute pending, hour pending (admitted locally, added first).
// Returns: allowed (1/0), minute count, minute pttl, hour count, hour pttl.
const CONSUME = `
local function add(key, n, ms)
  local c = redis.call('INCRBY', key, n)
  local ttl = redis.call('PTTL', key)
  if ttl < 0 then redis.call('PEXPIRE', key, ms); ttl = tonumber(ms) end
  return c, ttl
end
local function peek(key, ms)
  local c = tonumber(redis.call('GET', key) or '0')
  local ttl = redis.call('PTTL', key)
  if ttl < 0 then ttl = tonumber(ms) end
  return c, ttl
end
if tonumber(ARGV[5]) > 0 then add(KEYS[1], tonumber(ARGV[5]), ARGV[2]) end
if tonumber(ARGV[6]) > 0 then add(KEYS[2], tonumber(ARGV[6]), ARGV[4]) end
local m, mttl = add(KEYS[1], 1, ARGV[2])
if m > tonumber(ARGV[1]) then
  local h, httl = peek(KEYS[2], ARGV[4])
  return {0, m, mttl, h, httl}
end
local h, httl = add(KEYS[2], 1, ARGV[4])
if h > tonumber(ARGV[3]) then
  redis.call('DECR', KEYS[1])
  return {0, m - 1, mttl, h, httl}
end
return {1, m, mttl, h, httl}
`;

// KEYS: counters; ARGV: (n, ms) per counter. Returns (count, pttl) per counter.
const ADD = `
local out = {}
for i, key in ipairs(KEYS) do
  local c = redis.call('INCRBY', key, tonumber(ARGV[2 * i - 1]))
  local ttl = redis.call('PTTL', key)
  if ttl < 0 then redis.call('PEXPIRE', key, ARGV[2 * i]); ttl = tonumber(ARGV[2 * i]) end
  out[#out + 1] = c
  out[#out + 1] = ttl
end
return out
`;

type ScriptRedis = Redis & {
  quotaConsume(minute: string, hour: string, ...args: (string | number)[]): Promise<number[]>;
  quotaAdd(numKeys: number, ...args: (string | number)[]): Promise<number[]>;
};

export class QuotaCounter {
  private readonly counts = new Map<string, LocalCount>();
  private readonly dirty = new Set<string>();
  private syncTimer?: NodeJS.Timeout;
  private syncing = false;
  private redisFailedAt = -Infinity;
  private readonly redis: ScriptRedis;

  constructor(
    redis: Redis,
    /** Share of a limit one gateway may admit between syncs (0 = always ask Redis). */
    private readonly share: number,
    private readonly now: () => number = Date.now,
  ) {
    redis.defineCommand('quotaConsume', { numberOfKeys: 2, lua: CONSUME });
    redis.defineCommand('quotaAdd', { lua: ADD });
    this.redis = redis as ScriptRedis;
  }

  /** Counts one request on both counters: from memory when both allow it, else one Redis round trip. */
  count(minute: CounterSpec, hour: CounterSpec): Counted | Promise<Counted> {
    const local = this.countLocally(minute, hour);
    if (local) return local;
    const now = this.now();
    if (this.redis.status !== 'ready' || now - this.redisFailedAt < REDIS_BACKOFF_MS)
      return this.countHere(minute, hour, now);
    return this.countInRedis(minute, hour, now);
  }

  /** Counts one request only if both counters can admit it from memory; undefined (nothing counted) otherwise. */
  countLocally(minute: CounterSpec, hour: CounterSpec): Counted | undefined {
    const now = this.now();
    const m = this.counts.get(minute.key);
    const h = this.counts.get(hour.key);
    if (!admitsLocally(m, minute.limit, now, this.share) || !admitsLocally(h, hour.limit, now, this.share))
      return undefined;
    this.admit(minute.key, m!);
    this.admit(hour.key, h!);
    return { allowed: true, minute: m!, hour: h! };
  }

  private async countInRedis(minute: CounterSpec, hour: CounterSpec, now: number): Promise<Counted> {
    const m = this.localCount(minute, now);
    const h = this.localCount(hour, now);
    const [pm, ph] = [m.pending - m.pushing, h.pending - h.pushing];
    m.pushing += pm;
    h.pushing += ph;
    let r: number[];
    try {
      r = await this.redis.quotaConsume(
        minute.key,
        hour.key,
        minute.limit,
        minute.windowMs,
        hour.limit,
        hour.windowMs,
        pm,
        ph,
      );
    } catch {
      m.pushing -= pm;
      h.pushing -= ph;
      this.redisFailedAt = this.now();
      return this.countHere(minute, hour, this.now());
    }
    m.pushing -= pm;
    h.pushing -= ph;
    const at = this.now();
    this.settle(minute.key, m, pm, r[1], r[2], at);
    this.settle(hour.key, h, ph, r[3], r[4], at);
    if (r[0] === 1) return { allowed: true, minute: m, hour: h };
    return { allowed: false, refusedBy: r[1] > minute.limit ? 'minute' : 'hour', minute: m, hour: h };
  }

  /** Redis is away: this gateway's own counts decide (and reach Redis when it is back). */
  private countHere(minute: CounterSpec, hour: CounterSpec, now: number): Counted {
    const m = this.localCount(minute, now);
    const h = this.localCount(hour, now);
    if (m.count + m.pending >= minute.limit) return { allowed: false, refusedBy: 'minute', minute: m, hour: h };
    if (h.count + h.pending >= hour.limit) return { allowed: false, refusedBy: 'hour', minute: m, hour: h };
    this.admit(minute.key, m);
    this.admit(hour.key, h);
    return { allowed: true, minute: m, hour: h };
  }

  /** This gateway's count of a counter, started afresh when its window has ended. */
  private localCount(spec: CounterSpec, now: number): LocalCount {
    let c = this.counts.get(spec.key);
    if (!c || now >= c.resetAt) {
      if (this.counts.size >= MAX_COUNTS) this.forgetEnded(now);
      c = { count: 0, pending: 0, pushing: 0, resetAt: now + spec.windowMs };
      this.counts.set(spec.key, c);
      this.dirty.delete(spec.key); // what was pending belonged to the ended window
    }
    return c;
  }

  private settle(key: string, w: LocalCount, pushed: number, count: number, pttl: number, at: number): void {
    w.pending -= pushed;
    w.count = count;
    w.resetAt = at + pttl;
    if (w.pending === 0) this.dirty.delete(key);
  }

  private admit(key: string, w: LocalCount): void {
    w.pending++;
    this.dirty.add(key);
    this.syncTimer ??= setTimeout(() => void this.sync(), SYNC_MS).unref() as NodeJS.Timeout;
  }

  private windowMsOf(w: LocalCount): number {
    return Math.max(1, w.resetAt - this.now());
  }

  /** Adds what was admitted locally to Redis, in one round trip for every counter. */
  async sync(): Promise<void> {
    this.syncTimer = undefined;
    if (this.syncing || !this.dirty.size) return;
    if (this.redis.status !== 'ready') {
      this.syncTimer = setTimeout(() => void this.sync(), REDIS_BACKOFF_MS).unref() as NodeJS.Timeout;
      return;
    }
    this.syncing = true;
    const batch = [...this.dirty]
      .map((key) => ({ key, w: this.counts.get(key)! }))
      .filter((b) => b.w && b.w.pending - b.w.pushing > 0);
    const pushed = batch.map((b) => b.w.pending - b.w.pushing);
    for (const [i, b] of batch.entries()) b.w.pushing += pushed[i];
    try {
      const args = batch.flatMap((b, i) => [pushed[i], this.windowMsOf(b.w)]);
      const r = batch.length ? await this.redis.quotaAdd(batch.length, ...batch.map((b) => b.key), ...args) : [];
      const at = this.now();
      for (const [i, b] of batch.entries()) {
        b.w.pushing -= pushed[i];
        this.settle(b.key, b.w, pushed[i], r[2 * i], r[2 * i + 1], at);
      }
    } catch {
      for (const [i, b] of batch.entries()) b.w.pushing -= pushed[i];
      this.redisFailedAt = this.now();
    } finally {
      this.syncing = false;
      if (this.dirty.size) this.syncTimer ??= setTimeout(() => void this.sync(), SYNC_MS).unref() as NodeJS.Timeout;
    }
  }

  private forgetEnded(now: number): void {
    for (const [key, c] of this.counts) if (now >= c.resetAt) this.counts.delete(key);
  }

  /** Pushes what is pending (graceful shutdown). */
  async close(): Promise<void> {
    clearTimeout(this.syncTimer);
    await this.sync();
  }
}
