import { type License, Subscription, SubscriptionInvoice } from '@licensing/proto';
import { newId } from '@licensing/runtime';
import { type FakePeer, startFakePeer } from '@licensing/test-support';
import { client } from '../../../test/support/stack';
import { accountHandlers, fakeLicence, fakeVendor, licenseHandlers } from './fake-service-answers';
import { checkoutAndSubscriptions, subscriptionHandlers } from './fake-checkout-answers';
import { startGatewayWithFakeServices, type GatewayWithFakeServices } from './gateway-with-fake-services';

// The REST face of subscriptions: /api/v1/subscriptions as the checkout service's SubscriptionService
// (faked here at the checkout service's address, its test clock checked by the service's own rule),
// its shapes (nulls for what is not set), the 400s the gateway gives before asking, 404 for another
// account's; and a change made through these routes reaches every validation answer at once: GET (and
// GET again, from the cache), POST /keys/validate, on a gateway with a validation cache and on one
// without. The licence service is faked over licences whose state the test moves as the licence
// service would on the subscription's change (what it decides: services/license/test/component/
// subscription-renewals.test.ts; what the checkout service does: services/checkout/test/component).

const DAY = 86_400_000;
const vendor = fakeVendor('enterprise');
const stranger = fakeVendor('enterprise');
const licences: License[] = [];
const subscriptions: Subscription[] = [];
let h: GatewayWithFakeServices;
let checkout: FakePeer<typeof checkoutAndSubscriptions>;
let api: ReturnType<typeof client>;
let uncachedApi: ReturnType<typeof client>;
let other: ReturnType<typeof client>;
const productId = newId('prod');

/** The licence service's part of a change: a cancelled subscription's licence expires now. */
const changed = (s: Subscription) => {
  const l = licences.find((x) => x.key === s.license_key);
  if (l && s.status === 'canceled') Object.assign(l, { status: 'expired', expires_at: new Date().toISOString() });
};

beforeAll(async () => {
  h = await startGatewayWithFakeServices({
    handlers: { account: accountHandlers([vendor, stranger]), license: licenseHandlers(licences) },
    startGateway: false,
  });
  checkout = await startFakePeer(checkoutAndSubscriptions, subscriptionHandlers(subscriptions, changed));
  const cached = await h.extraGateway({ CHECKOUT_GRPC_ADDR: checkout.address });
  const uncached = await h.extraGateway({ CHECKOUT_GRPC_ADDR: checkout.address, VALIDATION_CACHE_SIZE: '0' });
  api = client(cached.url, vendor.apiKey);
  uncachedApi = client(uncached.url, vendor.apiKey);
  other = client(cached.url, stranger.apiKey);
});

afterAll(async () => {
  await h?.stop();
  await checkout?.stop();
});

/** A subscription of the vendor and its licence, as a paid checkout leaves them. */
function subscribed(over: Partial<Subscription> = {}, subscription: Partial<License['subscription']> = {}) {
  const now = Date.now();
  const id = newId('sub');
  const l = fakeLicence(vendor, productId, 'subscriber@example.com');
  l.expires_at = new Date(now + 30 * DAY).toISOString();
  l.subscription = {
    id,
    status: 'active',
    trial_end: '',
    paid_through: l.expires_at,
    grace_until: '',
    ended_early: false,
    ...subscription,
  };
  licences.push(l);
  const s = Subscription.fromPartial({
    id,
    account_id: vendor.account.id,
    status: 'active',
    product_id: productId,
    customer_email: 'subscriber@example.com',
    license_key: l.key,
    quantity: 1,
    current_period_start: new Date(now).toISOString(),
    current_period_end: l.expires_at,
    created_at: new Date(now).toISOString(),
    interval: 'month',
    interval_count: 1,
    amount: 1000,
    currency: 'EUR',
    test_clock: new Date(now).toISOString(),
    checkout_session_id: `cs_${id.slice(4)}`,
    invoices: [
      SubscriptionInvoice.fromPartial({
        id: `in_${id.slice(4)}_1`,
        period_start: new Date(now).toISOString(),
        period_end: l.expires_at,
        amount: 1000,
        currency: 'EUR',
        status: 'paid',
        created_at: new Date(now).toISOString(),
      }),
    ],
    ...over,
  });
  subscriptions.push(s);
  return s;
}

/**
 * Every way of asking: GET (twice: the second from the gateway's validation cache, on its fast path),
 * POST /keys/validate, and both on a gateway with no cache (the licence service judges).
 */
const everyValidation = async (key: string) => {
  const q = `/api/v1/licenses/validate?license_key=${encodeURIComponent(key)}`;
  const answers = [];
  for (const [name, as] of [
    ['cached', api],
    ['uncached', uncachedApi],
  ] as const) {
    answers.push({ name: `${name} GET`, ...(await as('GET', q)).body });
    answers.push({ name: `${name} GET again`, ...(await as('GET', q)).body });
    answers.push({ name: `${name} POST`, ...(await as('POST', '/api/v1/keys/validate', { key })).body });
  }
  return answers.map(({ name, valid, code, next_action }) => ({ name, valid, code, next_action }));
};
const allAnswer = (answers: { name: string }[], expected: Record<string, unknown>) =>
  expect(answers).toEqual(answers.map((a) => ({ name: a.name, ...expected })));

