import type { CallOptions, EventBus } from '@licensing/runtime';
import type { GetProductRequest, Product } from '@licensing/proto';
import type { ProductLookup } from '../use-cases/deps';

/**
 * The products licences are issued from, remembered between issuances: issuing a
 * licence asks the product service only for a product this instance has not seen
 * lately (an issuance was a gRPC call and a store read there; measured in
 * docs/benchmarks.md, "At scale"). Kept exact by product.updated, which evicts the
 * product on every instance; while this instance cannot hear NATS it remembers
 * nothing and asks every time, and no entry lives longer than `ttlMs` in case an
 * event is ever lost. A product fetched while its update arrived is not kept.
 */
export class ProductCache implements ProductLookup {
  private readonly entries = new Map<string, { product: Product; until: number }>();
  /** Bumped by every eviction: a look-up that started before one does not store its answer. */
  private generation = 0;

  constructor(
    private readonly source: ProductLookup,
    private readonly bus: Pick<EventBus, 'connected' | 'onStatus' | 'subscribe'>,
    private readonly maxEntries: number,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {
    bus.subscribe('product.updated', (event) => {
      const product = (event.data as { product?: { id?: string } }).product;
      if (product?.id) this.evict(event.account_id, product.id);
    });
    // Events sent while disconnected are lost to this instance: forget everything, both ways.
    bus.onStatus(() => this.clear());
  }

  async getProduct(req: GetProductRequest, opts?: CallOptions): Promise<Product> {
    if (this.maxEntries === 0 || !this.bus.connected) return this.source.getProduct(req, opts);
    const key = keyOf(req.account_id, req.id);
    const hit = this.entries.get(key);
    if (hit && hit.until > this.now()) {
      this.entries.delete(key); // most recently used last
      this.entries.set(key, hit);
      return hit.product;
    }
    const generation = this.generation;
    const product = await this.source.getProduct(req, opts);
    if (generation === this.generation && this.bus.connected) {
      this.entries.delete(key);
      this.entries.set(key, { product, until: this.now() + this.ttlMs });
      if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    }
    return product;
  }

  evict(accountId: string, productId: string): void {
    this.generation++;
    this.entries.delete(keyOf(accountId, productId));
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}

const keyOf = (accountId: string, productId: string) => `${accountId}\u0000${productId}`;
