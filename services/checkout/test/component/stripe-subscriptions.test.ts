import { newId } from '@licensing/runtime';
import { eventually } from '../../../../test/support/eventually';
import type { RunningCheckout } from './running-checkout';
import {
  DAY_S,
  completed,
  deliver as deliverTo,
  envelope,
  invoice,
  now,
  ofSub,
  sell as sellWith,
  startStripeCheckout,
  subOf as subOfWith,
  subscriptionEvent,
  type Sold,
  type StripeRecorder,
} from './stripe-subscription-events';

// Subscriptions on the Stripe path, in the checkout service alone against stripe-mock (through a
// recorder of what is asked of Stripe), the product and licence services faked: a subscription
// checkout, renewals (10 concurrent duplicates of invoice.paid renew once), a failed payment then its
// payment, refused events that write nothing, a plan change, cancellation, events out of order, and
// refunds and disputes of its payments. What the licence is told is the ApplySubscription (or
// TransitionLicense) the faked licence service receives; how the licence then validates is the licence
// service's (services/license/test/component/subscription-renewals.test.ts).

const account = newId('acct');
const otherAccount = newId('acct');
let c: RunningCheckout;
let stripeApi: StripeRecorder;
let monthly: string;
let team: string;

beforeAll(async () => {
  ({ c, stripeApi } = await startStripeCheckout());
  monthly = c.product(
    account,
    { amount: 1000, currency: 'EUR', interval: 'month' },
    { max_activations: 2, payment_grace_days: 7 },
  ).id;
  team = c.product(account, { amount: 3000, currency: 'EUR', interval: 'month' }, { max_activations: 5 }).id;
});

afterAll(async () => {
  await c?.stop();
  await stripeApi?.stop();
});

const deliver = (event: Record<string, unknown>) => deliverTo(c, event);
const sell = (product = monthly, quantity = 1) => sellWith(c, account, product, quantity);
const subOf = (s: Sold) => subOfWith(c, account, s);
const told = (subscriptionId: string) => c.applied(subscriptionId).at(-1);
const licenceStatus = (key: string) => c.issued.find((l) => l.key === key)?.status;

