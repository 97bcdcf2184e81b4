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
 */
export class ExactCache<V> {
  /** Insertion order is recency order: a hit moves its entry to the end. */
  private readonly entries = new Map<string, { value: V; until: number }>();
  /** Bumped by each eviction of a key in the bucket (a reconnect bumps the epoch). */
  private readonly generations = new Uint32Array(GENERATION_BUCKETS);
  private epoch = 0;

  constructor(
    private readonly bus: Pick<EventBus, 'connected' | 'onStatus'>,
    private readonly maxEntries: number,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
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
    this.entries.delete(key);
    if (hit.until <= this.now()) return undefined;
    this.entries.set(key, hit);
    return hit.value;
  }

  /** Call before reading the source; give the token to set(). */
  begin(key: string): number {
    return this.epoch * 2 ** 32 + this.generations[bucketOf(key)];
  }

  /** Stores what was read unless the key (or its bucket) was evicted, or the bus reconnected, since begin(). */
  set(key: string, value: V, token: number): boolean {
    if (!this.usable || token !== this.begin(key)) return false;
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { value, until: this.now() + this.ttlMs });
    return true;
  }

  evict(key: string): void {
    this.generations[bucketOf(key)]++;
    this.entries.delete(key);
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
