import { type AppError, newId } from '@licensing/runtime';
import { eventually } from '../../../../test/support/eventually';
import type { RunningCheckout } from './running-checkout';
import {
  DAY_S,
  completed,
  deliver as deliverTo,
  invoice,
  now,
  ofSub,
  sell as sellWith,
  startStripeCheckout,
  storedCustomer,
  subOf as subOfWith,
  subscriptionEvent,
  type Sold,
  type StripeRecorder,
} from './stripe-subscription-events';

// Subscriptions on the Stripe path, continued, in the checkout service alone against stripe-mock: a
// renewal after a seat change (judged by its subscription lines), a plan change to another price (read
// from the product service), invoice.payment_failed checked as invoice.paid is, a trial that ends
// unpaid, Stripe's billing portal, and the sweep that makes a subscription past its payment grace
// unpaid. What the licence is told is the ApplySubscription the faked licence service receives (what
// it then answers: services/license/test/component/subscription-renewals.test.ts).

const account = newId('acct');
const otherAccount = newId('acct');
let c: RunningCheckout;
let stripeApi: StripeRecorder;
let monthly: string;
/** Another plan: another price, currency, interval, payment grace and entitlements. */
let studio: string;
/** A trial of 14 days, with grace days after the expiry. */
let trial: string;

beforeAll(async () => {
  ({ c, stripeApi } = await startStripeCheckout());
  monthly = c.product(
    account,
    { amount: 1000, currency: 'EUR', interval: 'month' },
    { max_activations: 2, payment_grace_days: 7 },
  ).id;
  studio = c.product(
    account,
    { amount: 25_000, currency: 'USD', interval: 'year' },
    { max_activations: 3, payment_grace_days: 3, entitlements: ['studio-export'] },
  ).id;
  // (grace days are for licences that expire: a subscription's expires at each period end)
  trial = c.product(
    account,
    { amount: 1000, currency: 'EUR', interval: 'month', trial_days: 14 },
    { duration_days: 30, grace_days: 5, payment_grace_days: 7 },
  ).id;
});

afterAll(async () => {
  await c?.stop();
  await stripeApi?.stop();
});

