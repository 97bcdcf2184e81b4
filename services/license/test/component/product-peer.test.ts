import {
  LicenseServiceClient,
  ProductServiceService,
  WebhookServiceService,
  type LicensePolicy,
  type Product,
} from '@licensing/proto';
import { AppError, createClient, newId } from '@licensing/runtime';
import { type FakePeer, startFakePeer } from '@licensing/test-support';
import { start } from '../../src/main';
import { credentialOf, envFor } from '../../../../scripts/lib/topology';
import { setUpEvents } from '../../../../scripts/lib/events-setup';
import { testTopology } from '../../../../test/support/stack';

// The licence service alone, over gRPC, against real FerretDB and NATS, with the product service (and
// the webhook service it calls only for imports) faked at the gRPC boundary: a licence takes its
// policy from the product service's answer and its entitlements from the product's current ones, and
// an unknown product or a product service that is away is an error the caller can read, never a licence.

const t = testTopology();
const account = newId('acct');
const missing = newId('prod');
const policy: LicensePolicy = {
  duration_days: 30,
  max_activations: 2,
  grace_days: 3,
  require_activation: false,
  validate_keys_see_email: false,
  refund_action: 'revoke',
  entitlements: ['export'],
  expiration_strategy: 'restrict',
};
const editor: Product = {
  id: newId('prod'),
  account_id: account,
  name: 'Editor',
  description: '',
  created_at: '2026-01-01T00:00:00.000Z',
  policy,
  price: undefined,
  email_on_purchase: true,
};

let products: FakePeer<typeof ProductServiceService>;
let webhooks: FakePeer<typeof WebhookServiceService>;
let service: Awaited<ReturnType<typeof start>>;
let licenses: ReturnType<typeof createClient<LicenseServiceClient>>;

const knownProducts = new Map<string, Product>([[editor.id, editor]]);

beforeAll(async () => {
  products = await startFakePeer(ProductServiceService, {
    getProduct: ({ account_id, id }) => {
      const found = knownProducts.get(id);
      if (!found || found.account_id !== account_id) throw new AppError('not_found', `product ${id} not found`);
      return found;
    },
  });
  webhooks = await startFakePeer(WebhookServiceService, {});
  await setUpEvents(t);
  service = await start({
    env: envFor('license', t, { port: 0, addrs: { product: products.address, webhook: webhooks.address } }),
  });
  licenses = createClient(LicenseServiceClient, `127.0.0.1:${service.port}`, credentialOf(t, 'gateway'));
});

afterAll(async () => {
  licenses?.close();
  await service?.ctx.db.dropDatabase();
  await service?.stop();
  await products?.stop();
  await webhooks?.stop();
});

it("issues a licence under the product service's policy, asking it as the licence service", async () => {
  const issued = await licenses.call.createLicense({
    account_id: account,
    product_id: editor.id,
    customer_email: 'ann@example.com',
    idempotency_key: '',
    send_email: false,
  });
  expect(issued).toMatchObject({ product_id: editor.id, status: 'active', entitlements: ['export'] });
  expect(issued.policy).toMatchObject({ duration_days: 30, max_activations: 2, grace_days: 3 });
  const asked = products.calls.filter((c) => c.method === 'getProduct');
  expect(asked.at(-1)).toMatchObject({ caller: 'license', request: { account_id: account, id: editor.id } });
});

it('refuses a product the product service does not know, with its not_found, and stores nothing', async () => {
  const err = await licenses.call
    .createLicense({
      account_id: account,
      product_id: missing,
      customer_email: 'cat@example.com',
      idempotency_key: '',
      send_email: false,
    })
    .catch((e: unknown) => e);
  expect(err).toBeInstanceOf(AppError);
  expect(err).toMatchObject({ code: 'not_found', message: `product ${missing} not found` });
  const listed = await licenses.call.listLicenses({
    account_id: account,
    page: undefined,
    product_id: missing,
    customer_email: '',
    status: '',
  });
  expect(listed.data).toEqual([]);
});

it('answers unavailable, not internal, while the product service is away', async () => {
  const port = products.port;
  await products.stop();
  try {
    const err = await licenses.call
      .createLicense({
        account_id: account,
        product_id: newId('prod'),
        customer_email: 'dan@example.com',
        idempotency_key: '',
        send_email: false,
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('service_unavailable');
  } finally {
    products = await startFakePeer(ProductServiceService, { getProduct: () => editor }, { port });
  }
});
