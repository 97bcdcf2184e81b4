import type { GetProductRequest, Product } from '@licensing/proto';
import { ProductCache } from '../../src/caches/product-cache';
import { FakeBus } from '../../../../test/support/fakes/common';

// The licence service's cache of the products it issues from: exact through
// product.updated, bypassed while NATS is away, bounded in size and age.

class FakeProducts {
  calls = 0;
  version = 1;
  /** When set, the next look-up waits for it (to interleave an event with a look-up in flight). */
  gate?: Promise<void>;
  async getProduct(req: GetProductRequest): Promise<Product> {
    this.calls++;
    const version = this.version;
    if (this.gate) await this.gate;
    return { id: req.id, name: `v${version}` } as unknown as Product;
  }
}

const req = (id = 'prod_1', accountId = 'acct_1') => ({ account_id: accountId, id }) as GetProductRequest;

function setup(maxEntries = 100, ttlMs = 60_000) {
  const bus = new FakeBus();
  const products = new FakeProducts();
  let now = 1_000_000;
  const cache = new ProductCache(products, bus, maxEntries, ttlMs, () => now);
  return { bus, products, cache, advance: (ms: number) => (now += ms) };
}

it('asks the product service once per product, then answers from memory', async () => {
  const { products, cache } = setup();
  await cache.getProduct(req());
  expect((await cache.getProduct(req())).name).toBe('v1');
  expect(products.calls).toBe(1);
  await cache.getProduct(req('prod_1', 'acct_2')); // another account's product of the same id is another entry
  expect(products.calls).toBe(2);
});

it('product.updated makes the next issuance ask again, and see the new product', async () => {
  const { bus, products, cache } = setup();
  await cache.getProduct(req());
  products.version = 2;
  bus.emit('product.updated', 'acct_1', { product: { id: 'prod_1' } });
  expect((await cache.getProduct(req())).name).toBe('v2');
  expect(products.calls).toBe(2);
});

it('a fresh read asks the product service even on a hit, and keeps what it read', async () => {
  const { products, cache } = setup();
  await cache.getProduct(req());
  products.version = 2; // changed, and this instance has not heard of it yet
  expect((await cache.getProduct(req())).name).toBe('v1');
  expect((await cache.getFreshProduct(req())).name).toBe('v2');
  expect((await cache.getProduct(req())).name).toBe('v2');
  expect(products.calls).toBe(2);
});

it('while NATS is away it asks every time and keeps nothing; what it had is forgotten', async () => {
  const { bus, products, cache } = setup();
  await cache.getProduct(req());
  bus.status(false);
  expect(cache.size).toBe(0);
  await cache.getProduct(req());
  await cache.getProduct(req());
  expect(products.calls).toBe(3);
  expect(cache.size).toBe(0);
  bus.status(true);
  await cache.getProduct(req());
  await cache.getProduct(req());
  expect(products.calls).toBe(4);
});

it('a look-up that was in flight when its product changed is not kept', async () => {
  const { bus, products, cache } = setup();
  let open!: () => void;
  products.gate = new Promise((r) => (open = r));
  const inFlight = cache.getProduct(req());
  bus.emit('product.updated', 'acct_1', { product: { id: 'prod_1' } });
  open();
  await inFlight;
  products.gate = undefined;
  await cache.getProduct(req());
  expect(products.calls).toBe(2);
});

it('no entry outlives its time to live, and the oldest goes first beyond the size', async () => {
  const { products, cache, advance } = setup(2, 1000);
  await cache.getProduct(req('prod_1'));
  advance(1001);
  await cache.getProduct(req('prod_1'));
  expect(products.calls).toBe(2);
  await cache.getProduct(req('prod_2'));
  await cache.getProduct(req('prod_3'));
  expect(cache.size).toBe(2);
  await cache.getProduct(req('prod_1')); // evicted as the least recently used
  expect(products.calls).toBe(5);
});

it('size 0 turns it off', async () => {
  const { products, cache } = setup(0);
  await cache.getProduct(req());
  await cache.getProduct(req());
  expect(products.calls).toBe(2);
});
