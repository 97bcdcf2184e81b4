// Subscriptions on the Stripe path, against stripe-mock (started by the jest globalSetup). stripe-mock answers
// the API calls but sends no webhooks, so the tests sign the events Stripe would send with the
// endpoint's secret: a subscription checkout, renewals (10 concurrent duplicates of invoice.paid renew
// once), a failed payment then its payment, out-of-order arrival, a plan change (and the renewal at the
// new plan's price), cancellation, a trial that ends unpaid, and refused events that write nothing.
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
/** Another plan: another price, currency, interval, payment grace and entitlements. */
let studio: string;
/** A trial of 14 days, with grace days after the expiry. */
let trial: string;

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
  studio = (
    await api('POST', '/api/v1/products', {
      name: 'Forge Studio',
      price: { amount: 25_000, currency: 'USD', interval: 'year' },
      policy: { max_activations: 3, payment_grace_days: 3, entitlements: ['studio-export'] },
    })
  ).body.id;
  trial = (
    await api('POST', '/api/v1/products', {
      name: 'Forge Trial',
      price: { amount: 1000, currency: 'EUR', interval: 'month', trial_days: 14 },
      // (grace days are for licences that expire: a subscription's expires at each period end)
      policy: { duration_days: 30, grace_days: 5, payment_grace_days: 7 },
    })
  ).body.id;
  expect(trial).toMatch(/^prod_/);
  expect(studio).toMatch(/^prod_/);
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
  currency = 'eur',
  customer?: string,
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
    currency,
    lines: { data: [{ period, metadata: {} }] },
    ...(customer ? { customer } : {}),
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
/** The long form, asking for entitlements. */
const validateFor = async (key: string, entitlements: string[]) =>
  (await api('POST', '/api/v1/keys/validate', { key, entitlements })).body;
/** The Stripe customer stored with a subscription (internal: in no answer). */
const storedCustomer = async (id: string) => {
  const db = await connectMongo(stack.topology.mongoUrl, `${stack.topology.dbPrefix}_checkout`);
  const doc = await db.collection('subscriptions').findOne({ _id: id as never });
  await db.close();
  return doc?.provider_customer_id as string | undefined;
};
const ofSub = (type: string, id: string) =>
  events.all().filter((e) => e.type === type && (e.data as { subscription?: { id: string } }).subscription?.id === id);
const eventFor = (type: string, id: string) =>
  events.waitFor((e) => e.type === type && (e.data as { subscription?: { id: string } }).subscription?.id === id);

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

  it('a Stripe event about a subscription that is not ours is kept as what it means only (no customer details), for 30 days', async () => {
    const foreign = { id: `cs_${'0'.repeat(26)}`, stripeSession: '', stripeSub: `sub_foreign${seq++}x` };
    const event = subscriptionEvent('customer.subscription.updated', foreign, {
      metadata: {},
      customer: 'cus_Foreign1',
      customer_email: 'someone.else@example.com',
      default_payment_method: { billing_details: { name: 'Someone Else', email: 'someone.else@example.com' } },
    });
    const t0 = Date.now();
    expect((await deliver(event)).status).toBe(200);
    const db = await connectMongo(stack.topology.mongoUrl, `${stack.topology.dbPrefix}_checkout`);
    const kept = await db.collection('subscription_pending_events').findOne({ _id: event.id as never });
    await db.close();
    expect(kept).toMatchObject({ provider_subscription_id: foreign.stripeSub, action: { kind: 'subscription' } });
    expect(kept).not.toHaveProperty('event');
    expect(JSON.stringify(kept)).not.toContain('someone.else@example.com');
    expect(JSON.stringify(kept)).not.toContain('Someone Else');
    const expires = (kept!.expires_at as Date).getTime();
    expect(expires).toBeGreaterThanOrEqual(t0 + 30 * DAY_S * 1000 - 60_000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 30 * DAY_S * 1000 + 60_000);
  });

  it('cancelling through the API cancels on Stripe (stripe-mock) and here', async () => {
    const s = await sell();
    expect((await deliver(completed(s, 1000))).status).toBe(200);
    const sub = await subOf(s);
    const before = toStripe.length;
    const res = await api('POST', `/api/v1/subscriptions/${sub.id}/cancel`, { at_period_end: true });
    expect(res.status).toBe(200);
    expect(res.body.cancel_at_period_end).toBe(true);
    expect(toStripe.slice(before)).toEqual([
      expect.objectContaining({
        method: 'POST',
        path: `/v1/subscriptions/${s.stripeSub}`,
        body: expect.stringContaining('cancel_at_period_end=true'),
      }),
    ]);
  });

  it('a past-due subscription cancelled "at period end" ends now on Stripe too: its retries cannot charge for a licence that has ended', async () => {
    const s = await sell();
    expect((await deliver(completed(s, 1000))).status).toBe(200);
    const sub = await subOf(s);
    const start = Math.floor(Date.parse(sub.current_period_end) / 1000);
    const failed = invoice('invoice.payment_failed', s, `in_pastdue_${s.id.slice(-10)}`, {
      start,
      end: start + 30 * DAY_S,
    });
    expect((await deliver(failed)).status).toBe(200);
    expect((await subOf(s)).status).toBe('past_due');
    const before = toStripe.length;
    const res = await api('POST', `/api/v1/subscriptions/${sub.id}/cancel`, { at_period_end: true });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('canceled');
    expect(toStripe.slice(before)).toEqual([
      expect.objectContaining({ method: 'DELETE', path: `/v1/subscriptions/${s.stripeSub}` }),
    ]);
    await eventually(async () =>
      expect(await validate(sub.license_key)).toMatchObject({ valid: false, code: 'expired' }),
    );
  });
});

