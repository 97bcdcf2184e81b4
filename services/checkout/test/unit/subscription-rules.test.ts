import { AppError } from '@licensing/runtime';
import {
  DEFAULT_POLICY,
  judge,
  nextStatusChange,
  parseLicenseKey,
  generateLicenseKey,
  validUntil,
  type LicenseFacts,
  type Product,
} from '@licensing/proto';
import {
  addInterval,
  cardPaymentsWhenGiven,
  checkAdvanceTo,
  checkQuantity,
  ended,
  failed,
  graceUntil,
  nextStep,
  paid,
  planOf,
  portalReturnUrl,
  refundEffect,
  testCardOf,
  testChargePays,
  type SubscriptionState,
} from '../../src/domain/subscription';
import { seatsPolicy, subscriptionStep } from '../../../license/src/domain/subscription';
import { interpretSubscriptionEvent, periodChargeMismatch } from '../../src/domain/stripe-subscription-events';
import { interpretStripeEvent, mismatch, stripeCustomerId } from '../../src/domain/stripe-events';

// The pure rules of subscriptions: periods, test cards, the test clock's steps, and how a
// licence judges and follows its subscription.

const DAY = 86_400_000;
const at = (s: string) => new Date(s);

const state = (over: Partial<SubscriptionState> = {}): SubscriptionState => ({
  status: 'active',
  interval: 'month',
  interval_count: 1,
  current_period_start: at('2026-01-31T10:00:00.000Z'),
  current_period_end: at('2026-02-28T10:00:00.000Z'),
  trial_end: null,
  cancel_at_period_end: false,
  payment_grace_days: 7,
  period_index: 0,
  ...over,
});

describe('periods and test cards', () => {
  it('adds months and years on the same day, or the month’s last', () => {
    expect(addInterval(at('2026-01-31T10:00:00.000Z'), 'month', 1).toISOString()).toBe('2026-02-28T10:00:00.000Z');
    expect(addInterval(at('2026-01-15T00:00:00.000Z'), 'month', 3).toISOString()).toBe('2026-04-15T00:00:00.000Z');
    expect(addInterval(at('2024-02-29T00:00:00.000Z'), 'year', 1).toISOString()).toBe('2025-02-28T00:00:00.000Z');
  });

  it('4242 always pays; 0341 pays the first charge only; anything else is no test card', () => {
    expect(testCardOf('4242 4242 4242 4242')).toBe('ok');
    expect(testCardOf('4000-0000-0000-0341')).toBe('fails_after_first');
    expect(testCardOf('4000000000000002')).toBeNull();
    expect([0, 1, 5].map((n) => testChargePays('ok', n))).toEqual([true, true, true]);
    expect([0, 1, 5].map((n) => testChargePays('fails_after_first', n))).toEqual([true, false, false]);
    expect(testChargePays(null, 0)).toBe(false);
  });

  it('0341 pays only a charge made when it is given: given with nothing to charge (a trial), its first charge fails', () => {
    // A checkout's payment, or the billing page's charge of what is due: it paid then, later charges fail.
    expect(testChargePays('fails_after_first', cardPaymentsWhenGiven('fails_after_first', true))).toBe(false);
    // A trial's checkout (or a new card for a subscription paid up): nothing charged, and its first charge fails.
    expect(testChargePays('fails_after_first', cardPaymentsWhenGiven('fails_after_first', false))).toBe(false);
    // 4242 pays whatever.
    expect(cardPaymentsWhenGiven('ok', false)).toBe(0);
    expect(testChargePays('ok', cardPaymentsWhenGiven('ok', false))).toBe(true);
  });

  it("a plan change records the new product's price × seats, currency, interval and payment grace; no recurring price is a reason to refuse", () => {
    const product = {
      price: { amount: 3000, currency: 'USD', interval: 'year', interval_count: 0, trial_days: 0 },
      policy: { payment_grace_days: 3 } as Product['policy'],
    };
    expect(planOf(product, 3)).toEqual({
      amount: 9000,
      currency: 'USD',
      interval: 'year',
      interval_count: 1,
      payment_grace_days: 3,
    });
    expect(planOf({ ...product, price: { ...product.price, interval_count: 2 } }, 1)).toMatchObject({
      amount: 3000,
      interval_count: 2,
    });
    expect(planOf({ ...product, price: { amount: 100, currency: 'EUR' } }, 1)).toMatch(/recurring price/);
    expect(planOf({ ...product, price: undefined }, 1)).toMatch(/recurring price/);
  });

  it('checks quantity: 1..1000, recurring prices only', () => {
    expect(checkQuantity(undefined, false)).toBe(1);
    expect(checkQuantity(0, true)).toBe(1);
    expect(checkQuantity(1000, true)).toBe(1000);
    for (const [q, recurring] of [
      [2, false],
      [1001, true],
      [-1, true],
      [1.5, true],
    ] as const)
      expect(() => checkQuantity(q, recurring)).toThrow(AppError);
  });

  it('checks advance_to: after the clock, at most 5 years ahead, a time', () => {
    const clock = at('2026-01-01T00:00:00.000Z');
    expect(checkAdvanceTo('2030-12-31T00:00:00Z', clock).toISOString()).toBe('2030-12-31T00:00:00.000Z');
    for (const bad of ['2025-12-31T00:00:00Z', '2026-01-01T00:00:00Z', '2031-01-01T00:00:01Z', 'soon', '2026'])
      expect(() => checkAdvanceTo(bad, clock)).toThrow(/advance_to/);
  });
});

