// Subscriptions in test mode: a monthly product sold on the hosted page, its subscription moved by the test
// clock (renewal, past due with the failing card, unpaid, a payment through the billing portal,
// cancellation at period end or now, against the policy's grace days), a trial (converted, or ended
// unpaid with the 0341 card), seats, the live subscription's test clock, and the bad inputs. The licence follows through the
// licence service (ApplySubscription) and the gateway's validation cache follows its events.
import { connectMongo } from '@licensing/runtime';
import { start as startGateway, type RunningGateway } from '../../gateway/src/main';
import { envFor } from '../../scripts/lib/topology';
import { client, startStack, type Stack } from '../support/stack';
import { EventLog } from '../support/events';
import { eventually } from '../support/eventually';
import { WebClient } from '../support/web-client';
import { WebhookReceiver } from '../support/webhook-receiver';

let stack: Stack;
let events: EventLog;
let api: ReturnType<typeof client>;
let other: ReturnType<typeof client>;
let monthly: string;
/** Monthly, with grace days after a licence's expiry. */
let graced: string;
let receiver: WebhookReceiver;
/** A gateway with no validation cache: every validation is judged by the licence service. */
let uncached: RunningGateway;
let uncachedApi: ReturnType<typeof client>;

const DAY = 86_400_000;

beforeAll(async () => {
  stack = await startStack({}, { CHECKOUT_REQUESTS_PER_MINUTE: '1000' });
  const acct = await stack.newAccount();
  await stack.admin.updateAccount({ id: acct.accountId, per_minute_limit: 100_000 });
  api = client(stack.url, acct.apiKey);
  const second = await stack.newAccount();
  other = client(stack.url, second.apiKey);
  events = await EventLog.open(stack.topology.natsUrl, stack.topology.stream);
  receiver = await WebhookReceiver.start();
  const hook = await api('POST', '/api/v1/webhooks', {
    url: `${receiver.url}/subs`,
    events: [
      'subscription.created',
      'subscription.renewed',
      'subscription.past_due',
      'subscription.canceled',
      'subscription.updated',
    ],
  });
  expect(hook.status).toBe(201);
  const res = await api('POST', '/api/v1/products', {
    name: 'Pixel Forge Monthly',
    price: { amount: 1000, currency: 'EUR', interval: 'month' },
    policy: { max_activations: 2, payment_grace_days: 7 },
  });
  expect(res.status).toBe(201);
  monthly = res.body.id;
  const withGrace = await api('POST', '/api/v1/products', {
    name: 'Pixel Forge Graced',
    price: { amount: 1000, currency: 'EUR', interval: 'month' },
    // (grace days are for licences that expire: a subscription's expires at each period end)
    policy: { duration_days: 30, grace_days: 5, payment_grace_days: 7 },
  });
  expect(withGrace.status).toBe(201);
  graced = withGrace.body.id;
  uncached = await startGateway({
    env: { ...envFor('gateway', stack.topology, { port: 0, addrs: stack.addrs }), VALIDATION_CACHE_SIZE: '0' },
  });
  uncachedApi = client(uncached.url, acct.apiKey);
});

afterAll(async () => {
  await uncached?.stop();
  await receiver?.stop();
  await events?.close();
  await stack?.stop();
});

const pathOf = (url: string) => new URL(url).pathname;

/** A checkout of `product` paid on the hosted page with `card`: the session after payment. */
async function buy(product: string, card: string, over: Record<string, unknown> = {}) {
  const created = await api('POST', '/api/v1/checkout', {
    product_id: product,
    success_url: 'https://vendor.example/thanks',
    ...over,
  });
  expect(created.status).toBe(201);
  const web = new WebClient(stack.url, stack.topology);
  const page = await web.get(pathOf(created.body.url));
  expect(page.status).toBe(200);
  const paid = await web.post(`/checkout/${created.body.id}/pay`, {
    _csrf: WebClient.csrf(page.html),
    email: 'subscriber@example.com',
    card,
  });
  expect(paid.status).toBe(303);
  const session = (await api('GET', `/api/v1/checkout/${created.body.id}`)).body;
  expect(session.status).toBe('complete');
  return session as { id: string; subscription_id: string; license_key: string; amount: number; quantity: number };
}

