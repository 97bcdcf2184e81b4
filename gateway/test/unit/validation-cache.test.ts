import type { DomainEvent, EventType } from '@licensing/proto';
import { cacheKey, RECENT_EVICTION_MS, ValidationCache, type CachedAnswer } from '../../src/license-validation/cache';
import type { EventFeed } from '../../src/backends/event-feed';

// The cache's own rules with a fake event feed (pure logic: the e2e tests run it over real NATS).
class FakeFeed {
  connected = true;
  /** What the cache follows (license.>, product.updated): every event emitted here. */
  private followed?: (e: DomainEvent) => void;
  private readonly statusListeners: Array<(c: boolean) => void> = [];
  follow(_types: string[], handler: (e: DomainEvent) => void) {
    this.followed = handler;
    return this;
  }
  onStatus(listener: (c: boolean) => void) {
    this.statusListeners.push(listener);
  }
  emit(type: EventType, accountId: string, data: unknown) {
    this.followed!({ id: 'evt_1', type, account_id: accountId, created_at: '', data } as DomainEvent);
  }
  flap() {
    for (const l of this.statusListeners) l(false);
  }
}

const absent: CachedAnswer = { found: false };
/** A found licence of a product (only what the cache looks at). */
const ofProduct = (productId: string) => ({ found: true, facts: { product_id: productId } }) as unknown as CachedAnswer;

/** How many entries of any Map `during` iterates: the cost of a walk, counted rather than timed. */
function mapEntriesVisited(during: () => void): number {
  const proto = Map.prototype as unknown as Record<string | symbol, (...args: unknown[]) => unknown>;
  const names = [Symbol.iterator, 'entries', 'keys', 'values', 'forEach'] as const;
  const originals = names.map((name) => proto[name]);
  let visited = 0;
  const counting = (original: (...args: unknown[]) => unknown) =>
    function (this: Map<unknown, unknown>, ...args: unknown[]) {
      if (original === originals[4]) {
        const [fn, self] = args as [(...a: unknown[]) => void, unknown];
        return original.call(this, (...a: unknown[]) => {
          visited++;
          return fn.apply(self, a);
        });
      }
      const it = original.call(this) as Iterator<unknown>;
      return {
        next() {
          const r = it.next();
          if (!r.done) visited++;
          return r;
        },
        [Symbol.iterator]() {
          return this;
        },
      };
    };
  names.forEach((name, i) => {
    proto[name] = counting(originals[i]);
  });
  try {
    during();
  } finally {
    names.forEach((name, i) => {
      proto[name] = originals[i];
    });
  }
  return visited;
}
const key = (n: number) => cacheKey('acct_a', `KEY-${n}`);

function cache(maxEntries = 3, ttlMs = 60_000) {
  const feed = new FakeFeed();
  let now = 1_000;
  const c = new ValidationCache(
    maxEntries,
    ttlMs,
    feed as unknown as EventFeed,
    () => undefined,
    () => now,
  );
  return { c, feed, tick: (ms: number) => (now += ms) };
}