describe('the test clock’s steps', () => {
  it('nothing before the period end; a bill at it; the end instead when cancelling at period end', () => {
    const s = state();
    expect(nextStep(s, at('2026-02-28T09:59:59.000Z'))).toBeNull();
    expect(nextStep(s, at('2026-03-10T00:00:00.000Z'))).toEqual({ kind: 'bill', at: s.current_period_end, period: 1 });
    expect(nextStep({ ...s, cancel_at_period_end: true }, at('2026-03-10T00:00:00.000Z'))).toEqual({
      kind: 'end',
      at: s.current_period_end,
    });
  });

  it('past due becomes unpaid after the payment grace; canceled and unpaid wait', () => {
    const s = state({ status: 'past_due' });
    expect(graceUntil(s).getTime() - s.current_period_end.getTime()).toBe(7 * DAY);
    expect(nextStep(s, at('2026-03-07T09:59:59.999Z'))).toBeNull();
    expect(nextStep(s, at('2026-03-07T10:00:00.000Z'))).toEqual({ kind: 'unpaid', at: graceUntil(s) });
    expect(nextStep(state({ status: 'unpaid' }), at('2030-01-01T00:00:00.000Z'))).toBeNull();
    expect(nextStep(state({ status: 'canceled' }), at('2030-01-01T00:00:00.000Z'))).toBeNull();
  });

  it('a paid period starts the next; a failed one is past due, or ends a trial', () => {
    const s = state();
    expect(paid(s, s.current_period_end, 1)).toMatchObject({
      changes: {
        status: 'active',
        current_period_start: s.current_period_end,
        current_period_end: at('2026-03-28T10:00:00.000Z'),
        period_index: 1,
        trial_end: null,
      },
      event: 'subscription.renewed',
      change: 'renewed',
    });
    expect(failed(s, s.current_period_end)).toMatchObject({
      changes: { status: 'past_due' },
      event: 'subscription.past_due',
    });
    expect(failed(state({ status: 'trialing' }), s.current_period_end)).toMatchObject({
      changes: { status: 'canceled', ended_early: true },
      event: 'subscription.canceled',
    });
    expect(ended(s.current_period_end).changes).toMatchObject({ status: 'canceled', ended_early: false });
  });
});