describe('refunds and disputes of a subscription’s payments', () => {
  const takenBack = (type: 'charge.refunded' | 'charge.dispute.created', paymentId: string) =>
    type === 'charge.refunded'
      ? envelope(type, {
          id: `ch_${paymentId}`,
          object: 'charge',
          payment_intent: paymentId,
          refunded: true,
          amount_refunded: 1000,
        })
      : envelope(type, { id: `dp_${paymentId}`, object: 'dispute', payment_intent: paymentId, amount: 1000 });
  const cancelCalls = (s: Sold, from: number) =>
    toStripe.slice(from).filter((r) => r.method === 'DELETE' && r.path === `/v1/subscriptions/${s.stripeSub}`);

  /** A subscription sold, its first invoice paid (subscription_create), then one renewal paid. */
  async function renewedOnce() {
    const s = await sell();
    expect((await deliver(completed(s, 1000))).status).toBe(200);
    const started = await subOf(s);
    const first = `in_first_${s.id.slice(-10)}`;
    const now0 = Math.floor(Date.parse(started.current_period_start) / 1000);
    const end0 = Math.floor(Date.parse(started.current_period_end) / 1000);
    expect(
      (await deliver(invoice('invoice.paid', s, first, { start: now0, end: end0 }, 1000, 'subscription_create')))
        .status,
    ).toBe(200);
    const renewal = `in_renewal_${s.id.slice(-10)}`;
    expect((await deliver(invoice('invoice.paid', s, renewal, { start: end0, end: end0 + 30 * DAY_S }))).status).toBe(
      200,
    );
    const sub = await subOf(s);
    expect(sub.status).toBe('active');
    await eventually(async () =>
      expect(await validate(sub.license_key)).toMatchObject({ valid: true, expires_at: sub.current_period_end }),
    );
    return { s, sub, first, renewal };
  }

  it("a renewal's refund and a proration's dispute are recorded on the subscription; the licence stays valid and Stripe keeps billing", async () => {
    const { s, sub, renewal } = await renewedOnce();
    const prorated = `in_proration_${s.id.slice(-10)}`;
    const span = { start: now(), end: Math.floor(Date.parse(sub.current_period_end) / 1000) };
    expect((await deliver(invoice('invoice.paid', s, prorated, span, 450, 'subscription_update'))).status).toBe(200);
    const before = toStripe.length;
    const t0 = Date.now();
    expect((await deliver(takenBack('charge.refunded', `pi_${renewal}`))).status).toBe(200);
    expect((await deliver(takenBack('charge.dispute.created', `pi_${prorated}`))).status).toBe(200);
    const after = await subOf(s);
    expect(after).toMatchObject({ status: 'active', current_period_end: sub.current_period_end });
    expect(after.refunds).toHaveLength(2);
    expect(after.refunds).toEqual(
      expect.arrayContaining([
        { invoice_id: renewal, cause: 'refund', amount: 1000, currency: 'EUR', refunded_at: expect.any(String) },
        { invoice_id: prorated, cause: 'dispute', amount: 450, currency: 'EUR', refunded_at: expect.any(String) },
      ]),
    );
    for (const r of after.refunds) expect(Date.parse(r.refunded_at)).toBeGreaterThanOrEqual(t0 - 1000);
    // The same refund again (another event of it) records nothing more.
    expect((await deliver(takenBack('charge.refunded', `pi_${renewal}`))).status).toBe(200);
    expect((await subOf(s)).refunds).toHaveLength(2);
    // In lists: [] (as invoices).
    const listed = (await api('GET', `/api/v1/subscriptions?product_id=${monthly}&limit=100`)).body.data;
    expect(listed.find((x: { id: string }) => x.id === sub.id).refunds).toEqual([]);
    expect(cancelCalls(s, before)).toEqual([]);
    expect(await validate(sub.license_key)).toMatchObject({ valid: true, code: 'valid' });
    expect((await api('GET', `/api/v1/licenses/${sub.license_key}`)).body.status).toBe('active');
    expect(ofSub('subscription.canceled', sub.id)).toEqual([]);
  });

  it("a refund of the first payment cancels the subscription on Stripe and here, and applies the product's refund_action (revoke)", async () => {
    const { s, sub, first } = await renewedOnce();
    const before = toStripe.length;
    expect((await deliver(takenBack('charge.refunded', `pi_${first}`))).status).toBe(200);
    expect(cancelCalls(s, before)).toHaveLength(1);
    const after = await subOf(s);
    expect(after.status).toBe('canceled');
    expect(after.refunds).toEqual([
      { invoice_id: first, cause: 'refund', amount: 1000, currency: 'EUR', refunded_at: expect.any(String) },
    ]);
    await eventFor('subscription.canceled', sub.id);
    await eventually(async () =>
      expect(await validate(sub.license_key)).toMatchObject({ valid: false, code: 'revoked' }),
    );
    // Stripe's deletion that follows, and the refund again, change nothing more.
    expect((await deliver(subscriptionEvent('customer.subscription.deleted', s, { status: 'canceled' }))).status).toBe(
      200,
    );
    expect((await deliver(takenBack('charge.refunded', `pi_${first}`))).status).toBe(200);
    expect(ofSub('subscription.canceled', sub.id)).toHaveLength(1);
    expect((await api('GET', `/api/v1/licenses/${sub.license_key}`)).body.status).toBe('revoked');
  });

  it('a dispute of the first payment does the same; Stripe unreachable: 503 and nothing changes, the retry ends it', async () => {
    const { s, sub, first } = await renewedOnce();
    stripeDown = true;
    try {
      const refused = await deliver(takenBack('charge.dispute.created', `pi_${first}`));
      expect(refused.status).toBe(503);
    } finally {
      stripeDown = false;
    }
    expect(await subOf(s)).toMatchObject({ status: 'active', refunds: [] });
    expect(await validate(sub.license_key)).toMatchObject({ valid: true });
    const before = toStripe.length;
    expect((await deliver(takenBack('charge.dispute.created', `pi_${first}`))).status).toBe(200);
    expect(cancelCalls(s, before)).toHaveLength(1);
    expect(await subOf(s)).toMatchObject({ status: 'canceled', refunds: [{ invoice_id: first, cause: 'dispute' }] });
    await eventually(async () =>
      expect(await validate(sub.license_key)).toMatchObject({ valid: false, code: 'revoked' }),
    );
  });
});

