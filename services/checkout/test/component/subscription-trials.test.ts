import { type AppError, newId } from '@licensing/runtime';
import { startCheckout, type RunningCheckout } from './running-checkout';

// Subscriptions in test mode, in the checkout service alone, continued: cancellation against a policy
// with grace days (what the licence is told: ended early or at its period end), a trial (converted, or
// ended unpaid with the 0341 card), the test clock of a live subscription, and the bad inputs. Each
// step's ApplySubscription is what the faked licence service receives; how the licence then validates:
// services/license/test/component/subscription-renewals.test.ts.

const DAY = 86_400_000;
const account = newId('acct');
let c: RunningCheckout;
let monthly: string;
let graced: string;

beforeAll(async () => {
  c = await startCheckout();
  monthly = c.product(account, { amount: 1000, currency: 'EUR', interval: 'month' }, { payment_grace_days: 7 }).id;
  // (grace days are for licences that expire: a subscription's expires at each period end)
  graced = c.product(
    account,
    { amount: 1000, currency: 'EUR', interval: 'month' },
    { duration_days: 30, grace_days: 5, payment_grace_days: 7 },
  ).id;
});

afterAll(async () => {
  await c?.stop();
});

const sub = (id: string) => c.subs.getSubscription({ account_id: account, id });
const advance = (id: string, to: Date | string, accountId = account) =>
  c.subs.advanceTestClock({ account_id: accountId, id, advance_to: typeof to === 'string' ? to : to.toISOString() });
const cancel = (id: string, at_period_end: boolean) =>
  c.subs.cancelSubscription({ account_id: account, id, at_period_end });
const lastApplied = (subscriptionId: string) => c.applied(subscriptionId).at(-1);
const failure = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as AppError,
  );

describe('cancellation and the policy’s grace days', () => {
  it('cancelled now, the licence is expired at once though its policy has grace days (cached and uncached, GET and POST)', async () => {
    const bought = await c.buy(account, graced, '4242 4242 4242 4242');
    expect((await cancel(bought.subscription_id!, false)).status).toBe('canceled');
    expect(lastApplied(bought.subscription_id!)).toMatchObject({
      subscription: { status: 'canceled', ended_early: true },
    });
  });

  it('cancelled now after asking for the period end: still at once', async () => {
    const bought = await c.buy(account, graced, '4242 4242 4242 4242');
    await cancel(bought.subscription_id!, true);
    expect((await cancel(bought.subscription_id!, false)).status).toBe('canceled');
    expect(lastApplied(bought.subscription_id!)).toMatchObject({
      subscription: { status: 'canceled', ended_early: true },
    });
  });

  it('cancelled at the period end, past it: expired_in_grace (valid, renew) for the policy’s grace days', async () => {
    const bought = await c.buy(account, graced, '4242 4242 4242 4242');
    const res = await cancel(bought.subscription_id!, true);
    const moved = await advance(bought.subscription_id!, new Date(Date.parse(res.current_period_end) + DAY));
    expect(moved.status).toBe('canceled');
    const told = lastApplied(bought.subscription_id!)!;
    expect(told).toMatchObject({ subscription: { status: 'canceled', ended_early: false } });
    // Until the expiry (the moment it ended) plus the grace days: the licence service's answer.
    expect(Date.parse(told.expires_at)).toBeLessThanOrEqual(Date.now());
  });
});

describe('a trial', () => {
  it('gives a valid licence at once with trial_end in the answer; the first payment converts it', async () => {
    const product = c.product(account, { amount: 9900, currency: 'USD', interval: 'year', trial_days: 14 }).id;
    const t = await c.buy(account, product, '4242 4242 4242 4242');
    const s = await sub(t.subscription_id!);
    expect(s.status).toBe('trialing');
    expect(Date.parse(s.trial_end) - Date.parse(s.created_at)).toBe(14 * DAY);
    expect(s.invoices).toEqual([expect.objectContaining({ status: 'paid', amount: 0 })]);
    expect(lastApplied(s.id)).toMatchObject({ expires_at: s.trial_end, subscription: { trial_end: s.trial_end } });
    const res = await advance(s.id, new Date(Date.parse(s.trial_end) + DAY));
    expect(res).toMatchObject({ status: 'active', trial_end: '', current_period_start: s.trial_end });
    expect(lastApplied(s.id)).toMatchObject({ subscription: { status: 'active', trial_end: '' } });
  });
});

