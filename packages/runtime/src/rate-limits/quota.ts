import type { Redis } from 'ioredis';

// The counters of a request's budgets (budgets.ts: "minute" per API key and "hour" per account, or
// an app's minutes and "app_hour") in Redis, shared by every gateway, at most one Redis round trip
// per request. A
// counter is a CounterSpec (its key, limit and window length); this gateway's view of one is a
// LocalCount (what Redis held at the last answer, and what was admitted here since):
//
// - Exact mode: one Lua script counts each counter in turn, and gives back what
//   the earlier ones counted if a later one refuses, atomically.
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
  /**
   * Only checked, not counted: the request is refused once the counter has reached its limit, and
   * adds nothing to it (what it counts is known after the answer: adjust()).
   */
  checkOnly?: boolean;
}

export interface Counted {
  allowed: boolean;
  /** The position (in the counters asked for) of the counter that refused, when one did. */
  refusedBy?: number;
  /** Each counter as this request left it, in the order asked for. */
  counts: LocalCount[];
}

// KEYS: the counters, in order. ARGV per counter: limit, window ms, pending (admitted locally, added
// first), check-only (1/0). Counts one on each in order; the first that passes its limit (or a
// check-only one at its limit) refuses: what the counters before it counted is given back, and those
// after it are only read. Returns: allowed (1/0), the refusing position (1-based, 0: none), then count
// and pttl per counter.
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
for i = 1, #KEYS do
  local pending = tonumber(ARGV[4 * i - 1])
  if pending ~= 0 then add(KEYS[i], pending, ARGV[4 * i - 2]) end
end
local out = {1, 0}
local refused = 0
for i = 1, #KEYS do
  local limit, ms, checkOnly = tonumber(ARGV[4 * i - 3]), ARGV[4 * i - 2], ARGV[4 * i] == '1'
  local c, ttl
  if refused > 0 or checkOnly then
    c, ttl = peek(KEYS[i], ms)
    if refused == 0 and c >= limit then refused = i end
  else
    c, ttl = add(KEYS[i], 1, ms)
    if c > limit then refused = i end
  end
  out[2 * i + 1] = c
  out[2 * i + 2] = ttl
  if refused == i then
    for j = 1, i - 1 do
      if ARGV[4 * j] ~= '1' then
        redis.call('DECR', KEYS[j])
        out[2 * j + 1] = out[2 * j + 1] - 1
      end
    end
  end
end
if refused > 0 then out[1] = 0; out[2] = refused end
return out
`;

// KEYS: counters; ARGV: (n, ms) per counter (n may be negative: a count given back). Returns (count, pttl) per counter.
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
  quotaConsume(numKeys: number, ...args: (string | number)[]): Promise<number[]>;
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
    redis.defineCommand('quotaConsume', { lua: CONSUME });
    redis.defineCommand('quotaAdd', { lua: ADD });
    this.redis = redis as ScriptRedis;
  }

  /** Counts one request on every counter: from memory when all allow it, else one Redis round trip. */
  count(...specs: CounterSpec[]): Counted | Promise<Counted> {
    const local = this.countLocally(...specs);
    if (local) return local;
    const now = this.now();
    if (this.redis.status !== 'ready' || now - this.redisFailedAt < REDIS_BACKOFF_MS) return this.countHere(specs, now);
    return this.countInRedis(specs, now);
  }

  /** Counts one request only if every counter can admit it from memory; undefined (nothing counted) otherwise. */
  countLocally(...specs: CounterSpec[]): Counted | undefined {
    const now = this.now();
    const counts: LocalCount[] = [];
    for (const spec of specs) {
      const c = this.counts.get(spec.key);
      // A check-only counter has a small limit: Redis decides it.
      if (spec.checkOnly || !admitsLocally(c, spec.limit, now, this.share)) return undefined;
      counts.push(c!);
    }
    for (const [i, spec] of specs.entries()) this.admit(spec.key, counts[i]);
    return { allowed: true, counts };
  }

  /**
   * Adds `delta` to a counter without a request waiting for Redis (it reaches Redis with the next
   * sync): a count given back (-1), or one counted once the answer said what the request was. A
   * counter this gateway has not seen in its current window is left alone when giving back.
   */
  adjust(spec: CounterSpec, delta: number): void {
    const now = this.now();
    const known = this.counts.get(spec.key);
    if (delta < 0 && (!known || now >= known.resetAt)) return;
    const c = this.localCount(spec, now);
    c.pending += delta;
    this.dirty.add(spec.key);
    this.syncTimer ??= setTimeout(() => void this.sync(), SYNC_MS).unref() as NodeJS.Timeout;
  }

  private async countInRedis(specs: CounterSpec[], now: number): Promise<Counted> {
    const counts = specs.map((spec) => this.localCount(spec, now));
    const pushed = counts.map((c) => c.pending - c.pushing);
    for (const [i, c] of counts.entries()) c.pushing += pushed[i];
    let r: number[];
    try {
      r = await this.redis.quotaConsume(
        specs.length,
        ...specs.map((s) => s.key),
        ...specs.flatMap((s, i) => [s.limit, s.windowMs, pushed[i], s.checkOnly ? 1 : 0]),
      );
    } catch {
      for (const [i, c] of counts.entries()) c.pushing -= pushed[i];
      this.redisFailedAt = this.now();
      return this.countHere(specs, this.now());
    }
    const at = this.now();
    for (const [i, c] of counts.entries()) {
      c.pushing -= pushed[i];
      this.settle(specs[i].key, c, pushed[i], r[2 * i + 2], r[2 * i + 3], at);
    }
    if (r[0] === 1) return { allowed: true, counts };
    return { allowed: false, refusedBy: r[1] - 1, counts };
  }

  /** Redis is away: this gateway's own counts decide (and reach Redis when it is back). */
  private countHere(specs: CounterSpec[], now: number): Counted {
    const counts = specs.map((spec) => this.localCount(spec, now));
    for (const [i, spec] of specs.entries())
      if (counts[i].count + counts[i].pending >= spec.limit) return { allowed: false, refusedBy: i, counts };
    for (const [i, spec] of specs.entries()) if (!spec.checkOnly) this.admit(spec.key, counts[i]);
    return { allowed: true, counts };
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
      .filter((b) => b.w && b.w.pending - b.w.pushing !== 0);
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