const deliver = (event: Record<string, unknown>) => deliverTo(c, event);
const sell = (product = monthly, quantity = 1) => sellWith(c, account, product, quantity);
const subOf = (s: Sold) => subOfWith(c, account, s);
const told = (subscriptionId: string) => c.applied(subscriptionId).at(-1);

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
    expect((await deliver(subscriptionEvent('customer.subscription.updated', s, {}, { quantity: 3 }))).status).toBe(
      200,
    );
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
    expect(after.invoices.find((i) => i.id === id)).toMatchObject({ status: 'paid', amount: 3250 });
    expect(told(sub.id)).toMatchObject({ expires_at: after.current_period_end, quantity: 3 });
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
  let sub: Awaited<ReturnType<typeof subOf>>;
  const planTo = (product: string, quantity: number, over: Record<string, unknown> = {}) =>
    subscriptionEvent('customer.subscription.updated', s, over, {
      quantity,
      price: { metadata: { product_id: product } },
    });

  it("records the new product's price × seats, currency and interval, read from the product service", async () => {
    s = await sell(monthly, 2);
    expect((await deliver(completed(s, 2000))).status).toBe(200);
    sub = await subOf(s);
    expect((await deliver(planTo(studio, 2))).status).toBe(200);
    expect(await subOf(s)).toMatchObject({
      product_id: studio,
      quantity: 2,
      amount: 50_000,
      currency: 'USD',
      interval: 'year',
      interval_count: 1,
    });
    expect(c.products.requestsTo('getProduct').at(-1)).toMatchObject({ account_id: account, id: studio });
    // The licence takes the new product, its policy (× seats) and its entitlements: the licence service's.
    expect(told(sub.id)).toMatchObject({ product_id: studio, quantity: 2, key: sub.license_key });
  });

  it('the next invoice.paid at the new price renews it; one at the old price is refused (400), changing nothing', async () => {
    const start = Math.floor(Date.parse(sub.current_period_end) / 1000);
    const period = { start, end: start + 365 * DAY_S };
    const old = invoice('invoice.paid', s, `in_oldprice_${s.id.slice(-10)}`, period, 2000, 'subscription_cycle');
    expect((await deliver(old)).status).toBe(400);
    const wrongCurrency = invoice('invoice.paid', s, `in_oldcur_${s.id.slice(-10)}`, period, 50_000);
    expect((await deliver(wrongCurrency)).status).toBe(400);
    expect((await subOf(s)).current_period_end).toBe(sub.current_period_end);
    const id = `in_newprice_${s.id.slice(-10)}`;
    expect((await deliver(invoice('invoice.paid', s, id, period, 50_000, 'subscription_cycle', 'usd'))).status).toBe(
      200,
    );
    const after = await subOf(s);
    expect(after.status).toBe('active');
    expect(Date.parse(after.current_period_end) / 1000).toBe(period.end);
    expect(after.invoices.find((i) => i.id === id)).toMatchObject({ status: 'paid', amount: 50_000, currency: 'USD' });
    await eventually(() => expect(ofSub(c, 'subscription.renewed', sub.id)).not.toEqual([]));
    expect(told(sub.id)).toMatchObject({ product_id: studio, expires_at: after.current_period_end });
    sub = after;
  });

  it('a proration invoice of the change (billing_reason subscription_update) is recorded at its own amount and moves no period; its failure makes the subscription past due', async () => {
    const before = await subOf(s);
    const period = { start: now(), end: now() + 30 * DAY_S };
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
    expect(after.invoices.filter((i) => i.id === prorated)).toEqual([
      expect.objectContaining({ status: 'paid', amount: 12_345, period_end: before.current_period_end }),
    ]);
    const failedId = `in_prorated_failed_${s.id.slice(-10)}`;
    const failed = invoice('invoice.payment_failed', s, failedId, period, 999, 'subscription_update', 'usd');
    expect((await deliver(failed)).status).toBe(200);
    expect(await subOf(s)).toMatchObject({ status: 'past_due', current_period_end: before.current_period_end });
    // The next period's charge, at the plan's price, renews it and ends the arrears.
    const start = Math.floor(Date.parse(before.current_period_end) / 1000);
    const next = { start, end: start + 365 * DAY_S };
    const cycleId = `in_after_proration_${s.id.slice(-10)}`;
    expect((await deliver(invoice('invoice.paid', s, cycleId, next, 50_000, 'subscription_cycle', 'usd'))).status).toBe(
      200,
    );
    expect(await subOf(s)).toMatchObject({ status: 'active' });
    sub = await subOf(s);
  });

  it('a plan change to a product with no recurring price, or another account’s, is refused before anything is written (the customer id too)', async () => {
    const once = c.product(account, { amount: 100, currency: 'EUR' }).id;
    const theirs = c.product(otherAccount, { amount: 100, currency: 'EUR', interval: 'month' }).id;
    const before = await storedCustomer(c, sub.id);
    for (const product of [once, theirs]) {
      const res = await deliver(planTo(product, 2, { customer: `cus_refused${s.id.slice(-8)}` }));
      expect({ product, status: res.status, code: res.body.code }).toEqual({
        product,
        status: 400,
        code: 'invalid_request',
      });
    }
    expect(await subOf(s)).toMatchObject({ product_id: studio, amount: 50_000, currency: 'USD' });
    expect(await storedCustomer(c, sub.id)).toBe(before);
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
      { start, end: start + 30 * DAY_S },
      1,
    );
    expect((await deliver(wrong)).status).toBe(400);
    const after = await subOf(s);
    expect(after.status).toBe('active');
    expect(after.invoices.map((i) => i.id)).not.toContain(`in_failamt_${s.id.slice(-10)}`);
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
    expect(told(sub.id)).toMatchObject({ subscription: { status: 'active', grace_until: '' } });
    expect(ofSub(c, 'subscription.past_due', sub.id)).toEqual([]);
  });
});

