import { newId } from '@licensing/runtime';
import { startCheckout, type RunningCheckout } from './running-checkout';

// Subscriptions in test mode, in the checkout service alone: a monthly product sold on the hosted page,
// its subscription moved by its test clock (renewal, past due with the failing card, unpaid, a payment
// through the billing portal, cancellation at period end or now), and a year of renewals after the
// licence was rerolled. What the licence is told at each step is the ApplySubscription request the
// faked licence service receives; what the licence then answers to validations is the licence
// service's (services/license/test/component/subscription-renewals.test.ts), the REST face the
// gateway's (gateway/test/component/subscription-routes.test.ts). Every subscription.* event is on the
// stream here; the webhook service delivers any event type it carries (its own component tests).

const DAY = 86_400_000;
const account = newId('acct');
let c: RunningCheckout;
let monthly: string;

beforeAll(async () => {
  c = await startCheckout();
  monthly = c.product(
    account,
    { amount: 1000, currency: 'EUR', interval: 'month' },
    { max_activations: 2, payment_grace_days: 7 },
  ).id;
});

afterAll(async () => {
  await c?.stop();
});

const sub = (id: string) => c.subs.getSubscription({ account_id: account, id });
const advance = (id: string, to: Date) =>
  c.subs.advanceTestClock({ account_id: account, id, advance_to: to.toISOString() });
const cancel = (id: string, at_period_end: boolean) =>
  c.subs.cancelSubscription({ account_id: account, id, at_period_end });
const eventFor = (type: string, subscriptionId: string) =>
  c.events.waitFor(
    (e) => e.type === type && (e.data as { subscription?: { id: string } }).subscription?.id === subscriptionId,
  );
const lastApplied = (subscriptionId: string) => c.applied(subscriptionId).at(-1);
const list = async (over: { status?: string; product_id?: string; customer_email?: string }) =>
  (
    await c.subs.listSubscriptions({
      account_id: account,
      page: { limit: 100, starting_after: '' },
      status: '',
      product_id: '',
      customer_email: '',
      ...over,
    })
  ).data.map((s) => s.id);

