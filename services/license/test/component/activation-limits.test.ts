import { LicenseServiceClient, Product, ProductServiceService, WebhookServiceService } from '@licensing/proto';
import { AppError, createClient, newId } from '@licensing/runtime';
import { type FakePeer, startFakePeer } from '@licensing/test-support';
import { start } from '../../src/main';
import { credentialOf, envFor } from '../../../../scripts/lib/topology';
import { setUpEvents } from '../../../../scripts/lib/events-setup';
import { testTopology } from '../../../../test/support/stack';

// Activation is bounded work: one count refuses a full licence, then a few rounds of one read and one
// unique insert. Unique (license_id, slot) inserts hold max_activations under concurrency, on real
// FerretDB (whose updates are not atomic). The licence service alone over gRPC, its product service
// faked: a product per max_activations. How the gateway answers these calls (201, 200, 409):
// gateway/test/component/license-activation-routes.test.ts.

const t = testTopology();
const account = newId('acct');
const productsByMax = new Map<string, Product>();
let products: FakePeer<typeof ProductServiceService>;
let webhooks: FakePeer<typeof WebhookServiceService>;
let service: Awaited<ReturnType<typeof start>>;
let licenses: ReturnType<typeof createClient<LicenseServiceClient>>;

beforeAll(async () => {
  products = await startFakePeer(ProductServiceService, {
    getProduct: ({ id }) => {
      const found = productsByMax.get(id);
      if (!found) throw AppError.notFound('product');
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
  await service?.ctx.db.dropDatabase().catch(() => undefined);
  await service?.stop();
  await products?.stop();
  await webhooks?.stop();
});

async function licenseWith(maxActivations: number): Promise<string> {
  const product = Product.fromPartial({
    id: newId('prod'),
    account_id: account,
    name: `Max ${maxActivations}`,
    created_at: new Date().toISOString(),
    policy: { max_activations: maxActivations, refund_action: 'revoke', entitlements: [] },
  });
  productsByMax.set(product.id, product);
  const issued = await licenses.call.createLicense({
    account_id: account,
    product_id: product.id,
    customer_email: 'a@example.com',
    idempotency_key: '',
    send_email: false,
  });
  return issued.key;
}

/** created, refused (the licence is full), or the error itself. */
const activate = (key: string, fingerprint: string) =>
  licenses.call.activate({ account_id: account, key, fingerprint, name: '' }).then(
    (out) => (out.created ? ('created' as const) : ('again' as const)),
    (err: unknown) => {
      if (err instanceof AppError && err.code === 'conflict') return 'full' as const;
      throw err;
    },
  );
const activations = async (key: string) =>
  (await licenses.call.listActivations({ account_id: account, key, page: { limit: 100, starting_after: '' } })).data;

it.each([3, 10])('10 concurrent activations of a licence with max_activations %i never exceed it', async (max) => {
  const key = await licenseWith(max);
  const results = await Promise.all(Array.from({ length: 10 }, (_, i) => activate(key, `machine-${i}`)));
  const created = results.filter((r) => r === 'created').length;
  expect(results.every((r) => r === 'created' || r === 'full')).toBe(true);
  expect(created).toBeLessThanOrEqual(max);
  const listed = (await activations(key)).length;
  expect(listed).toBe(created);
  if (max === 3) expect(created).toBe(3);
  // Whatever lost a race can try again and gets the slots that are left.
  for (let i = 0; i < 10 && listed < max; i++) await activate(key, `machine-${i}`);
  expect(await activations(key)).toHaveLength(max);
  expect(await activate(key, 'one-too-many')).toBe('full');
});

it('a licence with max_activations 10,000 activates, answers a retry with the same activation, and finds a freed slot again', async () => {
  const key = await licenseWith(10_000);
  const first = await licenses.call.activate({ account_id: account, key, fingerprint: 'machine-a', name: '' });
  expect(first.created).toBe(true);
  const retry = await licenses.call.activate({ account_id: account, key, fingerprint: 'machine-a', name: '' });
  expect(retry).toMatchObject({ created: false, activation: { id: first.activation!.id } }); // not a second one
  await licenses.call.deactivate({
    account_id: account,
    key,
    activation_id: first.activation!.id,
    key_scope: 'full',
    fingerprint: '',
  });
  expect(await activate(key, 'machine-b')).toBe('created');
});
