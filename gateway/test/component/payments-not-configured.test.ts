import { PAYMENTS_HEALTH } from '@licensing/proto';
import { AppError, newId } from '@licensing/runtime';
import { client } from '../../../test/support/stack';
import { accountHandlers, fakeVendor } from './fake-service-answers';
import { startGatewayWithFakeServices, type GatewayWithFakeServices } from './gateway-with-fake-services';
import { expectProblem } from '../../../test/support/problem-json';

// A deployment whose checkout service has Stripe chosen and no keys yet (its "payments" health part
// not serving, its CreateSession refused as unavailable: services/checkout/test/component/
// payments-not-configured.test.ts): /api/v1/status says payments are not configured while the
// service itself is up, and a new checkout session is a 503 problem that says what to do.

const vendor = fakeVendor('enterprise');
const NOT_CONFIGURED =
  'payments are not configured: give STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET (docs/operations.md, Payments)';
let h: GatewayWithFakeServices;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  h = await startGatewayWithFakeServices({
    handlers: {
      account: accountHandlers([vendor]),
      checkout: {
        createSession: () => {
          throw new AppError('service_unavailable', NOT_CONFIGURED);
        },
      },
    },
  });
  h.fakes.checkout.health.addPart(PAYMENTS_HEALTH, () => false);
  api = client(h.url, vendor.apiKey);
});

afterAll(async () => {
  await h?.stop();
});

it('says on /api/v1/status that payments are not configured, with the checkout service up', async () => {
  const status = await api('GET', '/api/v1/status');
  expect(status.status).toBe(200);
  expect(status.body.payments).toBe('not configured');
  expect(status.body.services.checkout.status).toBe('ok');
});

it('refuses a new checkout session with a 503 problem that says what to do', async () => {
  const refused = await api('POST', '/api/v1/checkout', {
    product_id: newId('prod'),
    success_url: 'https://vendor.example/thanks',
  });
  expectProblem(refused, 503, 'service_unavailable');
  expect(refused.body.detail).toMatch(/payments are not configured: give STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET/);
});
