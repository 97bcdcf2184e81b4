import { AppError } from '@licensing/runtime';
import {
  SEATS_MAX,
  TEST_CLOCK_MAX_ADVANCE_YEARS,
  isOneOf,
  priceIntervals,
  withPolicyDefaults,
  type PriceInterval,
  type Product,
  type SubscriptionStatus,
} from '@licensing/proto';

// The life of a subscription, without I/O: periods, the test cards, what the test clock meets on its
// way and what each step changes. use-cases/subscriptions.ts reads, bills (one invoice per period,
// a unique insert) and writes.

export const DAY_MS = 86_400_000;

/**
 * Which test card is on file: 4242… always pays; 4000 0000 0000 0341 pays the charge made when it is
 * given (a checkout's payment, the billing page's charge of what is due), then fails every charge.
 */
export type TestCard = 'ok' | 'fails_after_first';

export function testCardOf(card: string): TestCard | null {
  const digits = card.replace(/[\s-]/g, '');
  if (digits === '4242424242424242') return 'ok';
  if (digits === '4000000000000341') return 'fails_after_first';
  return null;
}

/** Whether a charge with the card on file succeeds, given how many charges it paid before (card_payments). */
export const testChargePays = (card: TestCard | null | undefined, paidBefore: number): boolean =>
  card === 'ok' || (card === 'fails_after_first' && paidBefore === 0);

/**
 * card_payments for a card just given: 1 when it paid a charge then. A card given with nothing to
 * charge (a trial's checkout, a new card for a subscription paid up) counts as 0, except 0341, which
 * on Stripe attaches to the customer and then declines every charge: its one paying charge is the one
 * made when it is given, so given without one, its first charge (a trial's end) fails.
 */
export const cardPaymentsWhenGiven = (card: TestCard | null | undefined, charged: boolean): number =>
  charged || card === 'fails_after_first' ? 1 : 0;

/** A quantity as asked (0 = 1): recurring prices only. */
export function checkQuantity(quantity: number | undefined, recurring: boolean): number {
  if (quantity === undefined || quantity === 0) return 1;
  if (!recurring) throw AppError.invalid('quantity', 'quantity is for recurring prices only (this price is one-time)');
  if (!Number.isInteger(quantity) || quantity < 1 || quantity > SEATS_MAX)
    throw AppError.invalid('quantity', `quantity must be a whole number from 1 to ${SEATS_MAX}`);
  return quantity;
}

/** What a subscription is billed, as a plan (a product's recurring price) says. */
export interface Plan {
  /** Per period, every seat (minor units). */
  amount: number;
  currency: string;
  interval: PriceInterval;
  interval_count: number;
  payment_grace_days: number;
}

/**
 * What a plan change to `product` records (Stripe's customer.subscription.updated naming another
 * product): its price times the seats, its currency and interval, and its policy's payment grace; the
 * later invoices are checked against these. A reason to refuse when the product sells no subscription.
 */
export function planOf(product: Pick<Product, 'price' | 'policy'>, quantity: number): Plan | string {
  const price = product.price;
  if (!price?.interval || !isOneOf(priceIntervals, price.interval))
    return 'a plan change to a product without a recurring price';
  return {
    amount: price.amount * quantity,
    currency: price.currency,
    interval: price.interval,
    interval_count: price.interval_count || 1,
    payment_grace_days: withPolicyDefaults(product.policy).payment_grace_days,
  };
}

/** `from` plus `count` months or years, on the same day of the month (the month's last day when it has fewer). */
export function addInterval(from: Date, interval: PriceInterval, count: number): Date {
  const months = interval === 'year' ? 12 * count : count;
  const d = new Date(from.getTime());
  const day = d.getUTCDate();
  d.setUTCDate(1);
  d.setUTCMonth(d.getUTCMonth() + months);
  const last = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
  d.setUTCDate(Math.min(day, last));
  return d;
}

/** advance_to: a time after the subscription's clock, at most 5 years past it. */
export function checkAdvanceTo(raw: string, clock: Date): Date {
  const t = /^\d{4}-\d{2}-\d{2}T/.test(raw) ? new Date(raw) : new Date(Number.NaN);
  if (Number.isNaN(t.getTime())) throw AppError.invalid('advance_to', 'advance_to must be an RFC 3339 time');
  if (t.getTime() <= clock.getTime())
    throw AppError.invalid('advance_to', `advance_to must be after the subscription's clock (${clock.toISOString()})`);
  const max = new Date(clock.getTime());
  max.setUTCFullYear(max.getUTCFullYear() + TEST_CLOCK_MAX_ADVANCE_YEARS);
  if (t.getTime() > max.getTime())
    throw AppError.invalid(
      'advance_to',
      `advance_to must be at most ${TEST_CLOCK_MAX_ADVANCE_YEARS} years after the subscription's clock`,
    );
  return t;
}

/** What decides a subscription's next step. */
export interface SubscriptionState {
  status: SubscriptionStatus;
  interval: PriceInterval;
  interval_count: number;
  current_period_start: Date;
  current_period_end: Date;
  trial_end: Date | null;
  cancel_at_period_end: boolean;
  payment_grace_days: number;
  /** Periods started: 0 is the first (paid at checkout, or the trial). The next bill is for period `period_index + 1`. */
  period_index: number;
}

