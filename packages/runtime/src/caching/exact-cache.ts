import type { Following } from '../events/followed-events';

const GENERATION_BUCKETS = 1024;
/**
 * Families share these generations: two families in one bucket (1 in 4096) only make one's
 * eviction drop the other's entries too, which costs a look-up, never a stale answer.
 */
const FAMILY_BUCKETS = 4096;

/**
 * An in-memory LRU that events keep exact, for a service's own copies of what
 * changes rarely and is read often. The owner subscribes to the events that
 * change an entry and calls evict(); this class makes the rest hold:
 * - while its events may be missed (NATS away, a gap or a silence in what it
 *   follows: followed-events.ts) nothing is read or stored, and everything is
 *   forgotten when that starts or ends;
 * - a look-up that was in flight when an eviction of its key arrived does not
 *   store what it read (begin() before reading, set() with its token after);
 * - no entry is used longer than `ttlMs`, in case an event is ever lost.
 * `scopeOf` names what an eviction spoils look-ups in flight for: the key itself
 * by default; a cache whose evictions can cover many keys at once (all of an
 * account's licences of a product) scopes by the part of the key they share.
 * `familyOf` names such a set of entries (an account's product), which
 * evictFamily() drops at once in O(1): each entry remembers its family's
 * generation when stored, and a read that finds the family bumped since drops
 * it. No eviction walks the entries, whatever their number.
 * Every cache built on it, with its bounds: docs/architecture.md, "A map of the caches".
 */
export class ExactCache<V> {
  /**
   * Insertion order is (nearly) recency order: a hit moves its entry to the end unless it is among the
   * most recent half already (moving costs a delete and an insert; the oldest are evicted first either way).
   */
  private readonly entries = new Map<string, Entry<V>>();
  /** Counts insertions and moves: an entry's `seq` says how recently it was put at the end. */
  private seq = 0;
  /** Bumped by each eviction of a key in the bucket (a reconnect bumps the epoch). */
  private readonly generations = new Uint32Array(GENERATION_BUCKETS);
  /** Bumped by each evictFamily() of a family in the bucket; an entry stored before is not used. */
  private readonly familyGenerations = new Uint32Array(FAMILY_BUCKETS);
  private epoch = 0;

  constructor(
    /** The events that keep it exact (EventBus.follow): nothing is read or stored while they may be missed. */
    private readonly bus: Following,
    private readonly maxEntries: number,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
    private readonly scopeOf: (key: string) => string = (key) => key,
    private readonly familyOf: (key: string, value: V) => string | undefined = () => undefined,
  ) {
    bus.onStatus(() => this.clear());
  }

  /** Entries are trusted only while every eviction reaches this process. */
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
    if (hit.until <= this.now() || (hit.family >= 0 && this.familyGenerations[hit.family] !== hit.familyGeneration)) {
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
    const name = this.familyOf(key, value);
    const family = name === undefined ? -1 : bucketOf(name, FAMILY_BUCKETS);
    this.entries.set(key, {
      value,
      until: Math.min(now, readAt ?? now) + this.ttlMs,
      seq: ++this.seq,
      family,
      familyGeneration: family < 0 ? 0 : this.familyGenerations[family],
    });
    return true;
  }

  evict(key: string): void {
    this.generations[bucketOf(this.scopeOf(key))]++;
    this.entries.delete(key);
  }

  /**
   * Evicts every entry of a family (of `scope`, whose look-ups in flight it spoils) in O(1): its
   * entries stay in the map, unused, until read (then dropped) or pushed out as least recently used.
   */
  evictFamily(scope: string, family: string): void {
    this.generations[bucketOf(scope)]++;
    this.familyGenerations[bucketOf(family, FAMILY_BUCKETS)]++;
  }

  clear(): void {
    this.epoch++;
    this.entries.clear();
  }
}

interface Entry<V> {
  value: V;
  until: number;
  seq: number;
  /** The family's bucket (-1: none) and its generation when stored. */
  family: number;
  familyGeneration: number;
}

/** FNV-1a: a cheap, stable spread of keys over the generation buckets. */
function bucketOf(key: string, buckets = GENERATION_BUCKETS): number {
  let h = 2166136261;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 16777619);
  return (h >>> 0) % buckets;
}
