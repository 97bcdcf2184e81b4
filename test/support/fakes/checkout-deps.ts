import { newId } from '@licensing/runtime';
import type { Product } from '@licensing/proto';
import type { SessionDoc } from '../../../services/checkout/src/store/models';
import type { SessionCreationDeps } from '../../../services/checkout/src/use-cases/create-session';
import { FakeClock, RecordingOutbox } from './common';
import { FakeCheckoutStore } from './checkout-store';
import { FakeProducts, FakeProvider } from './checkout-peers';

export const BASE_URL = 'https://shop.example';

export const priced = (over: Partial<Product> = {}): Product => ({
  id: 'prod_01HZZZZZZZZZZZZZZZZZZZZZZZ',
  account_id: 'acct_A',
  name: 'Editor',
  description: '',
  created_at: new Date(0).toISOString(),
  policy: {
    grace_days: 0,
    require_activation: false,
    validate_keys_see_email: false,
    refund_action: 'revoke',
    entitlements: [],
    expiration_strategy: 'restrict',
  },
  price: { amount: 4900, currency: 'EUR' },
  email_on_purchase: true,
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

/** A stored session, open for an hour from the clock's time unless told otherwise. */
export function sessionDoc(now: Date, over: Partial<SessionDoc> = {}): SessionDoc {
  return {
    _id: newId('cs'),
    account_id: 'acct_A',
    product_id: priced().id,
    product_name: 'Editor',
    status: 'open',
    amount: 4900,
    currency: 'EUR',
    customer_email: 'buyer@example.com',
    success_url: 'https://vendor.example/thanks',
    cancel_url: '',
    metadata: {},
    expires_at: new Date(now.getTime() + 3600_000),
    created_at: now,
    license_key: null,
    payment_id: null,
    paid_at: null,
    provider: 'test',
    provider_session_id: '',
    provider_url: '',
    livemode: false,
    refund_action: 'revoke',
    paid_with: null,
    refunded_at: null,
    ...over,
  };
}