describe('a subscription sold through Stripe Checkout', () => {
  let s: Sold;
  let sub: Awaited<ReturnType<typeof subOf>>;

  it('checkout.session.completed in subscription mode starts it: an active subscription and its licence', async () => {
    s = await sell(monthly, 2);
    expect((await deliver(completed(s, 2000))).status).toBe(200);
    sub = await subOf(s);
    expect(sub).toMatchObject({ status: 'active', quantity: 2, amount: 2000, livemode: false, test_clock: '' });
    expect(told(sub.id)).toMatchObject({
      key: sub.license_key,
      expires_at: sub.current_period_end,
      quantity: 2, // the licence's max_activations: 2 per seat × 2
      subscription: { status: 'active' },
    });
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
    const clock = await c.subs
      .advanceTestClock({
        account_id: account,
        id: sub.id,
        advance_to: new Date(Date.now() + 86_400_000).toISOString(),
      })
      .catch((e: unknown) => e);
    expect(clock).toMatchObject({ code: 'not_found' });
  });

  it('10 concurrent duplicates of invoice.paid renew it once', async () => {
    const start = Math.floor(Date.parse(sub.current_period_end) / 1000);
    const paid = invoice('invoice.paid', s, `in_renew_${s.id.slice(-10)}`, { start, end: start + 31 * DAY_S }, 2000);
    const answers = await Promise.all(Array.from({ length: 10 }, () => deliver(paid)));
    for (const a of answers) expect([200, 409]).toContain(a.status);
    expect(answers.some((a) => a.status === 200 && !a.body.duplicate)).toBe(true);
    const after = await subOf(s);
    expect(Date.parse(after.current_period_end) / 1000).toBe(start + 31 * DAY_S);
    expect(after.invoices.filter((i) => i.id === `in_renew_${s.id.slice(-10)}`)).toHaveLength(1);
    await eventually(() => expect(ofSub(c, 'subscription.renewed', sub.id)).toHaveLength(1), { timeoutMs: 10_000 });
    expect(told(sub.id)).toMatchObject({ expires_at: after.current_period_end });
    sub = after;
  });

  it('invoice.payment_failed makes it past due (valid, update_payment); then invoice.paid renews it', async () => {
    const start = Math.floor(Date.parse(sub.current_period_end) / 1000);
    const id = `in_fail_${s.id.slice(-10)}`;
    const period = { start, end: start + 30 * DAY_S };
    expect((await deliver(invoice('invoice.payment_failed', s, id, period, 2000))).status).toBe(200);
    expect((await subOf(s)).status).toBe('past_due');
    expect(told(sub.id)).toMatchObject({ subscription: { status: 'past_due' } });
    expect(told(sub.id)!.subscription!.grace_until).not.toBe('');
    expect((await deliver(invoice('invoice.paid', s, id, period, 2000))).status).toBe(200);
    const after = await subOf(s);
    expect(after.status).toBe('active');
    expect(Date.parse(after.current_period_end) / 1000).toBe(period.end);
    expect(after.invoices.find((i) => i.id === id)?.status).toBe('paid');
    expect(told(sub.id)).toMatchObject({ subscription: { status: 'active', grace_until: '' } });
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
    const theirs = c.product(otherAccount, { amount: 100, currency: 'EUR', interval: 'month' }).id;
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
    expect(await subOf(s)).toMatchObject({ product_id: team, quantity: 3 });
    // The licence moves to the product, its max_activations × 3, and says so (license.updated): the licence service's.
    expect(told(sub.id)).toMatchObject({ key: sub.license_key, product_id: team, quantity: 3 });
  });

  it('cancellation at period end, then customer.subscription.deleted: the licence is expired', async () => {
    const atEnd = subscriptionEvent(
      'customer.subscription.updated',
      s,
      { cancel_at_period_end: true },
      { quantity: 3, price: { metadata: { product_id: team } } },
    );
    expect((await deliver(atEnd)).status).toBe(200);
    expect((await subOf(s)).cancel_at_period_end).toBe(true);
    expect(told(sub.id)).toMatchObject({ subscription: { status: 'active' } });
    expect((await deliver(subscriptionEvent('customer.subscription.deleted', s, { status: 'canceled' }))).status).toBe(
      200,
    );
    expect((await subOf(s)).status).toBe('canceled');
    expect(told(sub.id)).toMatchObject({ change: 'canceled', subscription: { status: 'canceled' } });
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
    await eventually(async () => expect(told(sub.id)).toMatchObject({ expires_at: sub.current_period_end }));
  });

  it('a Stripe event about a subscription that is not ours is kept as what it means only (no customer details), for 30 days', async () => {
    const foreign = { id: `cs_${'0'.repeat(26)}`, stripeSession: '', stripeSub: `sub_foreign${newId('x').slice(-6)}x` };
    const event = subscriptionEvent('customer.subscription.updated', foreign, {
      metadata: {},
      customer: 'cus_Foreign1',
      customer_email: 'someone.else@example.com',
      default_payment_method: { billing_details: { name: 'Someone Else', email: 'someone.else@example.com' } },
    });
    const t0 = Date.now();
    expect((await deliver(event)).status).toBe(200);
    const db = await c.db();
    const kept = await db.collection('subscription_pending_events').findOne({ _id: event.id as never });
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
    const before = stripeApi.toStripe.length;
    const res = await c.subs.cancelSubscription({ account_id: account, id: sub.id, at_period_end: true });
    expect(res.cancel_at_period_end).toBe(true);
    expect(stripeApi.toStripe.slice(before)).toEqual([
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
    const before = stripeApi.toStripe.length;
    const res = await c.subs.cancelSubscription({ account_id: account, id: sub.id, at_period_end: true });
    expect(res.status).toBe('canceled');
    expect(stripeApi.toStripe.slice(before)).toEqual([
      expect.objectContaining({ method: 'DELETE', path: `/v1/subscriptions/${s.stripeSub}` }),
    ]);
    expect(told(sub.id)).toMatchObject({ subscription: { status: 'canceled' } });
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
    stripeApi.toStripe
      .slice(from)
      .filter((r) => r.method === 'DELETE' && r.path === `/v1/subscriptions/${s.stripeSub}`);

  /** A subscription sold, its first invoice paid (subscription_create), then one renewal paid. */
  async function renewedOnce() {
    const s = await sell();
    expect((await deliver(completed(s, 1000))).status).toBe(200);
    const started = await subOf(s);
    const first = `in_first_${s.id.slice(-10)}`;
    const now0 = Math.floor(Date.parse(started.current_period_start) / 1000);
    const end0 = Math.floor(Date.parse(started.current_period_end) / 1000);
    const firstPaid = invoice('invoice.paid', s, first, { start: now0, end: end0 }, 1000, 'subscription_create');
    expect((await deliver(firstPaid)).status).toBe(200);
    const renewal = `in_renewal_${s.id.slice(-10)}`;
    expect((await deliver(invoice('invoice.paid', s, renewal, { start: end0, end: end0 + 30 * DAY_S }))).status).toBe(
      200,
    );
    const sub = await subOf(s);
    expect(sub.status).toBe('active');
    expect(told(sub.id)).toMatchObject({ expires_at: sub.current_period_end });
    return { s, sub, first, renewal };
  }

  it("a renewal's refund and a proration's dispute are recorded on the subscription; the licence stays valid and Stripe keeps billing", async () => {
    const { s, sub, renewal } = await renewedOnce();
    const prorated = `in_proration_${s.id.slice(-10)}`;
    const span = { start: now(), end: Math.floor(Date.parse(sub.current_period_end) / 1000) };
    expect((await deliver(invoice('invoice.paid', s, prorated, span, 450, 'subscription_update'))).status).toBe(200);
    const before = stripeApi.toStripe.length;
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
    const listed = await c.subs.listSubscriptions({
      account_id: account,
      page: { limit: 100, starting_after: '' },
      status: '',
      product_id: monthly,
      customer_email: '',
    });
    expect(listed.data.find((x) => x.id === sub.id)?.refunds).toEqual([]);
    expect(cancelCalls(s, before)).toEqual([]);
    expect(c.licenses.requestsTo('transitionLicense').filter((r) => r.key === sub.license_key)).toEqual([]);
    expect(licenceStatus(sub.license_key)).toBe('active');
    expect(ofSub(c, 'subscription.canceled', sub.id)).toEqual([]);
  });

  it("a refund of the first payment cancels the subscription on Stripe and here, and applies the product's refund_action (revoke)", async () => {
    const { s, sub, first } = await renewedOnce();
    const before = stripeApi.toStripe.length;
    expect((await deliver(takenBack('charge.refunded', `pi_${first}`))).status).toBe(200);
    expect(cancelCalls(s, before)).toHaveLength(1);
    const after = await subOf(s);
    expect(after.status).toBe('canceled');
    expect(after.refunds).toEqual([
      { invoice_id: first, cause: 'refund', amount: 1000, currency: 'EUR', refunded_at: expect.any(String) },
    ]);
    await c.events.waitFor(
      (e) =>
        e.type === 'subscription.canceled' && (e.data as { subscription?: { id: string } }).subscription?.id === sub.id,
    );
    expect(licenceStatus(sub.license_key)).toBe('revoked');
    // Stripe's deletion that follows, and the refund again, change nothing more.
    expect((await deliver(subscriptionEvent('customer.subscription.deleted', s, { status: 'canceled' }))).status).toBe(
      200,
    );
    expect((await deliver(takenBack('charge.refunded', `pi_${first}`))).status).toBe(200);
    expect(ofSub(c, 'subscription.canceled', sub.id)).toHaveLength(1);
    expect(licenceStatus(sub.license_key)).toBe('revoked');
  });

  it('a dispute of the first payment does the same; Stripe unreachable: 503 and nothing changes, the retry ends it', async () => {
    const { s, sub, first } = await renewedOnce();
    stripeApi.down = true;
    try {
      expect((await deliver(takenBack('charge.dispute.created', `pi_${first}`))).status).toBe(503);
    } finally {
      stripeApi.down = false;
    }
    expect(await subOf(s)).toMatchObject({ status: 'active', refunds: [] });
    expect(licenceStatus(sub.license_key)).toBe('active');
    const before = stripeApi.toStripe.length;
    expect((await deliver(takenBack('charge.dispute.created', `pi_${first}`))).status).toBe(200);
    expect(cancelCalls(s, before)).toHaveLength(1);
    expect(await subOf(s)).toMatchObject({ status: 'canceled', refunds: [{ invoice_id: first, cause: 'dispute' }] });
    expect(licenceStatus(sub.license_key)).toBe('revoked');
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
    const before = stripeApi.toStripe.length;
    const period = {
      start: Math.floor(Date.parse(sub.current_period_start) / 1000),
      end: Math.floor(Date.parse(sub.current_period_end) / 1000),
    };
    expect((await deliver(invoice('invoice.paid', s, first, period, 1000, 'subscription_create'))).status).toBe(200);
    expect(
      stripeApi.toStripe
        .slice(before)
        .filter((r) => r.method === 'DELETE' && r.path === `/v1/subscriptions/${s.stripeSub}`),
    ).toHaveLength(1);
    expect(await subOf(s)).toMatchObject({ status: 'canceled', refunds: [{ invoice_id: first, cause: 'refund' }] });
    expect(licenceStatus(sub.license_key)).toBe('revoked');
  });
});