const sub = async (id: string) => {
  const res = await api('GET', `/api/v1/subscriptions/${id}`);
  expect(res.status).toBe(200);
  return res.body;
};
const validate = async (key: string) =>
  (await api('GET', `/api/v1/licenses/validate?license_key=${encodeURIComponent(key)}`)).body;
const license = async (key: string) => (await api('GET', `/api/v1/licenses/${encodeURIComponent(key)}`)).body;
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
const advance = (id: string, to: Date | string) =>
  api('POST', `/api/v1/subscriptions/${id}/test_clock`, { advance_to: typeof to === 'string' ? to : to.toISOString() });
const eventFor = (type: string, subscriptionId: string) =>
  events.waitFor(
    (e) => e.type === type && (e.data as { subscription?: { id: string } }).subscription?.id === subscriptionId,
  );
const licenseEvent = (type: string, key: string) =>
  events.waitFor((e) => e.type === type && (e.data as { license?: { key: string } }).license?.key === key);

describe('a monthly product sold on the hosted page, from purchase to expiry', () => {
  let a: { id: string; subscription_id: string; license_key: string };
  let b: { id: string; subscription_id: string; license_key: string };

  it('gives an active subscription with seats and a licence valid to the period end', async () => {
    const session = await buy(monthly, '4242 4242 4242 4242', { quantity: 3 });
    a = session;
    expect(session.amount).toBe(3000);
    expect(session.quantity).toBe(3);
    expect(session.subscription_id).toMatch(/^sub_[0-9A-Z]{26}$/);
    const s = await sub(session.subscription_id);
    expect(s).toMatchObject({
      status: 'active',
      product_id: monthly,
      customer_email: 'subscriber@example.com',
      license_key: session.license_key,
      quantity: 3,
      cancel_at_period_end: false,
      trial_end: null,
      livemode: false,
      interval: 'month',
      interval_count: 1,
      amount: 3000,
      currency: 'EUR',
    });
    expect(s.invoices).toEqual([expect.objectContaining({ status: 'paid', amount: 3000 })]);
    const end = new Date(s.current_period_start);
    end.setUTCMonth(end.getUTCMonth() + 1);
    expect(Math.abs(Date.parse(s.current_period_end) - end.getTime())).toBeLessThan(3 * DAY);
    const l = await license(session.license_key);
    expect(l.expires_at).toBe(s.current_period_end);
    expect(l.policy.max_activations).toBe(6); // 2 per seat × 3 seats
    expect(l.subscription).toMatchObject({ id: s.id, status: 'active', grace_until: null });
    const v = await validate(session.license_key);
    expect(v).toMatchObject({ valid: true, code: 'valid', next_action: 'none', trial_end: null });
    await eventFor('subscription.created', s.id);
    const listed = await api('GET', `/api/v1/subscriptions?product_id=${monthly}&status=active`);
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((x: { id: string }) => x.id)).toContain(s.id);
    expect(
      (await api('GET', '/api/v1/subscriptions?customer_email=SUBSCRIBER@example.com')).body.data.length,
    ).toBeGreaterThan(0);
  });

  it('advancing the clock one month renews it, with the licence expiry moved', async () => {
    const before = await sub(a.subscription_id);
    const res = await advance(a.subscription_id, new Date(Date.parse(before.current_period_end) + DAY));
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('active');
    expect(res.body.current_period_start).toBe(before.current_period_end);
    expect(Date.parse(res.body.current_period_end)).toBeGreaterThan(Date.parse(before.current_period_end) + 27 * DAY);
    const after = await sub(a.subscription_id);
    expect(after.invoices.map((i: { status: string }) => i.status)).toEqual(['paid', 'paid']);
    await eventFor('subscription.renewed', a.subscription_id);
    await licenseEvent('license.renewed', a.license_key);
    expect((await license(a.license_key)).expires_at).toBe(res.body.current_period_end);
    await eventually(async () => expect((await validate(a.license_key)).expires_at).toBe(res.body.current_period_end));
  });

  it('with the failing card it goes past due: the licence is still valid, with next_action update_payment', async () => {
    b = await buy(monthly, '4000 0000 0000 0341');
    const first = await sub(b.subscription_id);
    expect(first.status).toBe('active');
    const res = await advance(b.subscription_id, new Date(Date.parse(first.current_period_end) + DAY));
    expect(res.body.status).toBe('past_due');
    expect((await sub(b.subscription_id)).invoices.map((i: { status: string }) => i.status)).toEqual([
      'failed',
      'paid',
    ]);
    await eventFor('subscription.past_due', b.subscription_id);
    await eventually(async () =>
      expect(await validate(b.license_key)).toMatchObject({
        valid: true,
        code: 'valid',
        next_action: 'update_payment',
      }),
    );
    const l = await license(b.license_key);
    expect(l.subscription.status).toBe('past_due');
    expect(Date.parse(l.subscription.grace_until) - Date.parse(first.current_period_end)).toBe(7 * DAY);
  });

  it('after the grace it is unpaid and the licence is suspended (subscription_unpaid)', async () => {
    const s = await sub(b.subscription_id);
    const res = await advance(b.subscription_id, new Date(Date.parse(s.current_period_end) + 8 * DAY));
    expect(res.body.status).toBe('unpaid');
    await licenseEvent('license.suspended', b.license_key);
    await eventually(async () =>
      expect(await validate(b.license_key)).toMatchObject({
        valid: false,
        code: 'subscription_unpaid',
        status: 'suspended',
        next_action: 'update_payment',
      }),
    );
  });

  it('a payment through the billing portal reinstates and renews it', async () => {
    const portal = await api('POST', `/api/v1/subscriptions/${b.subscription_id}/billing_portal`);
    expect(portal.status).toBe(200);
    expect(portal.body.url).toContain(`/checkout/${b.id}/billing/`);
    const web = new WebClient(stack.url, stack.topology);
    const page = await web.get(pathOf(portal.body.url));
    expect(page.status).toBe(200);
    expect(page.html).toContain('unpaid');
    const bad = await web.post(pathOf(portal.body.url), { card: '1234' });
    expect(bad.status).toBe(402);
    const paid = await web.post(pathOf(portal.body.url), { card: '4242 4242 4242 4242' });
    expect(paid.status).toBe(200);
    const s = await sub(b.subscription_id);
    expect(s.status).toBe('active');
    await licenseEvent('license.reinstated', b.license_key);
    await eventually(async () =>
      expect(await validate(b.license_key)).toMatchObject({ valid: true, code: 'valid', next_action: 'none' }),
    );
    expect((await license(b.license_key)).expires_at).toBe(s.current_period_end);
    // A made-up link is not a page.
    expect((await web.get(`/checkout/${b.id}/billing/${'x'.repeat(43)}`)).status).toBe(404);
  });

  it('cancelled at period end, then past it, the licence is expired (next_action renew); cancelling again is 409', async () => {
    const res = await api('POST', `/api/v1/subscriptions/${a.subscription_id}/cancel`, { at_period_end: true });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'active', cancel_at_period_end: true });
    await eventFor('subscription.updated', a.subscription_id);
    expect((await validate(a.license_key)).valid).toBe(true);
    const moved = await advance(a.subscription_id, new Date(Date.parse(res.body.current_period_end) + DAY));
    expect(moved.body.status).toBe('canceled');
    await eventFor('subscription.canceled', a.subscription_id);
    await eventually(async () =>
      expect(await validate(a.license_key)).toMatchObject({ valid: false, code: 'expired', next_action: 'renew' }),
    );
    // Every subscription.* event reached the webhook endpoint too.
    const delivered = (await receiver.waitFor('/subs', 4)).map((r) => JSON.parse(r.body));
    await eventually(
      async () => {
        const all = receiver
          .at('/subs')
          .map((r) => JSON.parse(r.body) as { type: string; data: { subscription: { id: string } } });
        const types = new Set(all.filter((e) => e.data.subscription.id === a.subscription_id).map((e) => e.type));
        expect([...types].sort()).toEqual([
          'subscription.canceled',
          'subscription.created',
          'subscription.renewed',
          'subscription.updated',
        ]);
      },
      { timeoutMs: 15_000 },
    );
    expect(delivered.length).toBeGreaterThanOrEqual(4);
    const again = await api('POST', `/api/v1/subscriptions/${a.subscription_id}/cancel`, { at_period_end: false });
    expect({ status: again.status, code: again.body.code }).toEqual({ status: 409, code: 'conflict' });
    expect((await advance(a.subscription_id, new Date(Date.now() + 400 * DAY))).body.status).toBe('canceled');
  });

  it('cancelled now, the licence expires now', async () => {
    const c = await buy(monthly, '4242 4242 4242 4242');
    const res = await api('POST', `/api/v1/subscriptions/${c.subscription_id}/cancel`, { at_period_end: false });
    expect(res.body.status).toBe('canceled');
    await eventually(async () =>
      expect(await validate(c.license_key)).toMatchObject({ valid: false, code: 'expired' }),
    );
  });
});

