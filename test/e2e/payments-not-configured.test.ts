import { client, startStack, type Stack } from '../support/stack';

// A fresh deployment with Stripe chosen and no keys yet (the placeholders deploy/make-secrets.sh writes):
// everything starts, /api/v1/status says payments are not configured, new checkout sessions and the
// Stripe webhook get a clear 503, and the rest of the API works (docs/operations.md, "Payments").

let stack: Stack;

beforeAll(async () => {
  stack = await startStack({
    paymentProvider: 'stripe',
    stripeSecretKey: 'replace-me: your Stripe secret key, sk_live_... (docs/operations.md, Payments)',
    stripeWebhookSecret: 'replace-me: the whsec_... signing secret of your Stripe webhook endpoint',
  });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

it('starts, says so on /api/v1/status, and refuses payments with a 503 that says what to do', async () => {
  const acct = await stack.newAccount();
  const api = client(stack.url, acct.apiKey);
  const status = await api('GET', '/api/v1/status');
  expect(status.status).toBe(200);
  expect(status.body.payments).toBe('not configured');
  expect(status.body.services.checkout.status).toBe('ok');

  const product = await api('POST', '/api/v1/products', { name: 'Priced', price: { amount: 4900, currency: 'EUR' } });
  expect(product.status).toBe(201);
  const refused = await api('POST', '/api/v1/checkout', {
    product_id: product.body.id,
    success_url: 'https://vendor.example/thanks',
  });
  expect(refused.status).toBe(503);
  expect(refused.body.code).toBe('service_unavailable');
  expect(refused.body.detail).toMatch(/payments are not configured: give STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET/);

  const webhook = await fetch(`${stack.url}/webhooks/stripe`, { method: 'POST', body: '{}' });
  expect(webhook.status).toBe(503);
  expect(((await webhook.json()) as { detail: string }).detail).toMatch(/payments are not configured/);

  // Everything else works: licences are issued through the API as before.
  const license = await api('POST', '/api/v1/licenses', {
    product_id: product.body.id,
    customer_email: 'a@example.com',
  });
  expect(license.status).toBe(201);
});
