import { LicenseServiceService, ProductServiceService } from '@licensing/proto';
import { type FakePeer, startFakePeer } from '@licensing/test-support';
import { start } from '../../src/main';
import { envFor } from '../../../../scripts/lib/topology';
import { setUpEvents } from '../../../../scripts/lib/events-setup';
import { freePort } from '../../../../scripts/lib/net';
import { testTopology } from '../../../../test/support/stack';

// Which payment settings the checkout service starts with: test mode or a Stripe test key in
// production only by explicit choice (CHECKOUT_TEST_MODE=true), and Stripe with both of its keys or
// neither (a fresh deployment: what it then answers is payments-not-configured.test.ts). The service
// itself against real FerretDB and NATS, its peers faked (no call reaches them at start).

const WEBHOOK_SECRET = 'whsec_licensingTestSecretForStripeMock0001';
const t = testTopology();
let products: FakePeer<typeof ProductServiceService>;
let licenses: FakePeer<typeof LicenseServiceService>;

beforeAll(async () => {
  products = await startFakePeer(ProductServiceService, {});
  licenses = await startFakePeer(LicenseServiceService, {});
  await setUpEvents(t);
});

afterAll(async () => {
  await products?.stop();
  await licenses?.stop();
});

describe('modes', () => {
  const checkoutEnv = async (over: Record<string, string>) => ({
    ...envFor('checkout', t, {
      port: 0,
      httpPort: await freePort(),
      addrs: { product: products.address, license: licenses.address },
      publicBaseUrl: 'https://licensing.example',
    }),
    STRIPE_SECRET_KEY: '',
    STRIPE_WEBHOOK_SECRET: '',
    STRIPE_API_URL: '',
    PAYMENT_PROVIDER: 'test',
    ...over,
  });

  it('in production, checkout refuses to start in test mode unless CHECKOUT_TEST_MODE=true', async () => {
    await expect(start({ env: await checkoutEnv({ NODE_ENV: 'production' }) })).rejects.toThrow(
      /CHECKOUT_TEST_MODE=true/,
    );
    const chosen = await start({ env: await checkoutEnv({ NODE_ENV: 'production', CHECKOUT_TEST_MODE: 'true' }) });
    await chosen.stop();
  });

  it('in production, checkout refuses a Stripe test key unless CHECKOUT_TEST_MODE=true', async () => {
    const stripeEnv = { PAYMENT_PROVIDER: 'stripe', STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET, NODE_ENV: 'production' };
    await expect(
      start({ env: await checkoutEnv({ ...stripeEnv, STRIPE_SECRET_KEY: 'sk_test_licensing' }) }),
    ).rejects.toThrow(/STRIPE_SECRET_KEY is a Stripe test key[\s\S]*CHECKOUT_TEST_MODE=true/);
  });

  it('with Stripe, it refuses to start with one key given and not the other; with neither it runs without payments', async () => {
    await expect(
      start({ env: await checkoutEnv({ PAYMENT_PROVIDER: 'stripe', STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET }) }),
    ).rejects.toThrow(/STRIPE_SECRET_KEY/);
    await expect(
      start({ env: await checkoutEnv({ PAYMENT_PROVIDER: 'stripe', STRIPE_SECRET_KEY: 'sk_test_licensing' }) }),
    ).rejects.toThrow(/STRIPE_WEBHOOK_SECRET/);
    // Neither given (a fresh deployment): it starts (payments-not-configured.test.ts says what it answers).
    const unconfigured = await start({ env: await checkoutEnv({ PAYMENT_PROVIDER: 'stripe' }) });
    await unconfigured.ctx.db.dropDatabase().catch(() => undefined);
    await unconfigured.stop();
  });
});
