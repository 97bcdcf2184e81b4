import { ExactCache, NOT_FOLLOWING, type CallOptions, type EventBus } from '@licensing/runtime';
import type { GetProductRequest, Product } from '@licensing/proto';
import type { ProductLookup } from '../use-cases/deps';

/**
 * The products licences are issued from, remembered between issuances and between
 * answers (a licence's entitlements are its product's current ones, read here on every
 * licence answer and validation): this instance asks the product service only for a
 * product it has not seen lately (an issuance was a gRPC call and a store read there; measured in
 * docs/benchmarks.md, "At scale"). Kept exact by product.updated, which evicts the
 * product on every instance (followed from the stream: a lost one empties the cache,
 * followed-events.ts); while this instance cannot hear NATS it remembers
 * nothing and asks every time, and no entry lives longer than `ttlMs` in case an
 * event is ever lost. A product fetched while its update arrived is not kept.
 * Its bounds: docs/architecture.md, "A map of the caches".
 */
export class ProductCache implements ProductLookup {
  private readonly cache: ExactCache<Product>;

  constructor(
    private readonly source: ProductLookup,
    bus: Pick<EventBus, 'follow'>,
    maxEntries: number,
    ttlMs: number,
    now: () => number = Date.now,
  ) {
    const events =
      maxEntries > 0
        ? bus.follow(['product.updated'], (event) => {
            const productId = event.data.product?.id;
            if (typeof productId === 'string') this.evict(event.account_id, productId);
          })
        : NOT_FOLLOWING;
    this.cache = new ExactCache(events, maxEntries, ttlMs, now);
  }

  async getProduct(req: GetProductRequest, opts?: CallOptions): Promise<Product> {
    const key = keyOf(req.account_id, req.id);
    const hit = this.cache.get(key);
    if (hit) return hit;
    return this.fetch(key, req, opts);
  }

  /** Read past the cache (a gateway heard the product change lately; this instance may hear it later), and kept. */
  getFreshProduct(req: GetProductRequest, opts?: CallOptions): Promise<Product> {
    return this.fetch(keyOf(req.account_id, req.id), req, opts);
  }

  private async fetch(key: string, req: GetProductRequest, opts?: CallOptions): Promise<Product> {
    const token = this.cache.begin(key);
    const product = await this.source.getProduct(req, opts);
    this.cache.set(key, product, token);
    return product;
  }

  evict(accountId: string, productId: string): void {
    this.cache.evict(keyOf(accountId, productId));
  }

  get size(): number {
    return this.cache.size;
  }
}

const keyOf = (accountId: string, productId: string) => `${accountId}\u0000${productId}`;
