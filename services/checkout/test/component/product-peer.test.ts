import {
  CheckoutServiceClient,
  LicenseServiceService,
  ProductServiceService,
  type CreateCheckoutSessionRequest,
  type Product,
} from '@licensing/proto';
import { AppError, createClient, newId } from '@licensing/runtime';
import { type FakePeer, startFakePeer, stopAndDrop } from '@licensing/test-support';
import { start } from '../../src/main';
import { credentialOf, envFor } from '../../../../scripts/lib/topology';
import { setUpEvents } from '../../../../scripts/lib/events-setup';
import { testTopology } from '../../../../test/support/stack';

// The checkout service alone, over gRPC, against real FerretDB and NATS, with the product and licence
// services faked at the gRPC boundary: a session is priced from the product service's answer (price
// times seats), a product without a price or unknown to the product service is refused with an error
// the caller can read, and no session is stored for it.

const t = testTopology();
const account = newId('acct');
const product = (over: Partial<Product> = {}): Product => ({
  id: newId('prod'),
  account_id: account,
  name: 'Editor',
  description: '',
  created_at: '2026-01-01T00:00:00.000Z',
  policy: undefined,
  price: { amount: 1500, currency: 'EUR' },
  email_on_purchase: true,
  ...over,
});
const priced = product();
const seats = product({ price: { amount: 400, currency: 'EUR', interval: 'month', interval_count: 1 } });
const unpriced = product({ price: undefined });
const catalogue = new Map([priced, seats, unpriced].map((p) => [p.id, p]));

let products: FakePeer<typeof ProductServiceService>;
let licenses: FakePeer<typeof LicenseServiceService>;
let service: Awaited<ReturnType<typeof start>>;
let checkout: ReturnType<typeof createClient<CheckoutServiceClient>>;

const session = (over: Partial<CreateCheckoutSessionRequest>): CreateCheckoutSessionRequest => ({
  account_id: account,
  product_id: priced.id,
  customer_email: 'ann@example.com',
  success_url: 'https://vendor.example/thanks',
  cancel_url: 'https://vendor.example/cancelled',
  metadata: {},
  expires_in_minutes: 0,
  idempotency_key: '',
  ...over,
});

beforeAll(async () => {
  products = await startFakePeer(ProductServiceService, {
    getProduct: ({ account_id, id }) => {
      const found = catalogue.get(id);
      if (!found || found.account_id !== account_id) throw new AppError('not_found', `product ${id} not found`);
      return found;
    },
  });
  // Only a paid session calls it (to issue the licence): none is paid here.
  licenses = await startFakePeer(LicenseServiceService, {});
  await setUpEvents(t);
  service = await start({
    env: envFor('checkout', t, {
      port: 0,
      httpPort: 0,
      addrs: { product: products.address, license: licenses.address },
    }),
  });
  checkout = createClient(CheckoutServiceClient, `127.0.0.1:${service.port}`, credentialOf(t, 'gateway'));
});

afterAll(async () => {
  checkout?.close();
  await stopAndDrop('the checkout service', service);
  await products?.stop();
  await licenses?.stop();
});

it("prices a session from the product service's answer, asking it as the checkout service", async () => {
  const opened = await checkout.call.createSession(session({}));
  expect(opened).toMatchObject({ product_id: priced.id, status: 'open', amount: 1500, currency: 'EUR' });
  expect(products.calls.at(-1)).toMatchObject({
    method: 'getProduct',
    caller: 'checkout',
    request: { account_id: account, id: priced.id },
  });
  await expect(checkout.call.getSession({ account_id: account, id: opened.id })).resolves.toMatchObject({
    id: opened.id,
    amount: 1500,
  });
  expect(licenses.calls).toEqual([]);
});

it('charges a recurring price per seat', async () => {
  const opened = await checkout.call.createSession(session({ product_id: seats.id, quantity: 3 }));
  expect(opened).toMatchObject({ amount: 1200, quantity: 3 });
});

it('refuses a product without a price, naming product_id, and one the product service does not know', async () => {
  const noPrice = await checkout.call.createSession(session({ product_id: unpriced.id })).catch((e: unknown) => e);
  expect(noPrice).toBeInstanceOf(AppError);
  expect(noPrice).toMatchObject({
    code: 'invalid_request',
    fieldErrors: [expect.objectContaining({ field: 'product_id' })],
  });
  const missing = newId('prod');
  const unknown = await checkout.call.createSession(session({ product_id: missing })).catch((e: unknown) => e);
  expect(unknown).toMatchObject({ code: 'not_found', message: `product ${missing} not found` });
});