describe('a subscription licence', () => {
  const key = generateLicenseKey();
  const facts = (over: Partial<LicenseFacts> = {}): LicenseFacts => ({
    account_id: 'acct_A',
    product_id: 'prod_A',
    status: 'active',
    expires_at: at('2026-02-28T10:00:00.000Z'),
    policy: { ...DEFAULT_POLICY },
    ...over,
  });
  const ask = (l: LicenseFacts, now: string) =>
    judge(
      parseLicenseKey(key),
      l,
      { accountId: 'acct_A', productId: '', fingerprint: '' },
      { fingerprintActive: false, count: 0 },
      at(now),
    );
  const sub = (status: 'active' | 'past_due' | 'unpaid' | 'trialing', grace: string | null = null) => ({
    id: 'sub_01M8EFW9798MVEWAK836197KQ4',
    status,
    trial_end: null,
    paid_through: at('2026-02-28T10:00:00.000Z'),
    grace_until: grace ? at(grace) : null,
  });

  it('past due: valid with update_payment until grace_until, as expired_in_grace after the period end; then expired', () => {
    const l = facts({ subscription: sub('past_due', '2026-03-07T10:00:00.000Z') });
    expect(ask(l, '2026-02-20T00:00:00.000Z')).toMatchObject({
      valid: true,
      code: 'valid',
      nextAction: 'update_payment',
    });
    const after = ask(l, '2026-03-07T00:00:00.000Z');
    expect(after).toMatchObject({ valid: true, code: 'expired_in_grace', nextAction: 'update_payment' });
    expect(after.cacheUntil.toISOString()).toBe('2026-03-07T10:00:00.000Z');
    expect(ask(l, '2026-03-08T00:00:00.000Z')).toMatchObject({ valid: false, code: 'expired' });
  });

  it('canceled early (now, or a trial ended unpaid): expired at its expiry with no grace days; at its period end: the policy’s grace days', () => {
    const policy = { ...DEFAULT_POLICY, grace_days: 5 };
    const canceled = (ended_early: boolean) => ({ ...sub('active'), status: 'canceled' as const, ended_early });
    const early = facts({ policy, subscription: canceled(true) });
    expect(ask(early, '2026-02-28T09:59:59.000Z')).toMatchObject({ valid: true, code: 'valid' });
    expect(ask(early, '2026-02-28T10:00:00.000Z')).toMatchObject({
      valid: false,
      code: 'expired',
      nextAction: 'renew',
    });
    expect(nextStatusChange(early, at('2026-02-28T10:00:00.000Z'))).toBe(Number.POSITIVE_INFINITY);
    const atPeriodEnd = facts({ policy, subscription: canceled(false) });
    expect(ask(atPeriodEnd, '2026-03-01T00:00:00.000Z')).toMatchObject({
      valid: true,
      code: 'expired_in_grace',
      nextAction: 'renew',
    });
    expect(ask(atPeriodEnd, '2026-03-05T10:00:00.000Z')).toMatchObject({ valid: false, code: 'expired' });
    // Only a canceled subscription ends early (a stale flag on another status changes nothing).
    const active = facts({ policy, subscription: { ...sub('active'), ended_early: true } });
    expect(ask(active, '2026-03-01T00:00:00.000Z')).toMatchObject({ code: 'expired_in_grace' });
    expect(validUntil(early)?.toISOString()).toBe('2026-02-28T10:00:00.000Z');
  });

  it('unpaid (suspended): subscription_unpaid with update_payment; a vendor’s own suspension stays suspended', () => {
    expect(ask(facts({ status: 'suspended', subscription: sub('unpaid') }), '2026-02-20T00:00:00.000Z')).toMatchObject({
      valid: false,
      code: 'subscription_unpaid',
      nextAction: 'update_payment',
    });
    expect(ask(facts({ status: 'suspended', subscription: sub('active') }), '2026-02-20T00:00:00.000Z')).toMatchObject({
      code: 'suspended',
      nextAction: 'contact_vendor',
    });
  });

  it('active or trialing: valid, none', () => {
    expect(ask(facts({ subscription: sub('trialing') }), '2026-02-20T00:00:00.000Z')).toMatchObject({
      valid: true,
      code: 'valid',
      nextAction: 'none',
    });
  });

  it('follows its subscription: unpaid suspends, a payment reinstates and renews, seats multiply', () => {
    const policy = { ...DEFAULT_POLICY, max_activations: 2 };
    const state = {
      subscription: { ...sub('unpaid'), seq: 3, quantity: 1 },
      expires_at: at('2026-02-28T10:00:00.000Z'),
      policy,
    };
    const before = { status: 'active' as const, expires_at: state.expires_at, policy };
    expect(subscriptionStep(before, state, 'unpaid')).toMatchObject({
      status: 'suspended',
      events: ['license.suspended'],
    });
    const suspended = { ...before, status: 'suspended' as const, subscription: state.subscription };
    const renewed = {
      subscription: { ...sub('active'), seq: 4, quantity: 1 },
      expires_at: at('2026-03-28T10:00:00.000Z'),
      policy,
    };
    expect(subscriptionStep(suspended, renewed, 'renewed')).toMatchObject({
      status: 'active',
      events: ['license.reinstated', 'license.renewed'],
    });
    const revoked = { ...before, status: 'revoked' as const };
    expect(subscriptionStep(revoked, renewed, 'renewed').status).toBe('revoked');
    expect(seatsPolicy(policy, 3).max_activations).toBe(6);
    expect(seatsPolicy({ ...policy, max_activations: null }, 3).max_activations).toBeNull();
  });
});