describe('a refund that arrives before its invoice', () => {
  it("is kept, and applied by the subscription's rules once the invoice is recorded: the first payment's ends it", async () => {
    const s = await sell();
    expect((await deliver(completed(s, 1000))).status).toBe(200);
    const sub = await subOf(s);
    const first = `in_firstlate_${s.id.slice(-10)}`;
    const refund = envelope('charge.refunded', {
      id: `ch_${first}`,
      object: 'charge',
      payment_intent: `pi_${first}`,
      refunded: true,
      amount_refunded: 1000,
    });
    expect((await deliver(refund)).status).toBe(200);
    expect(await subOf(s)).toMatchObject({ status: 'active', refunds: [] });
    const before = toStripe.length;
    const period = {
      start: Math.floor(Date.parse(sub.current_period_start) / 1000),
      end: Math.floor(Date.parse(sub.current_period_end) / 1000),
    };
    expect((await deliver(invoice('invoice.paid', s, first, period, 1000, 'subscription_create'))).status).toBe(200);
    expect(
      toStripe.slice(before).filter((r) => r.method === 'DELETE' && r.path === `/v1/subscriptions/${s.stripeSub}`),
    ).toHaveLength(1);
    expect(await subOf(s)).toMatchObject({ status: 'canceled', refunds: [{ invoice_id: first, cause: 'refund' }] });
    await eventually(async () =>
      expect(await validate(sub.license_key)).toMatchObject({ valid: false, code: 'revoked' }),
    );
  });
});