describe('a trial bought with 4000 0000 0000 0341', () => {
  it('charges nothing at checkout, so the first charge, at the trial’s end, fails: the trial ends unpaid and the licence expires at once', async () => {
    const product = c.product(
      account,
      { amount: 500, currency: 'EUR', interval: 'month', trial_days: 7 },
      { duration_days: 30, grace_days: 5 },
    ).id;
    const t = await c.buy(account, product, '4000 0000 0000 0341');
    const s = await sub(t.subscription_id!);
    expect(s.status).toBe('trialing');
    expect(s.invoices).toEqual([expect.objectContaining({ status: 'paid', amount: 0 })]);
    const res = await advance(s.id, new Date(Date.parse(s.trial_end) + DAY));
    expect(res).toMatchObject({ status: 'canceled' });
    const after = await sub(s.id);
    expect(after.invoices.map((i) => [i.status, i.amount])).toEqual([
      ['failed', 500],
      ['paid', 0],
    ]);
    await c.events.waitFor(
      (e) =>
        e.type === 'subscription.canceled' && (e.data as { subscription?: { id: string } }).subscription?.id === s.id,
    );
    expect(
      c.events
        .all()
        .filter(
          (e) =>
            e.type === 'subscription.past_due' &&
            (e.data as { subscription?: { id: string } }).subscription?.id === s.id,
        ),
    ).toEqual([]);
    // The trial ended unpaid: no grace days.
    expect(lastApplied(s.id)).toMatchObject({ subscription: { status: 'canceled', ended_early: true } });
  });
});

describe('the test clock of a live subscription', () => {
  it('is refused with 409, nothing moved or billed', async () => {
    const s = await c.buy(account, monthly, '4242 4242 4242 4242');
    const db = await c.db();
    // As a live one would be stored: a live Stripe subscription has no test clock. (Test mode makes none;
    // a service switched from Stripe to test mode still holds them.)
    for (const live of [
      { livemode: true, provider: 'stripe', test_clock: null },
      { livemode: true, test_clock: new Date() },
    ]) {
      await db.collection('subscriptions').updateOne({ _id: s.subscription_id as never }, { $set: live });
      const before = await sub(s.subscription_id!);
      const refused = await failure(advance(s.subscription_id!, new Date(Date.parse(before.current_period_end) + DAY)));
      expect({ live, code: refused?.code, message: refused?.message }).toEqual({
        live,
        code: 'conflict',
        message: expect.stringMatching(/live/),
      });
      expect(await sub(s.subscription_id!)).toEqual(before);
    }
  });
});

describe('bad input: a clear 4xx, nothing written', () => {
  it('refuses a quantity out of range, or on a one-time price', async () => {
    const oneTime = c.product(account, { amount: 100, currency: 'EUR' }).id;
    const count = async () =>
      (await c.api.listSessions({ account_id: account, status: '', page: { limit: 100, starting_after: '' } })).data
        .length;
    const before = await count();
    for (const [product, quantity] of [
      [monthly, 1001],
      [monthly, -1],
      [oneTime, 2],
    ] as const) {
      const refused = await failure(c.api.createSession(c.sessionRequest(account, product, { quantity })));
      expect({ quantity, code: refused?.code }).toEqual({ quantity, code: 'invalid_request' });
    }
    expect(await count()).toBe(before);
  });

  it('refuses advance_to in the past, more than 5 years ahead, or not a time; other accounts see nothing', async () => {
    const s = await c.buy(account, monthly, '4242 4242 4242 4242');
    const current = await sub(s.subscription_id!);
    const clock = Date.parse(current.test_clock);
    for (const to of [
      new Date(clock - DAY).toISOString(),
      new Date(clock).toISOString(),
      new Date(clock + 5 * 366 * DAY).toISOString(),
      'tomorrow',
      '',
    ]) {
      const refused = await failure(advance(s.subscription_id!, to));
      expect({ to, code: refused?.code }).toEqual({ to, code: 'invalid_request' });
    }
    expect(await sub(s.subscription_id!)).toEqual(current); // nothing moved
    const other = newId('acct');
    const id = s.subscription_id!;
    for (const [name, call] of [
      ['get', () => c.subs.getSubscription({ account_id: other, id })],
      ['cancel', () => c.subs.cancelSubscription({ account_id: other, id, at_period_end: false })],
      ['billing portal', () => c.subs.createBillingPortal({ account_id: other, id })],
      ['test clock', () => advance(id, new Date(clock + DAY), other)],
    ] as const) {
      const refused = await failure(call());
      expect({ name, code: refused?.code }).toEqual({ name, code: 'not_found' });
    }
    const theirs = await c.subs.listSubscriptions({
      account_id: other,
      page: { limit: 100, starting_after: '' },
      status: '',
      product_id: '',
      customer_email: '',
    });
    expect(theirs.data).toEqual([]);
    expect((await sub(id)).status).toBe('active');
  });
});