describe("a refund or dispute of a subscription's invoice", () => {
  const at = new Date('2026-05-01T00:00:00Z');

  it("a renewal's or a proration's is only recorded: the licence and the subscription stay as they are, whatever its status", () => {
    for (const status of ['trialing', 'active', 'past_due', 'unpaid', 'canceled'] as const)
      for (const invoice of [{}, { first: false }])
        expect(refundEffect(invoice, { status }, at)).toEqual({ takesBackPurchase: false, step: null });
  });

  it("the first payment's takes back the purchase: Stripe stops billing, refund_action, canceled now without grace days", () => {
    for (const status of ['active', 'past_due', 'unpaid'] as const)
      expect(refundEffect({ first: true }, { status }, at)).toEqual({
        takesBackPurchase: true,
        step: {
          changes: { status: 'canceled', canceled_at: at, ended: true, ended_early: true },
          event: 'subscription.canceled',
          change: 'canceled',
        },
      });
    // Canceled already (by the vendor, or Stripe's deletion came first): the licence still gets the
    // refund_action, and nothing more changes on the subscription.
    expect(refundEffect({ first: true }, { status: 'canceled' }, at)).toEqual({ takesBackPurchase: true, step: null });
  });
});

describe('what a Stripe subscription event means', () => {
  const ev = (type: string, object: Record<string, unknown>) => ({
    id: 'evt_1',
    type,
    livemode: false,
    created: 100,
    data: { object },
  });

  it('invoice.paid and invoice.payment_failed name the subscription, the invoice, its period and amount', () => {
    const object = {
      id: 'in_1',
      subscription: 'sub_stripe_1',
      subscription_details: { metadata: { checkout_session_id: 'cs_01M82BCFGS21FWB5Z5A498AR3N' } },
      billing_reason: 'subscription_cycle',
      payment_intent: 'pi_renewal_1',
      amount_paid: 1000,
      amount_due: 1000,
      currency: 'eur',
      lines: { data: [{ period: { start: 1_800_000_000, end: 1_802_678_400 } }] },
    };
    expect(interpretSubscriptionEvent(ev('invoice.paid', object))).toEqual({
      kind: 'invoice',
      paid: true,
      providerSubscriptionId: 'sub_stripe_1',
      sessionId: 'cs_01M82BCFGS21FWB5Z5A498AR3N',
      invoiceId: 'in_1',
      paymentId: 'pi_renewal_1',
      first: false,
      offCycle: false,
      periodStart: new Date(1_800_000_000_000),
      periodEnd: new Date(1_802_678_400_000),
      amount: 1000,
      periodCharge: null,
      currency: 'EUR',
      livemode: false,
      created: 100,
      customerId: '',
    });
    expect(
      interpretSubscriptionEvent(ev('invoice.payment_failed', { ...object, billing_reason: 'subscription_create' })),
    ).toMatchObject({ paid: false, first: true, amount: 1000 });
    // A proration (a plan or seat change), a manual or threshold invoice is no period's charge.
    for (const reason of ['subscription_update', 'manual', 'subscription_threshold'])
      expect(interpretSubscriptionEvent(ev('invoice.paid', { ...object, billing_reason: reason }))).toMatchObject({
        first: false,
        offCycle: true,
      });
    for (const reason of ['subscription_cycle', 'subscription_create', undefined])
      expect(interpretSubscriptionEvent(ev('invoice.paid', { ...object, billing_reason: reason }))).toMatchObject({
        offCycle: false,
      });
  });

  describe("a period's invoice is judged by its subscription lines, not by what was paid", () => {
    const period = { start: 1_800_000_000, end: 1_802_678_400 };
    const seats = (quantity: number, unit = 1000, over: Record<string, unknown> = {}) => ({
      type: 'subscription',
      proration: false,
      quantity,
      price: { unit_amount: unit },
      amount: unit * quantity,
      period,
      ...over,
    });
    const cycle = (lines: Record<string, unknown>[], amountPaid: number) =>
      interpretSubscriptionEvent(
        ev('invoice.paid', {
          id: 'in_cycle',
          subscription: 'sub_stripe_1',
          billing_reason: 'subscription_cycle',
          amount_paid: amountPaid,
          amount_due: amountPaid,
          currency: 'eur',
          lines: { data: lines },
        }),
      ) as Extract<ReturnType<typeof interpretSubscriptionEvent>, { kind: 'invoice' }>;

    it('after a seat change with prorations: price × quantity of the period line, the amount paid kept as paid', () => {
      // 3 seats at 10.00; the change from 2 seats mid-period added a credit and a charge (prorations).
      const a = cycle(
        [
          seats(2, 1000, { proration: true, amount: -500, period: { start: 1_799_000_000, end: 1_800_000_000 } }),
          seats(3, 1000, { proration: true, amount: 750, period: { start: 1_799_000_000, end: 1_800_000_000 } }),
          seats(3),
        ],
        3250,
      );
      expect(a).toMatchObject({ amount: 3250, periodCharge: 3000 });
      // The period is the period line's, not the first (prorated) line's.
      expect(a.periodStart).toEqual(new Date(period.start * 1000));
      expect(a.periodEnd).toEqual(new Date(period.end * 1000));
      expect(periodChargeMismatch(a, 3000)).toBeNull();
      expect(periodChargeMismatch(a, 2000)).toMatch(/subscription lines/);
    });

    it('a coupon or a credit balance: less is paid, the period line is the price', () => {
      expect(periodChargeMismatch(cycle([seats(1)], 800), 1000)).toBeNull();
      expect(periodChargeMismatch(cycle([seats(1)], 0), 1000)).toBeNull();
    });

    it("newer API versions: the line's parent says subscription and proration, pricing the unit amount", () => {
      const line = (quantity: number, proration: boolean) => ({
        parent: { type: 'subscription_item_details', subscription_item_details: { proration } },
        pricing: { unit_amount_decimal: '1500' },
        quantity,
        period,
      });
      const a = cycle([line(1, true), line(2, false)], 3100);
      expect(a.periodCharge).toBe(3000);
      expect(periodChargeMismatch(a, 3000)).toBeNull();
    });

    it('an invoice item added by hand is no period line; an invoice without priced period lines is judged by its amount', () => {
      const handAdded = { type: 'invoiceitem', quantity: 1, price: { unit_amount: 400 }, period };
      expect(cycle([handAdded, seats(1)], 1400).periodCharge).toBe(1000);
      const bare = cycle([{ period }], 1000);
      expect(bare.periodCharge).toBeNull();
      expect(periodChargeMismatch(bare, 1000)).toBeNull();
      expect(periodChargeMismatch(cycle([{ period }], 1), 1000)).toMatch(/amount paid/);
      // A period line without a price or quantity cannot be judged by lines.
      expect(cycle([seats(1, 1000, { price: {} })], 1000).periodCharge).toBeNull();
      expect(cycle([seats(1, 1000, { quantity: undefined })], 1000).periodCharge).toBeNull();
    });

    it('the first invoice and prorations have amounts of their own', () => {
      const first = { ...cycle([seats(1)], 5), first: true };
      expect(periodChargeMismatch(first, 1000)).toBeNull();
      expect(periodChargeMismatch({ ...cycle([seats(1)], 5), offCycle: true }, 1000)).toBeNull();
    });
  });

  it('customer.subscription.* carry status, cancellation, seats and the plan’s product; other events are not theirs', () => {
    const object = {
      id: 'sub_stripe_1',
      status: 'active',
      cancel_at_period_end: true,
      metadata: { checkout_session_id: 'cs_01M82BCFGS21FWB5Z5A498AR3N', product_id: 'prod_A' },
      items: { data: [{ quantity: 3, price: { metadata: { product_id: 'prod_B' } } }] },
    };
    expect(interpretSubscriptionEvent(ev('customer.subscription.updated', object))).toMatchObject({
      kind: 'subscription',
      deleted: false,
      cancelAtPeriodEnd: true,
      productId: 'prod_B',
      quantity: 3,
    });
    expect(interpretSubscriptionEvent(ev('customer.subscription.deleted', object))).toMatchObject({ deleted: true });
    expect(interpretSubscriptionEvent(ev('charge.refunded', {}))).toBeNull();
  });

  it("names the subscription's Stripe customer (a string or an expanded object); anything not a cus_ id is none", () => {
    const object = { id: 'sub_stripe_1', status: 'active', metadata: {} };
    expect(
      interpretSubscriptionEvent(ev('customer.subscription.updated', { ...object, customer: 'cus_Abc123' })),
    ).toMatchObject({
      customerId: 'cus_Abc123',
    });
    expect(
      interpretSubscriptionEvent(
        ev('customer.subscription.created', { ...object, customer: { id: 'cus_X9', object: 'customer' } }),
      ),
    ).toMatchObject({ customerId: 'cus_X9' });
    expect(interpretSubscriptionEvent(ev('invoice.paid', { id: 'in_1', customer: 'cus_Inv1' }))).toMatchObject({
      customerId: 'cus_Inv1',
    });
    for (const bad of [undefined, '', 'cus_', 'acct_1', 'cus_a b', 'cus_../x', `cus_${'a'.repeat(251)}`, 42, { id: 7 }])
      expect(stripeCustomerId(bad)).toBe('');
    // checkout.session.completed: the customer only in subscription mode.
    const session = {
      id: 'cs_test_1',
      metadata: { checkout_session_id: 'cs_01M82BCFGS21FWB5Z5A498AR3N' },
      payment_status: 'paid',
      customer: 'cus_Buyer1',
      subscription: 'sub_stripe_1',
    };
    expect(interpretStripeEvent(ev('checkout.session.completed', { ...session, mode: 'subscription' }))).toMatchObject({
      kind: 'paid',
      providerSubscriptionId: 'sub_stripe_1',
      customerId: 'cus_Buyer1',
    });
    expect(interpretStripeEvent(ev('checkout.session.completed', { ...session, mode: 'payment' }))).toMatchObject({
      kind: 'paid',
      customerId: '',
    });
  });

  it("Stripe's billing portal returns to the vendor's success_url of the checkout, else to our checkout page", () => {
    const base = 'https://pay.example.com';
    const id = 'cs_01M82BCFGS21FWB5Z5A498AR3N';
    expect(portalReturnUrl('https://vendor.example/thanks?x=1', base, id)).toBe('https://vendor.example/thanks?x=1');
    for (const none of [undefined, null, '', 'not a url', 'javascript:alert(1)'])
      expect(portalReturnUrl(none, base, id)).toBe(`${base}/checkout/${id}`);
  });

  it('a trial checkout takes no money: amount 0 is not a mismatch for it, and is for any other', () => {
    const s = { provider: 'stripe', provider_session_id: 'cs_test_1', livemode: false, amount: 1000, currency: 'EUR' };
    const a = { providerSessionId: 'cs_test_1', livemode: false, amount: 0, currency: 'EUR' };
    expect(mismatch({ ...s, recurring: { trial_days: 14 } }, a)).toBeNull();
    expect(mismatch(s, a)).toMatch(/amount/);
  });
});