describe('a renewal after a seat change, with prorations', () => {
  /** A period line of the subscription's price, and proration lines, as Stripe lists them (API 2025-01-27). */
  const line = (quantity: number, unit: number, period: { start: number; end: number }, proration = false) => ({
    object: 'line_item',
    type: 'subscription',
    proration,
    quantity,
    price: { object: 'price', unit_amount: unit, currency: 'eur' },
    amount: proration ? Math.round((unit * quantity) / 2) : unit * quantity,
    period,
    metadata: {},
  });

  it('is judged by its subscription lines (price × seats), not by what was paid; the amount paid is recorded', async () => {
    const s = await sell(monthly, 2);
    expect((await deliver(completed(s, 2000))).status).toBe(200);
    const sub = await subOf(s);
    // 2 → 3 seats mid-period (Stripe's default: prorations billed with the next period).
    const seats = subscriptionEvent('customer.subscription.updated', s, {}, { quantity: 3 });
    expect((await deliver(seats)).status).toBe(200);
    expect(await subOf(s)).toMatchObject({ quantity: 3, amount: 3000 });
    const start = Math.floor(Date.parse(sub.current_period_end) / 1000);
    const period = { start, end: start + 31 * DAY_S };
    const half = { start: start - 15 * DAY_S, end: start };
    const id = `in_seats_${s.id.slice(-10)}`;
    const renewal = invoice('invoice.paid', s, id, period, 3250);
    (renewal.data.object as Record<string, unknown>).lines = {
      object: 'list',
      has_more: false,
      data: [line(2, -1000, half, true), line(3, 1000, half, true), line(3, 1000, period)],
    };
    expect((await deliver(renewal)).status).toBe(200);
    const after = await subOf(s);
    expect(after.status).toBe('active');
    expect(Date.parse(after.current_period_end) / 1000).toBe(period.end);
    expect(after.invoices.find((i: { id: string }) => i.id === id)).toMatchObject({ status: 'paid', amount: 3250 });
    await eventually(async () =>
      expect(await validate(sub.license_key)).toMatchObject({ valid: true, expires_at: after.current_period_end }),
    );
    // A coupon: less is paid for the same lines, and the next period renews too.
    const next = { start: period.end, end: period.end + 30 * DAY_S };
    const discounted = invoice('invoice.paid', s, `in_coupon_${s.id.slice(-10)}`, next, 2400);
    (discounted.data.object as Record<string, unknown>).lines = { data: [line(3, 1000, next)] };
    expect((await deliver(discounted)).status).toBe(200);
    expect(Date.parse((await subOf(s)).current_period_end) / 1000).toBe(next.end);
    // Lines at another price are still refused (400), changing nothing.
    const later = { start: next.end, end: next.end + 30 * DAY_S };
    const wrong = invoice('invoice.paid', s, `in_wrongline_${s.id.slice(-10)}`, later, 3000);
    (wrong.data.object as Record<string, unknown>).lines = { data: [line(3, 500, later)] };
    const refused = await deliver(wrong);
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toMatch(/subscription lines/);
    expect(Date.parse((await subOf(s)).current_period_end) / 1000).toBe(next.end);
  });
});

