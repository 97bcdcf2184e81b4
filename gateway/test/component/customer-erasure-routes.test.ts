import { AppError } from '@licensing/runtime';
import { type ErasingService, type HeldAddress, erasing } from './erasure-answers';
import { type GatewayOverFakes, startGatewayOverFakes } from './gateway-over-fakes';

// DELETE /api/v1/customers/{email} as the gateway carries it out: EraseCustomer on the checkout, webhook
// and notification services with one placeholder chosen for the request, then on the licence service
// (which publishes customer.erased), then on the webhook service once more (a delivery fanned out after its
// first pass); each step idempotent, so a failed erasure is asked again. The services are faked here; what
// each erases of its own: services/{license,checkout,webhook,notification}/test/component (customer-erasure,
// portal-mail).

let gw: GatewayOverFakes;
const order: ErasingService[] = [];
const held: Record<ErasingService, HeldAddress[]> = { license: [], checkout: [], webhook: [], notification: [] };

beforeAll(async () => {
  gw = await startGatewayOverFakes(erasing(held, order));
  held.license.push({ account_id: gw.account, email: 'Erin.Smith@Example.com' });
  held.license.push({ account_id: gw.account, email: 'keep@example.com' });
  held.checkout.push({ account_id: gw.account, email: 'ERIN.SMITH@example.com' });
  held.webhook.push(...Array.from({ length: 3 }, () => ({ account_id: gw.account, email: 'erin.smith@example.com' })));
  held.notification.push({ account_id: gw.account, email: 'erin.smith@example.com' });
  // Another account's customer of the same address is not the caller's to erase.
  held.license.push({ account_id: 'acct_other', email: 'erin.smith@example.com' });
});

afterAll(async () => {
  await gw?.stop();
});

const erase = (email: string) => gw.request('DELETE', `/api/v1/customers/${encodeURIComponent(email)}`);
const PLACEHOLDER = /^erased-[0-9a-f]{16}@erased\.invalid$/;

it('asks every service to erase the e-mail with one placeholder, the licence service after the others and the webhook service again last; a repeat erases nothing', async () => {
  const out = await erase('erin.smith@EXAMPLE.com');
  expect(out.status).toBe(200);
  expect(out.body).toEqual({ object: 'customer_erasure', placeholder: expect.stringMatching(PLACEHOLDER), erased: 6 });
  const { placeholder } = out.body;
  const asked = { account_id: gw.account, email: 'erin.smith@EXAMPLE.com', placeholder };
  expect(gw.peers.license.requestsTo('eraseCustomer')).toEqual([asked]);
  expect(gw.peers.checkout.requestsTo('eraseCustomer')).toEqual([asked]);
  expect(gw.peers.notification.requestsTo('eraseCustomer')).toEqual([asked]);
  expect(gw.peers.webhook.requestsTo('eraseCustomer')).toEqual([asked, asked]);
  expect(order.slice(3)).toEqual(['license', 'webhook']);
  expect(order.slice(0, 3).sort()).toEqual(['checkout', 'notification', 'webhook']);
  expect(held.license.map((a) => a.email)).toEqual([placeholder, 'keep@example.com', 'erin.smith@example.com']);

  const again = await erase('erin.smith@example.com');
  expect(again.status).toBe(200);
  expect(again.body.erased).toBe(0);
  expect(again.body.placeholder).not.toBe(placeholder);
});

it('refuses an address that is not one before any service is asked', async () => {
  const before = gw.peers.license.calls.length + gw.peers.checkout.calls.length;
  const refused = await erase('not an address');
  expect(refused.status).toBe(400);
  expect(gw.peers.license.calls.length + gw.peers.checkout.calls.length).toBe(before);
});

it('a service that fails the erasure makes it a 503 that says to repeat it', async () => {
  gw.peers.checkout.handle({
    eraseCustomer: () => {
      throw new AppError('service_unavailable', 'the store is away');
    },
  });
  const failed = await erase('erin.smith@example.com');
  expect(failed.status).toBe(503);
  expect(JSON.stringify(failed.body)).toContain('repeat the same request');
});