describe('a year of renewals after a reroll', () => {
  it('the rerolled licence keeps following its subscription (the new key shown from its next change), and the invoices list newest first', async () => {
    const bought = await buy(monthly, '4242 4242 4242 4242');
    const rerolled = await api('POST', `/api/v1/licenses/${bought.license_key}/reroll`, { grace_hours: 0 });
    expect(rerolled.status).toBe(200);
    const newKey = rerolled.body.key as string;
    expect(newKey).not.toBe(bought.license_key);
    const before = await sub(bought.subscription_id);
    const yearOn = new Date(Date.parse(before.current_period_end));
    yearOn.setUTCMonth(yearOn.getUTCMonth() + 11);
    const res = await advance(bought.subscription_id, new Date(yearOn.getTime() + DAY));
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('active');
    const after = await sub(bought.subscription_id);
    // Twelve renewals reached the licence by its new key; the subscription shows that key now.
    expect(after.license_key).toBe(newKey);
    expect((await license(newKey)).expires_at).toBe(after.current_period_end);
    await eventually(async () =>
      expect(await validate(newKey)).toMatchObject({ valid: true, expires_at: after.current_period_end }),
    );
    expect((await validate(bought.license_key)).code).toBe('not_found');
    // Thirteen periods: newest first by period (ids ending _9 and _12 do not sort by time).
    const starts = after.invoices.map((i: { period_start: string }) => Date.parse(i.period_start));
    expect(starts).toHaveLength(13);
    expect(starts).toEqual([...starts].sort((x: number, y: number) => y - x));
    expect(after.invoices[0].period_end).toBe(after.current_period_end);
  });
});