describe('a plan change to another price', () => {
  let s: Sold;
  let sub: { id: string; license_key: string; current_period_end: string };
  const planTo = (product: string, quantity: number, over: Record<string, unknown> = {}) =>
    subscriptionEvent('customer.subscription.updated', s, over, {
      quantity,
      price: { metadata: { product_id: product } },
    });

  it("records the new product's price × seats, currency and interval, read from the product service", async () => {
    s = await sell(monthly, 2);
    expect((await deliver(completed(s, 2000))).status).toBe(200);
    sub = await subOf(s);
    expect(await validateFor(sub.license_key, ['studio-export'])).toMatchObject({
      valid: false,
      code: 'entitlements_missing',
    });
    expect((await deliver(planTo(studio, 2))).status).toBe(200);
    expect(await subOf(s)).toMatchObject({
      product_id: studio,
      quantity: 2,
      amount: 50_000,
      currency: 'USD',
      interval: 'year',
      interval_count: 1,
    });
    // The licence takes the new product, its policy (× seats) and its entitlements.
    await eventually(async () =>
      expect(await validateFor(sub.license_key, ['studio-export'])).toMatchObject({ valid: true, code: 'valid' }),
    );
    const l = (await api('GET', `/api/v1/licenses/${sub.license_key}`)).body;
    expect(l).toMatchObject({ product_id: studio, entitlements: ['studio-export'] });
    expect(l.policy.max_activations).toBe(6);
  });

  it('the next invoice.paid at the new price renews it; one at the old price is refused (400), changing nothing', async () => {
    const start = Math.floor(Date.parse(sub.current_period_end) / 1000);
    const period = { start, end: start + 365 * DAY_S };
    const old = invoice('invoice.paid', s, `in_oldprice_${s.id.slice(-10)}`, period, 2000, 'subscription_cycle');
    expect((await deliver(old)).status).toBe(400);
    const wrongCurrency = invoice('invoice.paid', s, `in_oldcur_${s.id.slice(-10)}`, period, 50_000);
    expect((await deliver(wrongCurrency)).status).toBe(400);
    expect((await subOf(s)).current_period_end).toBe(sub.current_period_end);
    const paid = invoice(
      'invoice.paid',
      s,
      `in_newprice_${s.id.slice(-10)}`,
      period,
      50_000,
      'subscription_cycle',
      'usd',
    );
    expect((await deliver(paid)).status).toBe(200);
    const after = await subOf(s);
    expect(after.status).toBe('active');
    expect(Date.parse(after.current_period_end) / 1000).toBe(period.end);
    expect(after.invoices.find((i: { id: string }) => i.id === `in_newprice_${s.id.slice(-10)}`)).toMatchObject({
      status: 'paid',
      amount: 50_000,
      currency: 'USD',
    });
    await eventFor('subscription.renewed', sub.id);
    await eventually(async () =>
      expect(await validateFor(sub.license_key, ['studio-export'])).toMatchObject({
        valid: true,
        expires_at: after.current_period_end,
      }),
    );
    sub = after;
  });

  it('a proration invoice of the change (billing_reason subscription_update) is recorded at its own amount and moves no period; its failure makes the subscription past due', async () => {
    const before = await subOf(s);
    const period = { start: Math.floor(Date.now() / 1000), end: Math.floor(Date.now() / 1000) + 30 * DAY_S };
    const prorated = `in_prorated_${s.id.slice(-10)}`;
    const paid = () => invoice('invoice.paid', s, prorated, period, 12_345, 'subscription_update', 'usd');
    expect((await deliver(paid())).status).toBe(200);
    expect((await deliver(paid())).status).toBe(200); // the same invoice in another event: recorded once
    const after = await subOf(s);
    expect(after).toMatchObject({
      status: 'active',
      current_period_start: before.current_period_start,
      current_period_end: before.current_period_end,
    });
    expect(after.invoices.filter((i: { id: string }) => i.id === prorated)).toEqual([
      expect.objectContaining({ status: 'paid', amount: 12_345, period_end: before.current_period_end }),
    ]);
    const failed = invoice(
      'invoice.payment_failed',
      s,
      `in_prorated_failed_${s.id.slice(-10)}`,
      period,
      999,
      'subscription_update',
      'usd',
    );
    expect((await deliver(failed)).status).toBe(200);
    expect(await subOf(s)).toMatchObject({ status: 'past_due', current_period_end: before.current_period_end });
    // The next period's charge, at the plan's price, renews it and ends the arrears.
    const start = Math.floor(Date.parse(before.current_period_end) / 1000);
    const next = { start, end: start + 365 * DAY_S };
    const cycle = invoice(
      'invoice.paid',
      s,
      `in_after_proration_${s.id.slice(-10)}`,
      next,
      50_000,
      'subscription_cycle',
      'usd',
    );
    expect((await deliver(cycle)).status).toBe(200);
    expect(await subOf(s)).toMatchObject({ status: 'active' });
    sub = await subOf(s);
  });

  it('a plan change to a product with no recurring price, or another account’s, is refused before anything is written (the customer id too)', async () => {
    const once = (
      await api('POST', '/api/v1/products', { name: 'Forge Once', price: { amount: 100, currency: 'EUR' } })
    ).body.id;
    const theirs = (
      await other('POST', '/api/v1/products', {
        name: 'Not yours either',
        price: { amount: 100, currency: 'EUR', interval: 'month' },
      })
    ).body.id;
    const before = await storedCustomer(sub.id);
    for (const product of [once, theirs]) {
      const res = await deliver(planTo(product, 2, { customer: `cus_refused${s.id.slice(-8)}` }));
      expect({ product, status: res.status, code: res.body.code }).toEqual({
        product,
        status: 400,
        code: 'invalid_request',
      });
    }
    expect(await subOf(s)).toMatchObject({ product_id: studio, amount: 50_000, currency: 'USD' });
    expect(await storedCustomer(sub.id)).toBe(before);
  });
});

