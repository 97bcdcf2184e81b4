// Issue 29, the Stripe path, against stripe-mock (started by the jest globalSetup). stripe-mock answers
// the API calls but sends no webhooks, so the tests sign the events Stripe would send with the
// endpoint's secret: a subscription checkout, renewals (10 concurrent duplicates of invoice.paid renew
// once), a failed payment then its payment, out-of-order arrival, a plan change, cancellation.
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { connectMongo } from '@licensing/runtime';
import { client, startStack, stripeOverrides, TestClock, type Stack } from '../support/stack';
import { EventLog } from '../support/events';
import { eventually } from '../support/eventually';
import { checkResponse } from '../support/openapi';

const WEBHOOK_SECRET = 'whsec_licensingTestSecretForStripeMock0001';
const stripe = new Stripe('sk_test_unused'); // only its webhook helpers are used here
const DAY_S = 86_400;
let stack: Stack;
const clock = new TestClock();
// The services reach stripe-mock through this recorder, so a test sees what was asked of Stripe.
let recorder: Server;
const toStripe: { method: string; path: string; body: string }[] = [];
/** Stripe unreachable: the recorder drops every connection. */
let stripeDown = false;

async function startRecorder(target: string): Promise<string> {
  const to = new URL(target);
  recorder = createServer((req, res) => {
    if (stripeDown) return void req.socket.destroy();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      toStripe.push({ method: req.method ?? '', path: req.url ?? '', body: body.toString('utf8') });
      const out = request(
        {
          host: to.hostname,
          port: to.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: to.host },
        },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      out.on('error', () => res.writeHead(502).end());
      out.end(body);
    });
  });
  await new Promise<void>((r) => recorder.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(recorder.address() as AddressInfo).port}`;
}
let events: EventLog;
let api: ReturnType<typeof client>;
let other: ReturnType<typeof client>;
let monthly: string;
let team: string;

beforeAll(async () => {
  const overrides = stripeOverrides(WEBHOOK_SECRET);
  // The clock moves only in the last test (a payment grace passing); the sweep runs often for it.
  stack = await startStack(
    { ...overrides, stripeApiUrl: await startRecorder(overrides.stripeApiUrl!), expirySweepIntervalMs: 250 },
    {},
    clock,
  );
  const acct = await stack.newAccount();
  await stack.admin.updateAccount({ id: acct.accountId, per_minute_limit: 100_000 });
  api = client(stack.url, acct.apiKey);
  other = client(stack.url, (await stack.newAccount()).apiKey);
  events = await EventLog.open(stack.topology.natsUrl, stack.topology.stream);
  monthly = (
    await api('POST', '/api/v1/products', {
      name: 'Forge Monthly',
      price: { amount: 1000, currency: 'EUR', interval: 'month' },
      policy: { max_activations: 2, payment_grace_days: 7 },
    })
  ).body.id;
  team = (
    await api('POST', '/api/v1/products', {
      name: 'Forge Team',
      price: { amount: 3000, currency: 'EUR', interval: 'month' },
      policy: { max_activations: 5 },
    })
  ).body.id;
});

afterAll(async () => {
  await events?.close();
  await stack?.stop();
  await new Promise((r) => (recorder ? recorder.close(r) : r(undefined)));
});

let seq = 0;
const eventId = () => `evt_sub_${Date.now().toString(36)}${(seq++).toString(36)}`;
const now = () => Math.floor(Date.now() / 1000);

async function deliver(event: Record<string, unknown>) {
  const payload = JSON.stringify(event);
  const header = stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET });
  const res = await fetch(`${stack.url}/webhooks/stripe`, {
    method: 'POST',
    headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': header },
    body: payload,
  });
  const text = await res.text();
  const body = text ? JSON.parse(text) : text;
  checkResponse('POST', '/webhooks/stripe', res.status, res.headers.get('content-type') ?? '', body);
  return { status: res.status, body };
}

const envelope = (type: string, object: Record<string, unknown>, over: Record<string, unknown> = {}) => ({
  id: eventId(),
  object: 'event',
  api_version: '2025-01-27.acacia',
  created: now(),
  livemode: false,
  type,
  data: { object: { livemode: false, ...object } },
  ...over,
});

interface Sold {
  id: string;
  stripeSession: string;
  stripeSub: string;
}

async function sell(product = monthly, quantity = 1): Promise<Sold> {
  const res = await api('POST', '/api/v1/checkout', {
    product_id: product,
    success_url: 'https://vendor.example/thanks',
    ...(quantity > 1 ? { quantity } : {}),
  });
  expect(res.status).toBe(201);
  const db = await connectMongo(stack.topology.mongoUrl, `${stack.topology.dbPrefix}_checkout`);
  const doc = await db.collection('checkout_sessions').findOne({ _id: res.body.id as never });
  await db.close();
  return {
    id: res.body.id,
    stripeSession: doc!.provider_session_id as string,
    stripeSub: `sub_stripe${seq++}${res.body.id.slice(-8)}`,
  };
}

const completed = (s: Sold, amount: number, customer?: string) =>
  envelope('checkout.session.completed', {
    ...(customer ? { customer } : {}),
    id: s.stripeSession,
    object: 'checkout.session',
    client_reference_id: s.id,
    metadata: { checkout_session_id: s.id },
    mode: 'subscription',
    status: 'complete',
    payment_status: 'paid',
    subscription: s.stripeSub,
    amount_total: amount,
    currency: 'eur',
    customer_details: { email: 'stripe-subscriber@example.com' },
  });

const invoice = (
  type: 'invoice.paid' | 'invoice.payment_failed',
  s: Sold,
  id: string,
  period: { start: number; end: number },
  amount = 1000,
  reason = 'subscription_cycle',
) =>
  envelope(type, {
    id,
    object: 'invoice',
    subscription: s.stripeSub,
    subscription_details: { metadata: { checkout_session_id: s.id } },
    billing_reason: reason,
    payment_intent: `pi_${id}`,
    amount_paid: type === 'invoice.paid' ? amount : 0,
    amount_due: amount,
    currency: 'eur',
    lines: { data: [{ period, metadata: {} }] },
  });

const subscriptionEvent = (
  type: string,
  s: Sold,
  over: Record<string, unknown> = {},
  item: Record<string, unknown> = {},
) =>
  envelope(type, {
    id: s.stripeSub,
    object: 'subscription',
    status: 'active',
    cancel_at_period_end: false,
    metadata: { checkout_session_id: s.id },
    items: { data: [{ quantity: 1, price: { metadata: {} }, ...item }] },
    ...over,
  });

const subOf = async (s: Sold) => {
  const id = (await api('GET', `/api/v1/checkout/${s.id}`)).body.subscription_id as string;
  expect(id).toMatch(/^sub_[0-9A-Z]{26}$/);
  return (await api('GET', `/api/v1/subscriptions/${id}`)).body;
};
const validate = async (key: string) =>
  (await api('GET', `/api/v1/licenses/validate?license_key=${encodeURIComponent(key)}`)).body;
const ofSub = (type: string, id: string) =>
  events.all().filter((e) => e.type === type && (e.data as { subscription?: { id: string } }).subscription?.id === id);

describe('a subscription sold through Stripe Checkout', () => {
  let s: Sold;
  let sub: { id: string; license_key: string; current_period_end: string };

  it('checkout.session.completed in subscription mode starts it: an active subscription and its licence', async () => {
    s = await sell(monthly, 2);
    expect((await deliver(completed(s, 2000))).status).toBe(200);
    sub = await subOf(s);
    expect(sub).toMatchObject({ status: 'active', quantity: 2, amount: 2000, livemode: false, test_clock: null });
    const l = (await api('GET', `/api/v1/licenses/${sub.license_key}`)).body;
    expect(l.expires_at).toBe(sub.current_period_end);
    expect(l.policy.max_activations).toBe(4);
    expect(await validate(sub.license_key)).toMatchObject({ valid: true, code: 'valid' });
    // Stripe's own first invoice: recorded, no renewal.
    const first = invoice(
      'invoice.paid',
      s,
      `in_first_${s.id.slice(-10)}`,
      { start: now(), end: now() + 30 * DAY_S },
      2000,
      'subscription_create',
    );
    expect((await deliver(first)).status).toBe(200);
    expect((await subOf(s)).current_period_end).toBe(sub.current_period_end);
    // The test clock does not exist with Stripe.
    expect(
      (
        await api('POST', `/api/v1/subscriptions/${sub.id}/test_clock`, {
          advance_to: new Date(Date.now() + 86_400_000).toISOString(),
        })
      ).status,
    ).toBe(404);
  });

  it('10 concurrent duplicates of invoice.paid renew it once', async () => {
    const start = Math.floor(Date.parse(sub.current_period_end) / 1000);
    const paid = invoice('invoice.paid', s, `in_renew_${s.id.slice(-10)}`, { start, end: start + 31 * DAY_S }, 2000);
    const answers = await Promise.all(Array.from({ length: 10 }, () => deliver(paid)));
    for (const a of answers) expect([200, 409]).toContain(a.status);
    expect(answers.some((a) => a.status === 200 && !a.body.duplicate)).toBe(true);
    const after = await subOf(s);
    expect(Date.parse(after.current_period_end) / 1000).toBe(start + 31 * DAY_S);
    expect(after.invoices.filter((i: { id: string }) => i.id === `in_renew_${s.id.slice(-10)}`)).toHaveLength(1);
    await eventually(() => expect(ofSub('subscription.renewed', sub.id)).toHaveLength(1), { timeoutMs: 10_000 });
    await eventually(async () => expect((await validate(sub.license_key)).expires_at).toBe(after.current_period_end));
    sub = after;
  });

  it('invoice.payment_failed makes it past due (valid, update_payment); then invoice.paid renews it', async () => {
    const start = Math.floor(Date.parse(sub.current_period_end) / 1000);
    const id = `in_fail_${s.id.slice(-10)}`;
    const period = { start, end: start + 30 * DAY_S };
    expect((await deliver(invoice('invoice.payment_failed', s, id, period, 2000))).status).toBe(200);
    expect((await subOf(s)).status).toBe('past_due');
    await eventually(async () =>
      expect(await validate(sub.license_key)).toMatchObject({ valid: true, next_action: 'update_payment' }),
    );
    expect((await deliver(invoice('invoice.paid', s, id, period, 2000))).status).toBe(200);
    const after = await subOf(s);
    expect(after.status).toBe('active');
    expect(Date.parse(after.current_period_end) / 1000).toBe(period.end);
    expect(after.invoices.find((i: { id: string }) => i.id === id).status).toBe('paid');
    await eventually(async () =>
      expect(await validate(sub.license_key)).toMatchObject({ valid: true, next_action: 'none' }),
    );
  });

  it('refuses a livemode or amount that is not ours (400), changing nothing', async () => {
    const start = Math.floor(Date.parse((await subOf(s)).current_period_end) / 1000);
    const wrongAmount = invoice(
      'invoice.paid',
      s,
      `in_amount_${s.id.slice(-10)}`,
      { start, end: start + 30 * DAY_S },
      1,
    );
    expect((await deliver(wrongAmount)).status).toBe(400);
    const live = invoice('invoice.paid', s, `in_live_${s.id.slice(-10)}`, { start, end: start + 30 * DAY_S }, 2000);
    expect((await deliver({ ...live, livemode: true })).status).toBe(400);
    expect(Date.parse((await subOf(s)).current_period_end) / 1000).toBe(start);
  });

  it('a plan change moves the licence to the other product, max_activations × quantity, license.updated; another account’s product is refused', async () => {
    const theirs = (
      await other('POST', '/api/v1/products', {
        name: 'Not yours',
        price: { amount: 100, currency: 'EUR', interval: 'month' },
      })
    ).body.id;
    const refused = await deliver(
      subscriptionEvent(
        'customer.subscription.updated',
        s,
        {},
        { quantity: 2, price: { metadata: { product_id: theirs } } },
      ),
    );
    expect(refused.status).toBe(400);
    expect((await subOf(s)).product_id).toBe(monthly);
    const moved = await deliver(
      subscriptionEvent(
        'customer.subscription.updated',
        s,
        {},
        { quantity: 3, price: { metadata: { product_id: team } } },
      ),
    );
    expect(moved.status).toBe(200);
    const after = await subOf(s);
    expect(after).toMatchObject({ product_id: team, quantity: 3 });
    const l = (await api('GET', `/api/v1/licenses/${sub.license_key}`)).body;
    expect(l).toMatchObject({ product_id: team, key: sub.license_key });
    expect(l.policy.max_activations).toBe(15);
    await events.waitFor(
      (e) =>
        e.type === 'license.updated' &&
        (e.data as { license: { key: string; product_id: string } }).license.product_id === team,
    );
  });

  it('cancellation at period end, then customer.subscription.deleted: the licence is expired', async () => {
    expect(
      (
        await deliver(
          subscriptionEvent(
            'customer.subscription.updated',
            s,
            { cancel_at_period_end: true },
            { quantity: 3, price: { metadata: { product_id: team } } },
          ),
        )
      ).status,
    ).toBe(200);
    expect((await subOf(s)).cancel_at_period_end).toBe(true);
    expect((await validate(sub.license_key)).valid).toBe(true);
    expect((await deliver(subscriptionEvent('customer.subscription.deleted', s, { status: 'canceled' }))).status).toBe(
      200,
    );
    expect((await subOf(s)).status).toBe('canceled');
    await eventually(async () =>
      expect(await validate(sub.license_key)).toMatchObject({ valid: false, code: 'expired' }),
    );
    // A stale update after the deletion changes nothing.
    const stale = subscriptionEvent('customer.subscription.updated', s, { cancel_at_period_end: false }, {});
    expect((await deliver({ ...stale, created: now() - 3600 })).status).toBe(200);
    expect((await subOf(s)).status).toBe('canceled');
  });
});

describe('events out of order', () => {
  it('a renewal that arrives before the checkout is kept, and applied when the subscription starts', async () => {
    const s = await sell();
    const start = now() + 30 * DAY_S;
    const early = invoice('invoice.paid', s, `in_early_${s.id.slice(-10)}`, { start, end: start + 31 * DAY_S });
    expect((await deliver(early)).status).toBe(200);
    expect((await deliver(completed(s, 1000))).status).toBe(200);
    const sub = await subOf(s);
    expect(sub.status).toBe('active');
    expect(Date.parse(sub.current_period_end) / 1000).toBe(start + 31 * DAY_S);
    await eventually(async () =>
      expect((await api('GET', `/api/v1/licenses/${sub.license_key}`)).body.expires_at).toBe(sub.current_period_end),
    );
  });

  it("a full refund of a subscription's invoice acts on its licence as the product's refund_action says", async () => {
    const s = await sell();
    expect((await deliver(completed(s, 1000))).status).toBe(200);
    const sub = await subOf(s);
    const start = Math.floor(Date.parse(sub.current_period_end) / 1000);
    const id = `in_refund_${s.id.slice(-10)}`;
    expect((await deliver(invoice('invoice.paid', s, id, { start, end: start + 30 * DAY_S }))).status).toBe(200);
    const refund = envelope('charge.refunded', {
      id: `ch_${id}`,
      object: 'charge',
      payment_intent: `pi_${id}`,
      refunded: true,
      amount_refunded: 1000,
    });
    expect((await deliver(refund)).status).toBe(200);
    await eventually(async () =>
      expect(await validate(sub.license_key)).toMatchObject({ valid: false, code: 'revoked' }),
    );
  });

  it('cancelling through the API cancels on Stripe (stripe-mock) and here', async () => {
    const s = await sell();
    expect((await deliver(completed(s, 1000))).status).toBe(200);
    const sub = await subOf(s);
    const res = await api('POST', `/api/v1/subscriptions/${sub.id}/cancel`, { at_period_end: true });
    expect(res.status).toBe(200);
    expect(res.body.cancel_at_period_end).toBe(true);
  });
});

describe("Stripe's billing portal", () => {
  const portal = (id: string, as = api) => as('POST', `/api/v1/subscriptions/${id}/billing_portal`);
  const storedCustomer = async (id: string) => {
    const db = await connectMongo(stack.topology.mongoUrl, `${stack.topology.dbPrefix}_checkout`);
    const doc = await db.collection('subscriptions').findOne({ _id: id as never });
    await db.close();
    return doc?.provider_customer_id as string | undefined;
  };
  const portalCalls = () => toStripe.filter((r) => r.method === 'POST' && r.path === '/v1/billing_portal/sessions');

  it("opens a session of Stripe's portal for the customer checkout.session.completed named, returning to the vendor's success_url", async () => {
    const s = await sell();
    const customer = `cus_portal${s.id.slice(-10)}`;
    expect((await deliver(completed(s, 1000, customer))).status).toBe(200);
    const sub = await subOf(s);
    expect(sub).not.toHaveProperty('customer');
    expect(JSON.stringify(sub)).not.toContain(customer);
    expect(await storedCustomer(sub.id)).toBe(customer);
    const before = portalCalls().length;
    const t0 = Date.now();
    const res = await portal(sub.id);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['expires_at', 'url']);
    expect(res.body.url).toMatch(/^https?:\/\//);
    expect(res.body.url).not.toContain('/billing/'); // not the test-mode page
    expect(Date.parse(res.body.expires_at)).toBeGreaterThan(t0);
    const calls = portalCalls().slice(before);
    expect(calls).toHaveLength(1);
    const params = new URLSearchParams(calls[0].body);
    expect(params.get('customer')).toBe(customer);
    expect(params.get('return_url')).toBe('https://vendor.example/thanks');
    // Another account's subscription is not found, and Stripe is not asked.
    const foreign = await portal(sub.id, other);
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe('not_found');
    expect(portalCalls().length).toBe(before + 1);
    // The customer id is in no event (nor so in any webhook).
    await eventually(async () => {
      expect(ofSub('subscription.created', sub.id)).toHaveLength(1);
      expect(
        events
          .all()
          .filter(
            (e) => e.type === 'checkout.completed' && (e.data as { checkout: { id: string } }).checkout.id === s.id,
          ),
      ).toHaveLength(1);
    });
    expect(JSON.stringify(events.all())).not.toContain(customer);
  });

  it('a subscription whose Stripe customer is not known yet: 409 saying why; its next subscription event tells it', async () => {
    const s = await sell();
    expect((await deliver(completed(s, 1000))).status).toBe(200); // (as before this change: no customer)
    const sub = await subOf(s);
    const before = portalCalls().length;
    const res = await portal(sub.id);
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('conflict');
    expect(res.body.detail).toMatch(/Stripe customer is not known/);
    expect(portalCalls().length).toBe(before);
    const customer = `cus_later${s.id.slice(-10)}`;
    expect((await deliver(subscriptionEvent('customer.subscription.updated', s, { customer }))).status).toBe(200);
    expect(await storedCustomer(sub.id)).toBe(customer);
    expect((await portal(sub.id)).status).toBe(200);
    expect(new URLSearchParams(portalCalls().at(-1)!.body).get('customer')).toBe(customer);
  });

  it('Stripe unreachable: 503, as for its other calls', async () => {
    const s = await sell();
    expect((await deliver(completed(s, 1000, `cus_down${s.id.slice(-10)}`))).status).toBe(200);
    const sub = await subOf(s);
    stripeDown = true;
    try {
      const res = await portal(sub.id);
      expect(res.status).toBe(503);
      expect(res.body.code).toBe('service_unavailable');
    } finally {
      stripeDown = false;
    }
    expect((await portal(sub.id)).status).toBe(200);
  });

  it('a canceled subscription: 409, as in test mode', async () => {
    const s = await sell();
    expect((await deliver(completed(s, 1000, `cus_gone${s.id.slice(-10)}`))).status).toBe(200);
    expect((await deliver(subscriptionEvent('customer.subscription.deleted', s, { status: 'canceled' }))).status).toBe(
      200,
    );
    const sub = await subOf(s);
    expect(sub.status).toBe('canceled');
    const res = await portal(sub.id);
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('conflict');
  });
});

// Last: it moves the clock of the whole stack past a payment grace.
describe('past due beyond the payment grace', () => {
  it('the sweep makes a Stripe subscription unpaid and suspends its licence (subscription_unpaid), though Stripe said nothing', async () => {
    const late = await sell(monthly, 1);
    expect((await deliver(completed(late, 1000))).status).toBe(200);
    const started = await subOf(late);
    const start = Math.floor(Date.parse(started.current_period_end) / 1000);
    const failedInvoice = invoice('invoice.payment_failed', late, `in_late_${late.id.slice(-10)}`, {
      start,
      end: start + 30 * DAY_S,
    });
    expect((await deliver(failedInvoice)).status).toBe(200);
    expect((await subOf(late)).status).toBe('past_due');
    expect(await validate(started.license_key)).toMatchObject({ valid: true, next_action: 'update_payment' });
    // Past the period end plus the policy's 7 days of payment grace.
    clock.advance(Date.parse(started.current_period_end) - Date.now() + 8 * DAY_S * 1000);
    await eventually(async () => expect((await subOf(late)).status).toBe('unpaid'), { timeoutMs: 15_000 });
    await eventually(
      async () =>
        expect(await validate(started.license_key)).toMatchObject({ valid: false, code: 'subscription_unpaid' }),
      { timeoutMs: 10_000 },
    );
    await eventually(() => expect(ofSub('subscription.updated', started.id)).not.toEqual([]), { timeoutMs: 10_000 });
  });
});