describe('cancellation and the policy’s grace days', () => {
  it('cancelled now, the licence is expired at once though its policy has grace days (cached and uncached, GET and POST)', async () => {
    const c = await buy(graced, '4242 4242 4242 4242');
    expect(await everyValidation(c.license_key)).toEqual(
      expect.arrayContaining([expect.objectContaining({ valid: true, code: 'valid' })]),
    );
    const res = await api('POST', `/api/v1/subscriptions/${c.subscription_id}/cancel`, { at_period_end: false });
    expect(res.body.status).toBe('canceled');
    await eventually(async () =>
      allAnswer(await everyValidation(c.license_key), { valid: false, code: 'expired', next_action: 'renew' }),
    );
    expect((await license(c.license_key)).status).toBe('expired');
  });

  it('cancelled now after asking for the period end: still at once', async () => {
    const c = await buy(graced, '4242 4242 4242 4242');
    expect(
      (await api('POST', `/api/v1/subscriptions/${c.subscription_id}/cancel`, { at_period_end: true })).status,
    ).toBe(200);
    const res = await api('POST', `/api/v1/subscriptions/${c.subscription_id}/cancel`, { at_period_end: false });
    expect(res.body.status).toBe('canceled');
    await eventually(async () =>
      allAnswer(await everyValidation(c.license_key), { valid: false, code: 'expired', next_action: 'renew' }),
    );
  });

  it('cancelled at the period end, past it: expired_in_grace (valid, renew) for the policy’s grace days', async () => {
    const c = await buy(graced, '4242 4242 4242 4242');
    const res = await api('POST', `/api/v1/subscriptions/${c.subscription_id}/cancel`, { at_period_end: true });
    expect(res.status).toBe(200);
    const moved = await advance(c.subscription_id, new Date(Date.parse(res.body.current_period_end) + DAY));
    expect(moved.body.status).toBe('canceled');
    await eventually(async () =>
      allAnswer(await everyValidation(c.license_key), { valid: true, code: 'expired_in_grace', next_action: 'renew' }),
    );
    const l = await license(c.license_key);
    // Until the expiry (the moment it ended) plus the 5 grace days.
    expect(Date.parse(l.expires_at)).toBeLessThanOrEqual(Date.now());
  });
});

