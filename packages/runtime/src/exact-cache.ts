import type { EventBus } from './bus';

const GENERATION_BUCKETS = 1024;

/**
 * An in-memory LRU that events keep exact, for a service's own copies of what
 * changes rarely and is read often. The owner subscribes to the events that
 * change an entry and calls evict(); this class makes the rest hold:
 * - while the bus is not connected nothing is read or stored, and everything is
 *   forgotten when the connection drops or returns (events may have been missed);
 * - a look-up that was in flight when an eviction of its key arrived does not
 *   store what it read (begin() before reading, set() with its token after);
 * - no entry is used longer than `ttlMs`, in case an event is ever lost.
 * `scopeOf` names what an eviction spoils look-ups in flight for: the key itself
 * by default; a cache whose evictions can cover many keys at once (all of an
 * account's licences of a product) scopes by the part of the key they share.
 */
export class ExactCache<V> {
  /**
   * Insertion order is (nearly) recency order: a hit moves its entry to the end unless it is among the
   * most recent half already (moving costs a delete and an insert; the oldest are evicted first either way).
   */
  private readonly entries = new Map<string, { value: V; until: number; seq: number }>();
  /** Counts insertions and moves: an entry's `seq` says how recently it was put at the end. */
  private seq = 0;
  /** Bumped by each eviction of a key in the bucket (a reconnect bumps the epoch). */
  private readonly generations = new Uint32Array(GENERATION_BUCKETS);
  private epoch = 0;

  constructor(
    private readonly bus: Pick<EventBus, 'connected' | 'onStatus'>,
    private readonly maxEntries: number,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
    private readonly scopeOf: (key: string) => string = (key) => key,
  ) {
    bus.onStatus(() => this.clear());
  }

  /** Entries are trusted only while every eviction can reach this process. */
  get usable(): boolean {
    return this.maxEntries > 0 && this.bus.connected;
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: string): V | undefined {
    if (!this.usable) return undefined;
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (hit.until <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    if (this.seq - hit.seq > this.maxEntries / 2) {
      this.entries.delete(key);
      hit.seq = ++this.seq;
      this.entries.set(key, hit);
    }
    return hit.value;
  }

  /** Call before reading the source; give the token to set(). */
  begin(key: string): number {
    return this.epoch * 2 ** 32 + this.generations[bucketOf(this.scopeOf(key))];
  }

  /**
   * Stores what was read unless its scope saw an eviction, or the bus reconnected, since begin().
   * `readAt` (epoch ms): when the value was read at its source, if earlier than now (the TTL counts from then).
   */
  set(key: string, value: V, token: number, readAt?: number): boolean {
    if (!this.usable || token !== this.begin(key)) return false;
    const now = this.now();
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { value, until: Math.min(now, readAt ?? now) + this.ttlMs, seq: ++this.seq });
    return true;
  }

  evict(key: string): void {
    this.generations[bucketOf(this.scopeOf(key))]++;
    this.entries.delete(key);
  }

  /** Evicts the entries of one scope that `drop` picks (a walk of every entry: for rare events only). */
  evictWhere(scope: string, drop: (value: V) => boolean): void {
    this.generations[bucketOf(scope)]++;
    for (const [key, entry] of this.entries)
      if (this.scopeOf(key) === scope && drop(entry.value)) this.entries.delete(key);
  }

  clear(): void {
    this.epoch++;
    this.entries.clear();
  }
}

/** FNV-1a: a cheap, stable spread of keys over the generation buckets. */
function bucketOf(key: string): number {
  let h = 2166136261;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 16777619);
  return (h >>> 0) % GENERATION_BUCKETS;
}