describe('validation cache', () => {
  it('holds at most maxEntries, dropping the least recently used', () => {
    const { c } = cache(3);
    for (const n of [1, 2, 3]) c.set(key(n), absent, c.begin(key(n)));
    expect(c.get(key(1))).toEqual(absent); // 1 is now the most recent
    c.set(key(4), absent, c.begin(key(4)));
    expect(c.size).toBe(3);
    expect(c.get(key(2))).toBeUndefined();
    expect(c.get(key(1))).toEqual(absent);
  });

  it('forgets an entry after its TTL even without an event', () => {
    const { c, tick } = cache(3, 60_000);
    c.set(key(1), absent, c.begin(key(1)));
    tick(59_999);
    expect(c.get(key(1))).toEqual(absent);
    tick(60_000);
    expect(c.get(key(1))).toBeUndefined();
  });

  it('an answer the licence service gave from its memory lives no longer than the TTL from its read', () => {
    const { c, tick } = cache(3, 60_000);
    c.set(key(1), absent, c.begin(key(1)), 1_000 - 50_000); // read from the store 50 s ago
    tick(9_999);
    expect(c.get(key(1))).toEqual(absent);
    tick(1);
    expect(c.get(key(1))).toBeUndefined();
  });

  it('for 10 s after it evicted a key, it says so (its next look-up asks for a store read)', () => {
    const { c, feed, tick } = cache();
    expect(c.evictedLately(key(1))).toBe(false);
    feed.emit('license.suspended', 'acct_a', { license: { key: 'KEY-1' } });
    expect(c.evictedLately(key(1))).toBe(true);
    expect(c.evictedLately(key(2))).toBe(false);
    tick(RECENT_EVICTION_MS - 1);
    c.forget('acct_a', 'KEY-2'); // this gateway's own change
    expect(c.evictedLately(key(1))).toBe(true);
    tick(1);
    expect(c.evictedLately(key(1))).toBe(false);
    expect(c.evictedLately(key(2))).toBe(true);
  });

  it('for 10 s after product.updated, it says the product was changed (its licences are then read afresh)', () => {
    const { c, feed, tick } = cache();
    expect(c.productEvictedLately('acct_a', 'prod_1')).toBe(false);
    feed.emit('product.updated', 'acct_a', { product: { id: 'prod_1' } });
    expect(c.productEvictedLately('acct_a', 'prod_1')).toBe(true);
    expect(c.productEvictedLately('acct_a', 'prod_2')).toBe(false);
    expect(c.productEvictedLately('acct_b', 'prod_1')).toBe(false); // another account's product of that id
    expect(c.productEvictedLately('acct_a', '')).toBe(false); // a request naming no product
    expect(c.evictedLately(key(1))).toBe(false); // one entry for the product, none per licence
    tick(RECENT_EVICTION_MS - 1);
    c.forgetProduct('acct_a', 'prod_2'); // this gateway's own change
    tick(1);
    expect(c.productEvictedLately('acct_a', 'prod_1')).toBe(false);
    expect(c.productEvictedLately('acct_a', 'prod_2')).toBe(true);
  });

  it('drops a negative entry when a licence with that key is created in the account', () => {
    const { c, feed } = cache();
    c.set(key(1), absent, c.begin(key(1)));
    c.set(cacheKey('acct_b', 'KEY-1'), absent, c.begin(cacheKey('acct_b', 'KEY-1')));
    feed.emit('license.created', 'acct_a', { license: { key: 'KEY-1' } });
    expect(c.get(key(1))).toBeUndefined();
    expect(c.get(cacheKey('acct_b', 'KEY-1'))).toEqual(absent); // another account's "not found" still holds
  });

  it('a product change drops that product’s licences of the account, and visits no entry whatever the cache holds', () => {
    const { c, feed } = cache(20_000);
    const put = (k: string, answer: CachedAnswer) => {
      if (!c.set(k, answer, c.begin(k))) throw new Error(`not stored: ${k}`);
    };
    for (let n = 0; n < 10_000; n++) put(key(n), ofProduct('prod_other'));
    for (let n = 10_000; n < 10_010; n++) put(key(n), ofProduct('prod_1'));
    put(key(10_010), absent);
    put(cacheKey('acct_b', 'KEY-1'), ofProduct('prod_1')); // the same product id in another account
    const visited = mapEntriesVisited(() => feed.emit('product.updated', 'acct_a', { product: { id: 'prod_1' } }));
    expect(visited).toBe(0); // O(1): the old walk visited all 10,012 entries
    for (let n = 10_000; n < 10_010; n++) expect(c.get(key(n))).toBeUndefined();
    expect(c.get(key(0))).toEqual(ofProduct('prod_other'));
    expect(c.get(key(9_999))).toEqual(ofProduct('prod_other'));
    expect(c.get(key(10_010))).toEqual(absent);
    expect(c.get(cacheKey('acct_b', 'KEY-1'))).toEqual(ofProduct('prod_1'));
    // Stored again after the change, a licence of the product is used again.
    put(key(10_000), ofProduct('prod_1'));
    expect(c.get(key(10_000))).toEqual(ofProduct('prod_1'));
  });

  it('a look-up of the account in flight while its product changed is not kept', () => {
    const { c, feed } = cache();
    const since = c.begin(key(1));
    feed.emit('product.updated', 'acct_a', { product: { id: 'prod_1' } });
    expect(c.set(key(1), ofProduct('prod_2'), since)).toBe(false);
    expect(c.set(key(1), ofProduct('prod_2'), c.begin(key(1)))).toBe(true);
  });

  it('does not keep a lookup that started before an eviction in its account, nor one across a reconnect', () => {
    const { c, feed } = cache();
    const since = c.begin(key(1));
    feed.emit('license.revoked', 'acct_a', { license: { key: 'KEY-9' } });
    expect(c.set(key(1), absent, since)).toBe(false);
    const again = c.begin(key(1));
    feed.flap();
    expect(c.set(key(1), absent, again)).toBe(false);
    expect(c.set(key(1), absent, c.begin(key(1)))).toBe(true);
  });

  it('is neither read nor filled while the feed is disconnected, and is emptied when the connection changes', () => {
    const { c, feed } = cache();
    c.set(key(1), absent, c.begin(key(1)));
    feed.connected = false;
    expect(c.get(key(1))).toBeUndefined();
    expect(c.set(key(2), absent, c.begin(key(2)))).toBe(false);
    feed.connected = true;
    feed.flap();
    expect(c.size).toBe(0);
  });
});
