import type { Product } from '@licensing/proto';
import type { SessionCreationDeps } from '../../../services/checkout/src/use-cases/create-session';
import { FakeClock, RecordingOutbox } from './common';
import { FakeCheckoutStore } from './checkout-store';
import { FakeProducts, FakeProvider } from './checkout-peers';

export const BASE_URL = 'https://shop.example';

export const priced = (over: Partial<Product> = {}): Product => ({
  id: 'prod_01HZZZZZZZZZZZZZZZZZZZZZZZ',
  accountId: 'acct_A',
  name: 'Editor',
  description: '',
  createdAt: new Date(0).toISOString(),
  policy: { graceDays: 0, requireActivation: false, validateKeysSeeEmail: false, refundAction: 'revoke' },
  price: { amount: 4900, currency: 'EUR' },
  ...over,
});

export function checkoutSetup(provider = new FakeProvider()) {
  const store = new FakeCheckoutStore();
  const outbox = new RecordingOutbox();
  const clock = new FakeClock();
  const products = new FakeProducts();
  const product = priced();
  products.products.set(product.id, product);
  const deps: SessionCreationDeps = { store, outbox, clock, products, provider, baseUrl: BASE_URL };
  return { store, outbox, clock, products, provider, product, deps };
}