describe('a trial', () => {
  it('gives a valid licence at once with trial_end in the answer; the first payment converts it', async () => {
    const product = (
      await api('POST', '/api/v1/products', {
        name: 'Trial Yearly',
        price: { amount: 9900, currency: 'USD', interval: 'year', trial_days: 14 },
      })
    ).body;
    expect(product.price).toEqual({
      amount: 9900,
      currency: 'USD',
      interval: 'year',
      interval_count: 1,
      trial_days: 14,
    });
    const t = await buy(product.id, '4242 4242 4242 4242');
    const s = await sub(t.subscription_id);
    expect(s.status).toBe('trialing');
    expect(Date.parse(s.trial_end) - Date.parse(s.created_at)).toBe(14 * DAY);
    expect(s.invoices).toEqual([expect.objectContaining({ status: 'paid', amount: 0 })]);
    const v = await validate(t.license_key);
    expect(v).toMatchObject({ valid: true, code: 'valid', trial_end: s.trial_end });
    const post = await api('POST', '/api/v1/keys/validate', { key: t.license_key });
    expect(post.body.trial_end).toBe(s.trial_end);
    const res = await advance(t.subscription_id, new Date(Date.parse(s.trial_end) + DAY));
    expect(res.body).toMatchObject({ status: 'active', trial_end: null, current_period_start: s.trial_end });
    await eventually(async () => expect(await validate(t.license_key)).toMatchObject({ valid: true, trial_end: null }));
  });
});

describe('a trial bought with 4000 0000 0000 0341', () => {
  it('charges nothing at checkout, so the first charge, at the trial’s end, fails: the trial ends unpaid and the licence expires at once', async () => {
    const product = (
      await api('POST', '/api/v1/products', {
        name: 'Trial Monthly',
        price: { amount: 500, currency: 'EUR', interval: 'month', trial_days: 7 },
        policy: { duration_days: 30, grace_days: 5 },
      })
    ).body.id;
    const t = await buy(product, '4000 0000 0000 0341');
    const s = await sub(t.subscription_id);
    expect(s.status).toBe('trialing');
    expect(s.invoices).toEqual([expect.objectContaining({ status: 'paid', amount: 0 })]);
    expect(await validate(t.license_key)).toMatchObject({ valid: true, code: 'valid', trial_end: s.trial_end });
    const res = await advance(t.subscription_id, new Date(Date.parse(s.trial_end) + DAY));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'canceled' });
    const after = await sub(t.subscription_id);
    expect(after.invoices.map((i: { status: string; amount: number }) => [i.status, i.amount])).toEqual([
      ['failed', 500],
      ['paid', 0],
    ]);
    await eventFor('subscription.canceled', t.subscription_id);
    await licenseEvent('license.updated', t.license_key);
    expect(
      events
        .all()
        .filter(
          (e) =>
            e.type === 'subscription.past_due' &&
            (e.data as { subscription?: { id: string } }).subscription?.id === t.subscription_id,
        ),
    ).toEqual([]);
    // The trial ended unpaid: no grace days.
    await eventually(async () =>
      allAnswer(await everyValidation(t.license_key), { valid: false, code: 'expired', next_action: 'renew' }),
    );
  });
});

describe('the test clock of a live subscription', () => {
  it('is refused with 409, nothing moved or billed', async () => {
    const s = await buy(monthly, '4242 4242 4242 4242');
    const db = await connectMongo(stack.topology.mongoUrl, `${stack.topology.dbPrefix}_checkout`);
    try {
      // As a live one would be stored: a live Stripe subscription has no test clock. (Test mode makes none;
      // a stack switched from Stripe to test mode still holds them.)
      for (const live of [
        { livemode: true, provider: 'stripe', test_clock: null },
        { livemode: true, test_clock: new Date() },
      ]) {
        await db.collection('subscriptions').updateOne({ _id: s.subscription_id as never }, { $set: live });
        const before = await sub(s.subscription_id);
        const res = await advance(s.subscription_id, new Date(Date.parse(before.current_period_end) + DAY));
        expect({ live, status: res.status, code: res.body.code, detail: res.body.detail }).toEqual({
          live,
          status: 409,
          code: 'conflict',
          detail: expect.stringMatching(/live/),
        });
        expect(await sub(s.subscription_id)).toEqual(before);
      }
    } finally {
      await db.close();
    }
  });
});