describe('a trial on Stripe', () => {
  it('a trial that ends unpaid (invoice.payment_failed while trialing) cancels it on Stripe and here: the licence is expired at once, with no grace days', async () => {
    const s = await sell(trial);
    expect((await deliver(completed(s, 0))).status).toBe(200); // a trial's checkout takes no money
    const sub = await subOf(s);
    expect(sub.status).toBe('trialing');
    expect(told(sub.id)).toMatchObject({ subscription: { status: 'trialing', trial_end: sub.trial_end } });
    const start = Math.floor(Date.parse(sub.trial_end) / 1000);
    const before = stripeApi.toStripe.length;
    const failedId = `in_trialend_${s.id.slice(-10)}`;
    expect(
      (await deliver(invoice('invoice.payment_failed', s, failedId, { start, end: start + 30 * DAY_S }))).status,
    ).toBe(200);
    // Stripe is told to stop billing it (it would retry the charge and keep it past due).
    expect(stripeApi.toStripe.slice(before)).toContainEqual(
      expect.objectContaining({ method: 'DELETE', path: `/v1/subscriptions/${s.stripeSub}` }),
    );
    const after = await subOf(s);
    expect(after.status).toBe('canceled');
    expect(after.invoices.find((i) => i.id === failedId)?.status).toBe('failed');
    await eventually(() => expect(ofSub(c, 'subscription.canceled', sub.id)).toHaveLength(1));
    expect(ofSub(c, 'subscription.past_due', sub.id)).toEqual([]);
    // The policy's 5 grace days do not apply: the trial ended unpaid (ended early, the licence service's rule).
    expect(told(sub.id)).toMatchObject({ subscription: { status: 'canceled', ended_early: true } });
    // Stripe's own deletion that follows changes nothing more.
    expect((await deliver(subscriptionEvent('customer.subscription.deleted', s, { status: 'canceled' }))).status).toBe(
      200,
    );
    expect(ofSub(c, 'subscription.canceled', sub.id)).toHaveLength(1);
  });
});

