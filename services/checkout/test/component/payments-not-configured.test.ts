import { credentials } from '@grpc/grpc-js';
import {
  CheckoutServiceClient,
  CreateCheckoutSessionRequest,
  ListCheckoutSessionsRequest,
  health,
  LicenseServiceService,
  PAYMENTS_HEALTH,
  ProductServiceService,
} from '@licensing/proto';
import { checkHealth, createClient, newId } from '@licensing/runtime';
import { type FakePeer, startFakePeer, stopAndDrop } from '@licensing/test-support';
import { start } from '../../src/main';
import { credentialOf, envFor } from '../../../../scripts/lib/topology';
import { setUpEvents } from '../../../../scripts/lib/events-setup';
import { freePort } from '../../../../scripts/lib/net';
import { testTopology } from '../../../../test/support/stack';

// A fresh deployment with Stripe chosen and no keys yet (the placeholders deploy/make-secrets.sh
// writes): the checkout service starts and serves, its health says payments are not ready (the
// gateway's /api/v1/status shows it: gateway/test/component/payments-not-configured.test.ts), and new
// checkout sessions and the Stripe webhook are refused with a message that says what to do
// (docs/operations.md, "Payments"). Against real FerretDB and NATS, its peers faked.

const t = testTopology({
  paymentProvider: 'stripe',
  stripeSecretKey: 'replace-me: your Stripe secret key, sk_live_... (docs/operations.md, Payments)',
  stripeWebhookSecret: 'replace-me: the whsec_... signing secret of your Stripe webhook endpoint',
});
const account = newId('acct');
let products: FakePeer<typeof ProductServiceService>;
let licenses: FakePeer<typeof LicenseServiceService>;
let service: Awaited<ReturnType<typeof start>>;
let checkout: ReturnType<typeof createClient<CheckoutServiceClient>>;
let healthClient: health.HealthClient;
let webhookUrl: string;

beforeAll(async () => {
  products = await startFakePeer(ProductServiceService, {
    getProduct: ({ id }) => ({
      id,
      account_id: account,
      name: 'Priced',
      description: '',
      created_at: '2026-01-01T00:00:00.000Z',
      policy: undefined,
      price: { amount: 4900, currency: 'EUR' },
      email_on_purchase: true,
    }),
  });
  licenses = await startFakePeer(LicenseServiceService, {});
  await setUpEvents(t);
  const httpPort = await freePort();
  service = await start({
    env: envFor('checkout', t, { port: 0, httpPort, addrs: { product: products.address, license: licenses.address } }),
  });
  webhookUrl = `http://127.0.0.1:${httpPort}/webhooks/stripe`;
  const address = `127.0.0.1:${service.port}`;
  checkout = createClient(CheckoutServiceClient, address, credentialOf(t, 'gateway'));
  healthClient = new health.HealthClient(address, credentials.createInsecure());
});

afterAll(async () => {
  checkout?.close();
  healthClient?.close();
  await stopAndDrop('the checkout service', service);
  await products?.stop();
  await licenses?.stop();
});

it('starts and serves, and says through its health that payments are not configured', async () => {
  expect((await checkHealth(healthClient, 2000)).serving).toBe(true);
  expect((await checkHealth(healthClient, 2000, PAYMENTS_HEALTH)).serving).toBe(false);
});

it('refuses a new checkout session as unavailable, saying which settings to give, and stores nothing', async () => {
  const request = CreateCheckoutSessionRequest.fromPartial({
    account_id: account,
    product_id: newId('prod'),
    success_url: 'https://vendor.example/thanks',
  });
  await expect(checkout.call.createSession(request)).rejects.toMatchObject({
    code: 'service_unavailable',
    message: expect.stringMatching(/payments are not configured: give STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET/),
  });
  const listed = await checkout.call.listSessions(
    ListCheckoutSessionsRequest.fromPartial({ account_id: account, page: { limit: 100, starting_after: '' } }),
  );
  expect(listed.data).toEqual([]);
  expect(licenses.calls).toEqual([]);
});

it("answers Stripe's webhook with a 503 problem that says payments are not configured", async () => {
  const res = await fetch(webhookUrl, { method: 'POST', body: '{}' });
  expect(res.status).toBe(503);
  expect(((await res.json()) as { detail: string }).detail).toMatch(/payments are not configured/);
});