describe('a monthly product sold on the hosted page, from purchase to expiry', () => {
  let a: { id: string; subscription_id?: string; license_key: string };
  let b: { id: string; subscription_id?: string; license_key: string };

  it('gives an active subscription with seats and a licence valid to the period end', async () => {
    const session = await c.buy(account, monthly, '4242 4242 4242 4242', { quantity: 3 });
    a = session;
    expect(session.amount).toBe(3000);
    expect(session.quantity).toBe(3);
    expect(session.subscription_id).toMatch(/^sub_[0-9A-Z]{26}$/);
    const s = await sub(session.subscription_id!);
    expect(s).toMatchObject({
      status: 'active',
      product_id: monthly,
      customer_email: 'subscriber@example.com',
      license_key: session.license_key,
      quantity: 3,
      cancel_at_period_end: false,
      trial_end: '',
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
    // The licence is issued for the subscription, and told its expiry, seats and state.
    expect(c.licenses.requestsTo('createLicense').at(-1)).toMatchObject({ subscription_id: s.id });
    expect(lastApplied(s.id)).toMatchObject({
      key: session.license_key,
      expires_at: s.current_period_end,
      product_id: monthly,
      quantity: 3,
      change: 'created',
      subscription: { id: s.id, status: 'active', grace_until: '', trial_end: '' },
    });
    await eventFor('subscription.created', s.id);
    expect(await list({ product_id: monthly, status: 'active' })).toContain(s.id);
    expect((await list({ customer_email: 'SUBSCRIBER@example.com' })).length).toBeGreaterThan(0);
  });

  it('advancing the clock one month renews it, with the licence expiry moved', async () => {
    const before = await sub(a.subscription_id!);
    const res = await advance(a.subscription_id!, new Date(Date.parse(before.current_period_end) + DAY));
    expect(res.status).toBe('active');
    expect(res.current_period_start).toBe(before.current_period_end);
    expect(Date.parse(res.current_period_end)).toBeGreaterThan(Date.parse(before.current_period_end) + 27 * DAY);
    const after = await sub(a.subscription_id!);
    expect(after.invoices.map((i) => i.status)).toEqual(['paid', 'paid']);
    await eventFor('subscription.renewed', a.subscription_id!);
    expect(lastApplied(a.subscription_id!)).toMatchObject({
      key: a.license_key,
      change: 'renewed',
      expires_at: res.current_period_end,
    });
  });

  it('with the failing card it goes past due: the licence is still valid, with next_action update_payment', async () => {
    b = await c.buy(account, monthly, '4000 0000 0000 0341');
    const first = await sub(b.subscription_id!);
    expect(first.status).toBe('active');
    const res = await advance(b.subscription_id!, new Date(Date.parse(first.current_period_end) + DAY));
    expect(res.status).toBe('past_due');
    expect((await sub(b.subscription_id!)).invoices.map((i) => i.status)).toEqual(['failed', 'paid']);
    await eventFor('subscription.past_due', b.subscription_id!);
    const told = lastApplied(b.subscription_id!)!;
    expect(told).toMatchObject({ change: 'past_due', subscription: { status: 'past_due' } });
    expect(Date.parse(told.subscription!.grace_until) - Date.parse(first.current_period_end)).toBe(7 * DAY);
  });

  it('after the grace it is unpaid and the licence is suspended (subscription_unpaid)', async () => {
    const s = await sub(b.subscription_id!);
    const res = await advance(b.subscription_id!, new Date(Date.parse(s.current_period_end) + 8 * DAY));
    expect(res.status).toBe('unpaid');
    expect(lastApplied(b.subscription_id!)).toMatchObject({ change: 'unpaid', subscription: { status: 'unpaid' } });
  });

  it('a payment through the billing portal reinstates and renews it', async () => {
    const portal = await c.subs.createBillingPortal({ account_id: account, id: b.subscription_id! });
    expect(portal.url).toContain(`/checkout/${b.id}/billing/`);
    const token = portal.url.split('/billing/')[1];
    expect(await c.pages.getBilling({ session_id: b.id, token })).toMatchObject({ found: true, status: 'unpaid' });
    const bad = await c.pages.updateBillingCard({ session_id: b.id, token, card: '1234' });
    expect(bad.outcome).toBe('declined'); // the page says 402
    const paid = await c.pages.updateBillingCard({ session_id: b.id, token, card: '4242 4242 4242 4242' });
    expect(paid.outcome).toBe('updated');
    const s = await sub(b.subscription_id!);
    expect(s.status).toBe('active');
    expect(lastApplied(b.subscription_id!)).toMatchObject({
      subscription: { status: 'active', grace_until: '' },
      expires_at: s.current_period_end,
    });
    // A made-up link is not a page.
    expect((await c.pages.getBilling({ session_id: b.id, token: 'x'.repeat(43) })).found).toBe(false);
  });

  it('cancelled at period end, then past it, the licence is expired (next_action renew); cancelling again is 409', async () => {
    const res = await cancel(a.subscription_id!, true);
    expect(res).toMatchObject({ status: 'active', cancel_at_period_end: true });
    await eventFor('subscription.updated', a.subscription_id!);
    expect(lastApplied(a.subscription_id!)).toMatchObject({ subscription: { status: 'active' } });
    const moved = await advance(a.subscription_id!, new Date(Date.parse(res.current_period_end) + DAY));
    expect(moved.status).toBe('canceled');
    await eventFor('subscription.canceled', a.subscription_id!);
    expect(lastApplied(a.subscription_id!)).toMatchObject({
      change: 'canceled',
      subscription: { status: 'canceled', ended_early: false },
    });
    // Every subscription.* event of it is on the stream (what the webhook endpoints are sent).
    const types = new Set(
      c.events
        .all()
        .filter((e) => (e.data as { subscription?: { id: string } }).subscription?.id === a.subscription_id)
        .map((e) => e.type),
    );
    expect([...types].sort()).toEqual([
      'subscription.canceled',
      'subscription.created',
      'subscription.renewed',
      'subscription.updated',
    ]);
    const again = await cancel(a.subscription_id!, false).catch((e: unknown) => e);
    expect(again).toMatchObject({ code: 'conflict' });
    expect((await advance(a.subscription_id!, new Date(Date.now() + 400 * DAY))).status).toBe('canceled');
  });

  it('cancelled now, the licence expires now', async () => {
    const bought = await c.buy(account, monthly, '4242 4242 4242 4242');
    const before = Date.now();
    const res = await cancel(bought.subscription_id!, false);
    expect(res.status).toBe('canceled');
    const told = lastApplied(bought.subscription_id!)!;
    expect(told).toMatchObject({ change: 'canceled', subscription: { status: 'canceled', ended_early: true } });
    expect(Date.parse(told.expires_at)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(told.expires_at)).toBeLessThanOrEqual(Date.now());
  });
});

describe('a year of renewals after a reroll', () => {
  it('the rerolled licence keeps following its subscription (the new key shown from its next change), and the invoices list newest first', async () => {
    const bought = await c.buy(account, monthly, '4242 4242 4242 4242');
    const newKey = c.reroll(bought.license_key);
    expect(newKey).not.toBe(bought.license_key);
    const before = await sub(bought.subscription_id!);
    const yearOn = new Date(Date.parse(before.current_period_end));
    yearOn.setUTCMonth(yearOn.getUTCMonth() + 11);
    const res = await advance(bought.subscription_id!, new Date(yearOn.getTime() + DAY));
    expect(res.status).toBe('active');
    const after = await sub(bought.subscription_id!);
    // Twelve renewals reached the licence (by its old key, then by its new one); the subscription shows that key now.
    expect(after.license_key).toBe(newKey);
    const renewals = c.applied(bought.subscription_id!).filter((r) => r.change === 'renewed');
    expect(renewals.length).toBeGreaterThanOrEqual(1);
    expect(renewals.at(-1)).toMatchObject({ expires_at: after.current_period_end });
    expect(c.issued.find((l) => l.key === newKey)?.expires_at).toBe(after.current_period_end);
    // Thirteen periods: newest first by period (ids ending _9 and _12 do not sort by time).
    const starts = after.invoices.map((i) => Date.parse(i.period_start));
    expect(starts).toHaveLength(13);
    expect(starts).toEqual([...starts].sort((x, y) => y - x));
    expect(after.invoices[0].period_end).toBe(after.current_period_end);
  });
});
