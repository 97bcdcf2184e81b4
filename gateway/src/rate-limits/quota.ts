import type { Redis } from 'ioredis';

// The two quota windows ("minute" per API key, "hour" per account) counted in
// Redis, shared by every gateway, at most one Redis round trip per request:
//
// - Exact mode: one Lua script counts the minute, then the hour, and gives the
//   minute back if the hour refuses, atomically.
// - Local mode, for windows with large limits (at least MIN_LOCAL_BATCH / share,
//   i.e. 1,000 at the default share of 1 %): while a window has more than 10
//   batches left, a gateway admits up to one batch (share × limit) on its own
//   and adds it to Redis in the background every SYNC_MS. Accuracy: the
//   counters in Redis trail by at most one batch per gateway; with up to five
//   gateways a window never passes its limit, each gateway more may add two
//   batches (2 % of the limit). Near the limit every request asks Redis.
// - Redis away: each gateway decides on its own counts (documented fallback)
//   and adds what it admitted to Redis when it is back.

export const MIN_LOCAL_BATCH = 10;
const SYNC_MS = 50;
/** After a Redis failure, decide locally this long before trying Redis on the request path again. */
const REDIS_BACKOFF_MS = 1000;
const MAX_WINDOWS = 100_000;

export interface LocalWindow {
  /** Count in Redis at the last answer (includes what this gateway pushed). */
  count: number;
  /** Admitted here and not yet added to Redis. */
  pending: number;
  /**
   * The part of `pending` on its way to Redis (a sync or a counted request awaits the answer): the other
   * one sends only the rest, or both would add it and the window would refuse early.
   */
  pushing: number;
  /** When the window ends (epoch ms). */
  resetAt: number;
}

/** May this gateway admit one more request in the window without asking Redis? */
export function admitsLocally(w: LocalWindow | undefined, limit: number, nowMs: number, share: number): boolean {
  if (!w || nowMs >= w.resetAt) return false;
  const batch = Math.floor(limit * share);
  if (batch < MIN_LOCAL_BATCH) return false;
  return w.pending < batch && w.count + w.pending + 1 <= limit - 10 * batch;
}

export interface WindowSpec {
  key: string;
  limit: number;
  windowMs: number;
}

export interface Counted {
  allowed: boolean;
  /** The window that refused, when one did. */
  refusedBy?: 'minute' | 'hour';
  minute: LocalWindow;
  hour: LocalWindow;
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

// KEYS: windows; ARGV: (n, ms) per window. Returns (count, pttl) per window.
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
  private readonly windows = new Map<string, LocalWindow>();
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

  /** Counts one request in both windows: from memory when both allow it, else one Redis round trip. */
  count(minute: WindowSpec, hour: WindowSpec): Counted | Promise<Counted> {
    const local = this.countLocally(minute, hour);
    if (local) return local;
    const now = this.now();
    if (this.redis.status !== 'ready' || now - this.redisFailedAt < REDIS_BACKOFF_MS)
      return this.countHere(minute, hour, now);
    return this.countInRedis(minute, hour, now);
  }

  /** Counts one request only if both windows can admit it from memory; undefined (nothing counted) otherwise. */
  countLocally(minute: WindowSpec, hour: WindowSpec): Counted | undefined {
    const now = this.now();
    const m = this.windows.get(minute.key);
    const h = this.windows.get(hour.key);
    if (!admitsLocally(m, minute.limit, now, this.share) || !admitsLocally(h, hour.limit, now, this.share))
      return undefined;
    this.admit(minute.key, m!);
    this.admit(hour.key, h!);
    return { allowed: true, minute: m!, hour: h! };
  }

  private async countInRedis(minute: WindowSpec, hour: WindowSpec, now: number): Promise<Counted> {
    const m = this.window(minute, now);
    const h = this.window(hour, now);
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
  private countHere(minute: WindowSpec, hour: WindowSpec, now: number): Counted {
    const m = this.window(minute, now);
    const h = this.window(hour, now);
    if (m.count + m.pending >= minute.limit) return { allowed: false, refusedBy: 'minute', minute: m, hour: h };
    if (h.count + h.pending >= hour.limit) return { allowed: false, refusedBy: 'hour', minute: m, hour: h };
    this.admit(minute.key, m);
    this.admit(hour.key, h);
    return { allowed: true, minute: m, hour: h };
  }

  /** The local state of a window, started afresh when it has ended. */
  private window(spec: WindowSpec, now: number): LocalWindow {
    let w = this.windows.get(spec.key);
    if (!w || now >= w.resetAt) {
      if (this.windows.size >= MAX_WINDOWS) this.forgetEnded(now);
      w = { count: 0, pending: 0, pushing: 0, resetAt: now + spec.windowMs };
      this.windows.set(spec.key, w);
      this.dirty.delete(spec.key); // what was pending belonged to the ended window
    }
    return w;
  }

  private settle(key: string, w: LocalWindow, pushed: number, count: number, pttl: number, at: number): void {
    w.pending -= pushed;
    w.count = count;
    w.resetAt = at + pttl;
    if (w.pending === 0) this.dirty.delete(key);
  }

  private admit(key: string, w: LocalWindow): void {
    w.pending++;
    this.dirty.add(key);
    this.syncTimer ??= setTimeout(() => void this.sync(), SYNC_MS).unref() as NodeJS.Timeout;
  }

  private windowMsOf(w: LocalWindow): number {
    return Math.max(1, w.resetAt - this.now());
  }

  /** Adds what was admitted locally to Redis, in one round trip for every window. */
  async sync(): Promise<void> {
    this.syncTimer = undefined;
    if (this.syncing || !this.dirty.size) return;
    if (this.redis.status !== 'ready') {
      this.syncTimer = setTimeout(() => void this.sync(), REDIS_BACKOFF_MS).unref() as NodeJS.Timeout;
      return;
    }
    this.syncing = true;
    const batch = [...this.dirty]
      .map((key) => ({ key, w: this.windows.get(key)! }))
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
    for (const [key, w] of this.windows) if (now >= w.resetAt) this.windows.delete(key);
  }

  /** Pushes what is pending (graceful shutdown). */
  async close(): Promise<void> {
    clearTimeout(this.syncTimer);
    await this.sync();
  }
}