/** When a past-due subscription becomes unpaid: its period end plus the payment grace. */
export const graceUntil = (s: Pick<SubscriptionState, 'current_period_end' | 'payment_grace_days'>): Date =>
  new Date(s.current_period_end.getTime() + s.payment_grace_days * DAY_MS);

/** The next thing that happens to a subscription at or before `to` (null: nothing). */
export type Step =
  | { kind: 'bill'; at: Date; period: number }
  | { kind: 'end'; at: Date }
  | { kind: 'unpaid'; at: Date };

export function nextStep(s: SubscriptionState, to: Date): Step | null {
  const t = to.getTime();
  switch (s.status) {
    case 'trialing':
    case 'active': {
      const end = s.current_period_end;
      if (end.getTime() > t) return null;
      if (s.cancel_at_period_end) return { kind: 'end', at: end };
      return { kind: 'bill', at: end, period: s.period_index + 1 };
    }
    case 'past_due': {
      const until = graceUntil(s);
      if (until.getTime() > t) return null;
      return s.cancel_at_period_end ? { kind: 'end', at: until } : { kind: 'unpaid', at: until };
    }
    default:
      return null; // canceled: over; unpaid: waits for a payment (the billing portal)
  }
}

export interface StepResult {
  /** ended_early: canceled before its period end (a trial ended unpaid): the licence gets no grace days. */
  changes: Partial<SubscriptionState> & { canceled_at?: Date; ended?: boolean; ended_early?: boolean };
  event: 'subscription.renewed' | 'subscription.past_due' | 'subscription.canceled' | 'subscription.updated';
  /** What the licence is told (ApplySubscription's change). */
  change: 'renewed' | 'past_due' | 'unpaid' | 'canceled';
}

/** A period paid (a renewal, a trial converted, or a late payment after past_due or unpaid): the next period starts at `from`. */
export function paid(s: SubscriptionState, from: Date, period: number): StepResult {
  return {
    changes: {
      status: 'active',
      current_period_start: from,
      current_period_end: addInterval(from, s.interval, s.interval_count),
      trial_end: null,
      period_index: period,
    },
    event: 'subscription.renewed',
    change: 'renewed',
  };
}

/**
 * A period's payment failed: past due (the licence stays valid for the payment grace); a trial that ends
 * unpaid ends, early: its licence expires without the policy's grace days.
 */
export function failed(s: SubscriptionState, at: Date): StepResult {
  if (s.status === 'trialing')
    return {
      changes: { status: 'canceled', canceled_at: at, ended: true, ended_early: true },
      event: 'subscription.canceled',
      change: 'canceled',
    };
  return { changes: { status: 'past_due' }, event: 'subscription.past_due', change: 'past_due' };
}

/** Ended at its period end (cancel_at_period_end): the licence keeps the policy's grace days. */
export const ended = (at: Date): StepResult => ({
  changes: { status: 'canceled', canceled_at: at, ended: true, ended_early: false },
  event: 'subscription.canceled',
  change: 'canceled',
});

/** What a full refund or a dispute (a chargeback) of one of a subscription's invoices does. */
export interface RefundEffect {
  /**
   * The purchase is taken back (the first payment's, the checkout's): Stripe must stop billing it and the
   * licence gets the product's refund_action. False for a renewal's or a proration's: one period's (or
   * one change's) money, recorded on the subscription, the licence left as it is.
   */
  takesBackPurchase: boolean;
  /** The subscription's step: canceled now, early (no grace days); null when nothing changes. */
  step: StepResult | null;
}

export function refundEffect(
  invoice: { first?: boolean },
  s: Pick<SubscriptionState, 'status'>,
  at: Date,
): RefundEffect {
  if (!invoice.first) return { takesBackPurchase: false, step: null };
  return {
    takesBackPurchase: true,
    step:
      s.status === 'canceled'
        ? null
        : {
            changes: { status: 'canceled', canceled_at: at, ended: true, ended_early: true },
            event: 'subscription.canceled',
            change: 'canceled',
          },
  };
}

export const unpaid = (): StepResult => ({
  changes: { status: 'unpaid' },
  event: 'subscription.updated',
  change: 'unpaid',
});

/** Stripe does not say when a billing portal session's URL expires ("short-lived"): 5 minutes is what we promise. */
export const STRIPE_PORTAL_MS = 300_000;

/**
 * Where Stripe's billing portal sends the customer back: the vendor's success_url of the checkout that
 * started the subscription (as given, without our session id: the customer is not paying a checkout
 * now), else our own checkout page of that session.
 */
export function portalReturnUrl(successUrl: string | null | undefined, baseUrl: string, sessionId: string): string {
  if (successUrl) {
    try {
      const u = new URL(successUrl);
      if (u.protocol === 'https:' || u.protocol === 'http:') return successUrl;
    } catch {
      // not a URL: fall back to ours
    }
  }
  return `${baseUrl}/checkout/${encodeURIComponent(sessionId)}`;
}