describe('invoice.payment_failed is checked as invoice.paid is', () => {
  it("a failure whose amount is not the subscription's price is refused (400), changing nothing", async () => {
    const s = await sell();
    expect((await deliver(completed(s, 1000))).status).toBe(200);
    const sub = await subOf(s);
    const start = Math.floor(Date.parse(sub.current_period_end) / 1000);
    const wrong = invoice(
      'invoice.payment_failed',
      s,
      `in_failamt_${s.id.slice(-10)}`,
      {
        start,
        end: start + 30 * DAY_S,
      },
      1,
    );
    expect((await deliver(wrong)).status).toBe(400);
    const after = await subOf(s);
    expect(after.status).toBe('active');
    expect(after.invoices.map((i: { id: string }) => i.id)).not.toContain(`in_failamt_${s.id.slice(-10)}`);
  });

  it('a late failure of a period older than the current one leaves an active subscription active', async () => {
    const s = await sell();
    expect((await deliver(completed(s, 1000))).status).toBe(200);
    const sub = await subOf(s);
    const start = Math.floor(Date.parse(sub.current_period_end) / 1000);
    const period = { start, end: start + 30 * DAY_S };
    // The period renewed with one invoice; a failed attempt of another invoice for it arrives late.
    expect((await deliver(invoice('invoice.paid', s, `in_cur_${s.id.slice(-10)}`, period))).status).toBe(200);
    expect((await subOf(s)).current_period_end).toBe(new Date(period.end * 1000).toISOString());
    const late = invoice('invoice.payment_failed', s, `in_older_${s.id.slice(-10)}`, {
      start: start - 30 * DAY_S,
      end: start,
    });
    expect((await deliver(late)).status).toBe(200);
    expect((await subOf(s)).status).toBe('active');
    expect(await validate(sub.license_key)).toMatchObject({ valid: true, next_action: 'none' });
    expect(ofSub('subscription.past_due', sub.id)).toEqual([]);
  });
});

describe('a trial on Stripe', () => {
  it('a trial that ends unpaid (invoice.payment_failed while trialing) cancels it on Stripe and here: the licence is expired at once, with no grace days', async () => {
    const s = await sell(trial);
    expect((await deliver(completed(s, 0))).status).toBe(200); // a trial's checkout takes no money
    const sub = await subOf(s);
    expect(sub.status).toBe('trialing');
    expect(await validate(sub.license_key)).toMatchObject({ valid: true, code: 'valid', trial_end: sub.trial_end });
    const start = Math.floor(Date.parse(sub.trial_end) / 1000);
    const before = toStripe.length;
    const failed = invoice('invoice.payment_failed', s, `in_trialend_${s.id.slice(-10)}`, {
      start,
      end: start + 30 * DAY_S,
    });
    expect((await deliver(failed)).status).toBe(200);
    // Stripe is told to stop billing it (it would retry the charge and keep it past due).
    expect(toStripe.slice(before)).toContainEqual(
      expect.objectContaining({ method: 'DELETE', path: `/v1/subscriptions/${s.stripeSub}` }),
    );
    const after = await subOf(s);
    expect(after.status).toBe('canceled');
    expect(after.invoices.find((i: { id: string }) => i.id === `in_trialend_${s.id.slice(-10)}`).status).toBe('failed');
    await eventFor('subscription.canceled', sub.id);
    expect(ofSub('subscription.past_due', sub.id)).toEqual([]);
    // The policy's 5 grace days do not apply: the trial ended unpaid.
    await eventually(async () =>
      expect(await validate(sub.license_key)).toMatchObject({ valid: false, code: 'expired', next_action: 'renew' }),
    );
    expect(await validateFor(sub.license_key, [])).toMatchObject({ valid: false, code: 'expired' });
    // Stripe's own deletion that follows changes nothing more.
    expect((await deliver(subscriptionEvent('customer.subscription.deleted', s, { status: 'canceled' }))).status).toBe(
      200,
    );
    expect(ofSub('subscription.canceled', sub.id)).toHaveLength(1);
  });
});

describe("Stripe's billing portal", () => {
  const portal = (id: string, as = api) => as('POST', `/api/v1/subscriptions/${id}/billing_portal`);
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