it('shows a subscription with nulls for what is not set, and lists it by product, status and e-mail', async () => {
  const s = subscribed();
  const res = await api('GET', `/api/v1/subscriptions/${s.id}`);
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({
    id: s.id,
    status: 'active',
    product_id: productId,
    license_key: s.license_key,
    cancel_at_period_end: false,
    trial_end: null,
    canceled_at: null,
    livemode: false,
    interval: 'month',
    amount: 1000,
    invoices: [expect.objectContaining({ status: 'paid', amount: 1000 })],
  });
  const listed = await api('GET', `/api/v1/subscriptions?product_id=${productId}&status=active`);
  expect(listed.status).toBe(200);
  expect(listed.body.data.map((x: { id: string }) => x.id)).toContain(s.id);
  expect(
    (await api('GET', '/api/v1/subscriptions?customer_email=SUBSCRIBER@example.com')).body.data.length,
  ).toBeGreaterThan(0);
  expect(checkout.requestsTo('listSubscriptions').at(-1)).toMatchObject({ customer_email: 'SUBSCRIBER@example.com' });
});

describe('cancellation and the policy’s grace days', () => {
  it('cancelled now, the licence is expired at once though its policy has grace days (cached and uncached, GET and POST)', async () => {
    const s = subscribed();
    expect(await everyValidation(s.license_key)).toEqual(
      expect.arrayContaining([expect.objectContaining({ valid: true, code: 'valid' })]),
    );
    const res = await api('POST', `/api/v1/subscriptions/${s.id}/cancel`, { at_period_end: false });
    expect(res.body.status).toBe('canceled');
    // No waiting: the gateway forgot its copy of the licence when it passed the change on.
    allAnswer(await everyValidation(s.license_key), { valid: false, code: 'expired', next_action: 'renew' });
  });

  it('cancelled at the period end, past it (the test clock moved through the gateway): every answer at once', async () => {
    const s = subscribed();
    expect((await everyValidation(s.license_key))[1]).toMatchObject({ valid: true });
    const res = await api('POST', `/api/v1/subscriptions/${s.id}/cancel`, { at_period_end: true });
    expect(res.body).toMatchObject({ status: 'active', cancel_at_period_end: true });
    const moved = await api('POST', `/api/v1/subscriptions/${s.id}/test_clock`, {
      advance_to: new Date(Date.parse(s.current_period_end) + DAY).toISOString(),
    });
    expect(moved.body.status).toBe('canceled');
    allAnswer(await everyValidation(s.license_key), { valid: false, code: 'expired', next_action: 'renew' });
    const again = await api('POST', `/api/v1/subscriptions/${s.id}/cancel`, { at_period_end: false });
    expect({ status: again.status, code: again.body.code }).toEqual({ status: 409, code: 'conflict' });
  });
});

describe('a trial', () => {
  it('gives a valid licence at once with trial_end in the answer', async () => {
    const trialEnd = new Date(Date.now() + 14 * DAY).toISOString();
    const s = subscribed({ status: 'trialing', trial_end: trialEnd }, { status: 'trialing', trial_end: trialEnd });
    expect((await api('GET', `/api/v1/subscriptions/${s.id}`)).body.trial_end).toBe(trialEnd);
    const v = await api('GET', `/api/v1/licenses/validate?license_key=${encodeURIComponent(s.license_key)}`);
    expect(v.body).toMatchObject({ valid: true, code: 'valid', trial_end: trialEnd });
    expect((await api('POST', '/api/v1/keys/validate', { key: s.license_key })).body.trial_end).toBe(trialEnd);
  });
});

describe('bad input: a clear 4xx, nothing written', () => {
  it('refuses advance_to in the past, more than 5 years ahead, or not a time; other accounts see nothing', async () => {
    const s = subscribed();
    const clock = Date.parse(s.test_clock);
    for (const to of [
      new Date(clock - DAY).toISOString(),
      new Date(clock).toISOString(),
      new Date(clock + 5 * 366 * DAY).toISOString(),
      'tomorrow',
      '',
    ]) {
      const res = await api('POST', `/api/v1/subscriptions/${s.id}/test_clock`, { advance_to: to });
      expect({ to, status: res.status, code: res.body.code }).toEqual({ to, status: 400, code: 'invalid_request' });
    }
    const asked = checkout.calls.length;
    expect((await api('POST', `/api/v1/subscriptions/${s.id}/cancel`, {})).status).toBe(400);
    expect((await api('POST', `/api/v1/subscriptions/${s.id}/cancel`, { at_period_end: 'yes' })).status).toBe(400);
    expect((await api('GET', '/api/v1/subscriptions/sub_nope')).status).toBe(400);
    expect((await api('GET', '/api/v1/subscriptions?status=sleeping')).status).toBe(400);
    expect((await api('GET', '/api/v1/subscriptions?product_id=nope')).status).toBe(400);
    expect(checkout.calls.length).toBe(asked); // refused before the service is asked
    for (const [method, path, body] of [
      ['GET', `/api/v1/subscriptions/${s.id}`, undefined],
      ['POST', `/api/v1/subscriptions/${s.id}/cancel`, { at_period_end: false }],
      ['POST', `/api/v1/subscriptions/${s.id}/billing_portal`, undefined],
      ['POST', `/api/v1/subscriptions/${s.id}/test_clock`, { advance_to: new Date(clock + DAY).toISOString() }],
    ] as const) {
      const res = await other(method, path, body);
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
    }
    expect((await other('GET', '/api/v1/subscriptions')).body.data).toEqual([]);
    expect((await api('GET', `/api/v1/subscriptions/${s.id}`)).body.status).toBe('active');
    const portal = await api('POST', `/api/v1/subscriptions/${s.id}/billing_portal`);
    expect(portal.status).toBe(200);
    expect(portal.body.url).toContain(`/checkout/${s.checkout_session_id}/billing/`);
  });
});