describe("Stripe's billing portal", () => {
  const portal = (id: string, accountId = account) =>
    c.subs.createBillingPortal({ account_id: accountId, id }).catch((e: unknown) => e as AppError);
  const portalCalls = () =>
    stripeApi.toStripe.filter((r) => r.method === 'POST' && r.path === '/v1/billing_portal/sessions');

  it("opens a session of Stripe's portal for the customer checkout.session.completed named, returning to the vendor's success_url", async () => {
    const s = await sell();
    const customer = `cus_portal${s.id.slice(-10)}`;
    expect((await deliver(completed(s, 1000, customer))).status).toBe(200);
    const sub = await subOf(s);
    expect(JSON.stringify(sub)).not.toContain(customer);
    expect(await storedCustomer(c, sub.id)).toBe(customer);
    const before = portalCalls().length;
    const t0 = Date.now();
    const res = (await portal(sub.id)) as { url: string; expires_at: string };
    expect(Object.keys(res).sort()).toEqual(['expires_at', 'url']);
    expect(res.url).toMatch(/^https?:\/\//);
    expect(res.url).not.toContain('/billing/'); // not the test-mode page
    expect(Date.parse(res.expires_at)).toBeGreaterThan(t0);
    const calls = portalCalls().slice(before);
    expect(calls).toHaveLength(1);
    const params = new URLSearchParams(calls[0].body);
    expect(params.get('customer')).toBe(customer);
    expect(params.get('return_url')).toBe('https://vendor.example/thanks');
    // Another account's subscription is not found, and Stripe is not asked.
    expect(await portal(sub.id, otherAccount)).toMatchObject({ code: 'not_found' });
    expect(portalCalls().length).toBe(before + 1);
    // The customer id is in no event (nor so in any webhook).
    await eventually(() => {
      expect(ofSub(c, 'subscription.created', sub.id)).toHaveLength(1);
      expect(
        c.events
          .all()
          .filter(
            (e) => e.type === 'checkout.completed' && (e.data as { checkout: { id: string } }).checkout.id === s.id,
          ),
      ).toHaveLength(1);
    });
    expect(JSON.stringify(c.events.all())).not.toContain(customer);
  });

  it('a subscription whose Stripe customer is not known yet: 409 saying why; its next subscription event tells it', async () => {
    const s = await sell();
    expect((await deliver(completed(s, 1000))).status).toBe(200); // (as before this change: no customer)
    const sub = await subOf(s);
    const before = portalCalls().length;
    expect(await portal(sub.id)).toMatchObject({
      code: 'conflict',
      message: expect.stringMatching(/Stripe customer is not known/),
    });
    expect(portalCalls().length).toBe(before);
    const customer = `cus_later${s.id.slice(-10)}`;
    expect((await deliver(subscriptionEvent('customer.subscription.updated', s, { customer }))).status).toBe(200);
    expect(await storedCustomer(c, sub.id)).toBe(customer);
    expect(await portal(sub.id)).toMatchObject({ url: expect.any(String) });
    expect(new URLSearchParams(portalCalls().at(-1)!.body).get('customer')).toBe(customer);
  });

  it('Stripe unreachable: 503, as for its other calls', async () => {
    const s = await sell();
    expect((await deliver(completed(s, 1000, `cus_down${s.id.slice(-10)}`))).status).toBe(200);
    const sub = await subOf(s);
    stripeApi.down = true;
    try {
      expect(await portal(sub.id)).toMatchObject({ code: 'service_unavailable' });
    } finally {
      stripeApi.down = false;
    }
    expect(await portal(sub.id)).toMatchObject({ url: expect.any(String) });
  });

  it('a canceled subscription: 409, as in test mode', async () => {
    const s = await sell();
    expect((await deliver(completed(s, 1000, `cus_gone${s.id.slice(-10)}`))).status).toBe(200);
    expect((await deliver(subscriptionEvent('customer.subscription.deleted', s, { status: 'canceled' }))).status).toBe(
      200,
    );
    const sub = await subOf(s);
    expect(sub.status).toBe('canceled');
    expect(await portal(sub.id)).toMatchObject({ code: 'conflict' });
  });
});

// Last: it moves the service's clock past a payment grace.
describe('past due beyond the payment grace', () => {
  it('the sweep makes a Stripe subscription unpaid and suspends its licence (subscription_unpaid), though Stripe said nothing', async () => {
    const late = await sell(monthly, 1);
    expect((await deliver(completed(late, 1000))).status).toBe(200);
    const started = await subOf(late);
    const start = Math.floor(Date.parse(started.current_period_end) / 1000);
    const failedId = `in_late_${late.id.slice(-10)}`;
    expect(
      (await deliver(invoice('invoice.payment_failed', late, failedId, { start, end: start + 30 * DAY_S }))).status,
    ).toBe(200);
    expect((await subOf(late)).status).toBe('past_due');
    expect(told(started.id)).toMatchObject({ subscription: { status: 'past_due' } });
    // Past the period end plus the policy's 7 days of payment grace.
    c.clock.advance(Date.parse(started.current_period_end) - Date.now() + 8 * DAY_S * 1000);
    await eventually(async () => expect((await subOf(late)).status).toBe('unpaid'), { timeoutMs: 15_000 });
    await eventually(
      () => expect(told(started.id)).toMatchObject({ change: 'unpaid', subscription: { status: 'unpaid' } }),
      {
        timeoutMs: 10_000,
      },
    );
    await eventually(() => expect(ofSub(c, 'subscription.updated', started.id)).not.toEqual([]), { timeoutMs: 10_000 });
  });
});
