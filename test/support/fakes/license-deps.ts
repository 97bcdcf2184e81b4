import type { LicensePolicy, Product } from '@licensing/proto';
import type { LicenseDeps } from '../../../services/license/src/use-cases/deps';
import { issueLicense } from '../../../services/license/src/use-cases/issue-license';
import { FakeProducts } from './checkout-peers';
import { FakeClock, RecordingOutbox } from './common';
import { FakeLicenseStore, FakeValidationCounter } from './license-stores';

export const PRODUCT_ID = 'prod_01HZZZZZZZZZZZZZZZZZZZZZZZ';

export const policy = (over: Partial<LicensePolicy> = {}): LicensePolicy => ({
  duration_days: 365,
  max_activations: 2,
  grace_days: 7,
  require_activation: false,
  validate_keys_see_email: false,
  refund_action: 'revoke',
  entitlements: [],
  expiration_strategy: 'restrict',
  ...over,
});

export const product = (over: Partial<Product> = {}): Product => ({
  id: PRODUCT_ID,
  account_id: 'acct_A',
  name: 'Editor',
  description: '',
  created_at: new Date(0).toISOString(),
  policy: policy(),
  price: undefined,
  email_on_purchase: true,
  ...over,
});

/** A licence service's use cases over in-memory stores, with product prod_… of acct_A (365 days, 2 machines, 7 days' grace). */
export function licenseSetup(productOver: Partial<Product> = {}) {
  const store = new FakeLicenseStore();
  const outbox = new RecordingOutbox();
  const clock = new FakeClock();
  const products = new FakeProducts();
  const counter = new FakeValidationCounter();
  const p = product(productOver);
  products.products.set(p.id, p);
  const deps: LicenseDeps = { store, outbox, clock, products };
  /** Issues a licence of the product to buyer@example.com, then forgets what the issue recorded. */
  const issued = async (accountId = 'acct_A') => {
    const { doc } = await issueLicense(deps, accountId, { product_id: p.id, customer_email: 'buyer@example.com' });
    store.events.length = 0;
    outbox.flushed.length = 0;
    products.calls.length = 0;
    return doc;
  };
  return { store, outbox, clock, products, counter, product: p, deps, issued };
}