describe('bad input: a clear 4xx, nothing written', () => {
  it('refuses bad recurring prices', async () => {
    const before = (await api('GET', '/api/v1/products?limit=100')).body.data.length;
    for (const price of [
      { interval: 'month' },
      { amount: 100, currency: 'EUR', interval: 'week' },
      { amount: 100, currency: 'EUR', interval: 'month', trial_days: 366 },
      { amount: 100, currency: 'EUR', interval: 'month', interval_count: 13 },
      { amount: 100, currency: 'EUR', interval: 'month', interval_count: 0 },
      { amount: 100, currency: 'EUR', trial_days: 7 },
      { amount: 100, currency: 'EUR', interval: null, interval_count: 2 },
    ]) {
      const res = await api('POST', '/api/v1/products', { name: 'Bad', price });
      expect({ price, status: res.status, code: res.body.code }).toEqual({
        price,
        status: 400,
        code: 'invalid_request',
      });
    }
    for (const policy of [{ payment_grace_days: 61 }, { payment_grace_days: -1 }]) {
      const res = await api('POST', '/api/v1/products', { name: 'Bad', policy });
      expect({ policy, status: res.status }).toEqual({ policy, status: 400 });
    }
    expect((await api('GET', '/api/v1/products?limit=100')).body.data.length).toBe(before);
    const oneTime = await api('POST', '/api/v1/products', {
      name: 'Once',
      price: { amount: 100, currency: 'EUR', interval: null },
    });
    expect(oneTime.body.price).toEqual({
      amount: 100,
      currency: 'EUR',
      interval: null,
      interval_count: null,
      trial_days: 0,
    });
  });

  it('refuses a quantity out of range, or on a one-time price', async () => {
    const oneTime = (await api('POST', '/api/v1/products', { name: 'Once', price: { amount: 100, currency: 'EUR' } }))
      .body.id;
    const before = (await api('GET', '/api/v1/checkout?limit=100')).body.data.length;
    for (const [product, quantity] of [
      [monthly, 0],
      [monthly, 1001],
      [monthly, 1.5],
      [monthly, '2'],
      [oneTime, 2],
    ] as const) {
      const res = await api('POST', '/api/v1/checkout', {
        product_id: product,
        success_url: 'https://vendor.example/thanks',
        quantity,
      });
      expect({ quantity, status: res.status, code: res.body.code }).toEqual({
        quantity,
        status: 400,
        code: 'invalid_request',
      });
    }
    expect((await api('GET', '/api/v1/checkout?limit=100')).body.data.length).toBe(before);
  });

  it('refuses advance_to in the past, more than 5 years ahead, or not a time; other accounts see nothing', async () => {
    const s = await buy(monthly, '4242 4242 4242 4242');
    const current = await sub(s.subscription_id);
    const clock = Date.parse(current.test_clock);
    for (const to of [
      new Date(clock - DAY).toISOString(),
      new Date(clock).toISOString(),
      new Date(clock + 5 * 366 * DAY).toISOString(),
      'tomorrow',
      '',
    ]) {
      const res = await advance(s.subscription_id, to);
      expect({ to, status: res.status, code: res.body.code }).toEqual({ to, status: 400, code: 'invalid_request' });
    }
    expect(await sub(s.subscription_id)).toEqual(current); // nothing moved
    expect((await api('POST', `/api/v1/subscriptions/${s.subscription_id}/cancel`, {})).status).toBe(400);
    expect(
      (await api('POST', `/api/v1/subscriptions/${s.subscription_id}/cancel`, { at_period_end: 'yes' })).status,
    ).toBe(400);
    expect((await api('GET', '/api/v1/subscriptions/sub_nope')).status).toBe(400);
    expect((await api('GET', '/api/v1/subscriptions?status=sleeping')).status).toBe(400);
    expect((await api('GET', '/api/v1/subscriptions?product_id=nope')).status).toBe(400);
    for (const [method, path, body] of [
      ['GET', `/api/v1/subscriptions/${s.subscription_id}`, undefined],
      ['POST', `/api/v1/subscriptions/${s.subscription_id}/cancel`, { at_period_end: false }],
      ['POST', `/api/v1/subscriptions/${s.subscription_id}/billing_portal`, undefined],
      [
        'POST',
        `/api/v1/subscriptions/${s.subscription_id}/test_clock`,
        { advance_to: new Date(clock + DAY).toISOString() },
      ],
    ] as const) {
      const res = await other(method, path, body);
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
    }
    expect((await other('GET', '/api/v1/subscriptions')).body.data).toEqual([]);
    expect((await sub(s.subscription_id)).status).toBe('active');
  });
});
