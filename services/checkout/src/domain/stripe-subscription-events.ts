// What a verified Stripe event means for a subscription: pure, unit tested. The subscription is named
// by Stripe's id and, through the metadata our Checkout Session gave it, by our checkout session.
import { LINK_KEY, stripeCustomerId, type StripeEventLike } from './stripe-events';

export type StripeSubscriptionAction =
  | {
      kind: 'invoice';
      paid: boolean;
      providerSubscriptionId: string;
      sessionId: string;
      invoiceId: string;
      /** The payment (PaymentIntent) that paid it: a refund or dispute of it names it. */
      paymentId: string;
      /** subscription_create: the first payment (the checkout's); anything else renews. */
      first: boolean;
      /**
       * Not a period's charge: a proration of a plan or seat change (subscription_update), a manual
       * invoice or a usage threshold. It moves no period and is not the subscription's price.
       */
      offCycle: boolean;
      periodStart: Date | null;
      periodEnd: Date | null;
      /** What Stripe took (invoice.paid's amount_paid) or asks (invoice.payment_failed's amount_due). */
      amount: number | null;
      /**
       * The subscription's own charge for the period: price × quantity of its subscription lines that are
       * not prorations (what a plan or seat change, a credit or a coupon leave as they are); null when the
       * invoice lists no such line with a price.
       */
      periodCharge: number | null;
      currency: string | null;
      livemode: boolean;
      created: number;
      /** Stripe's customer (cus_…) who pays the subscription; '' when not said. */
      customerId: string;
    }
  | {
      kind: 'subscription';
      deleted: boolean;
      providerSubscriptionId: string;
      sessionId: string;
      status: string;
      cancelAtPeriodEnd: boolean;
      /** Our product the subscription is for now (a plan change names another); '' when not said. */
      productId: string;
      quantity: number | null;
      trialEnd: Date | null;
      livemode: boolean;
      created: number;
      /** Stripe's customer (cus_…) who pays the subscription; '' when not said. */
      customerId: string;
    };

/** Stripe's billing_reason of invoices that are not a period's charge (a period's: subscription_create, subscription_cycle). */
const OFF_CYCLE = new Set(['subscription_update', 'manual', 'subscription_threshold', 'quote_accept']);

const text = (v: unknown) => (typeof v === 'string' ? v : '');
const idOf = (v: unknown) =>
  typeof v === 'string' ? v : v && typeof v === 'object' ? text((v as { id?: unknown }).id) : '';
const obj = (v: unknown) => (v && typeof v === 'object' ? (v as Record<string, unknown>) : {});
const seconds = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? new Date(v * 1000) : null);
const lines = (o: Record<string, unknown>) => {
  const data = obj(o.lines).data;
  return Array.isArray(data) ? data.map(obj) : [];
};
const count = (v: unknown) => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : null);

/** A proration: a line of a plan or seat change (older API versions: `proration`; newer: under `parent`). */
const isProration = (line: Record<string, unknown>) =>
  line.proration === true || obj(obj(line.parent).subscription_item_details).proration === true;

/** A line of the subscription's items (not an invoice item added by hand). */
const isSubscriptionLine = (line: Record<string, unknown>) =>
  line.type === 'subscription' || obj(line.parent).type === 'subscription_item_details';

/** A line's unit price (minor units): `price.unit_amount`, or (newer API versions) `pricing.unit_amount_decimal`. */
function unitAmount(line: Record<string, unknown>): number | null {
  const fromPrice = count(obj(line.price).unit_amount);
  if (fromPrice !== null) return fromPrice;
  const decimal = obj(line.pricing).unit_amount_decimal;
  const n = typeof decimal === 'string' && /^\d{1,15}(\.\d+)?$/.test(decimal) ? Number(decimal) : Number.NaN;
  return Number.isSafeInteger(n) ? n : null;
}

/** The lines that bill the period: the subscription's, without prorations. */
export const periodLines = (o: Record<string, unknown>) =>
  lines(o).filter((line) => isSubscriptionLine(line) && !isProration(line));

/**
 * The subscription's own charge on an invoice: the sum of price × quantity over its period lines, or
 * null when it lists none, or one without a price and quantity (then the amount is judged instead).
 * Discounts, credits and prorations are other lines or fields: they change what is paid, not this.
 */
export function periodCharge(o: Record<string, unknown>): number | null {
  const billed = periodLines(o);
  if (!billed.length) return null;
  let sum = 0;
  for (const line of billed) {
    const unit = unitAmount(line);
    const quantity = count(line.quantity);
    if (unit === null || quantity === null) return null;
    sum += unit * quantity;
  }
  return Number.isSafeInteger(sum) ? sum : null;
}
const firstItem = (o: Record<string, unknown>) => obj((obj(o.items).data as unknown[] | undefined)?.[0]);

/** The subscription events this service uses; null for any other event (the one-time rules apply). */
export function interpretSubscriptionEvent(e: StripeEventLike): StripeSubscriptionAction | null {
  const o = e.data?.object ?? {};
  const created = typeof e.created === 'number' ? e.created : 0;
  switch (e.type) {
    case 'invoice.paid':
    case 'invoice.payment_failed': {
      const providerSubscriptionId = idOf(o.subscription) || idOf(obj(obj(o.parent).subscription_details).subscription);
      const meta = obj(obj(o.subscription_details).metadata);
      // The period is the period line's (a proration line spans only the rest of a period).
      const line = periodLines(o)[0] ?? lines(o)[0] ?? {};
      const period = obj(line.period);
      return {
        kind: 'invoice',
        paid: e.type === 'invoice.paid',
        providerSubscriptionId,
        sessionId: text(meta[LINK_KEY]) || text(obj(line.metadata)[LINK_KEY]),
        invoiceId: text(o.id),
        paymentId: idOf(o.payment_intent),
        first: o.billing_reason === 'subscription_create',
        offCycle: typeof o.billing_reason === 'string' && OFF_CYCLE.has(o.billing_reason),
        periodStart: seconds(period.start) ?? seconds(o.period_start),
        periodEnd: seconds(period.end) ?? seconds(o.period_end),
        amount:
          e.type === 'invoice.paid'
            ? typeof o.amount_paid === 'number'
              ? o.amount_paid
              : null
            : typeof o.amount_due === 'number'
              ? o.amount_due
              : null,
        periodCharge: periodCharge(o),
        currency: typeof o.currency === 'string' ? o.currency.toUpperCase() : null,
        livemode: e.livemode,
        created,
        customerId: stripeCustomerId(o.customer),
      };
    }
    case 'customer.subscription.created':
    case 'customer.subscription.updated':
    case 'customer.subscription.deleted': {
      const meta = obj(o.metadata);
      const item = firstItem(o);
      const price = obj(item.price);
      return {
        kind: 'subscription',
        deleted: e.type === 'customer.subscription.deleted',
        providerSubscriptionId: text(o.id),
        sessionId: text(meta[LINK_KEY]),
        status: text(o.status),
        cancelAtPeriodEnd: o.cancel_at_period_end === true,
        productId: text(obj(price.metadata).product_id) || text(meta.product_id),
        quantity: typeof item.quantity === 'number' ? item.quantity : null,
        trialEnd: seconds(o.trial_end),
        livemode: e.livemode,
        created,
        customerId: stripeCustomerId(o.customer),
      };
    }
    default:
      return null;
  }
}

/**
 * Why a period's invoice (paid or failed) is not for the subscription's price × seats; null when it
 * is, or when it is no period's (the first, the checkout's; a proration: an amount of its own). Judged
 * by its period lines, since what is paid may differ from the price (prorations of a plan or seat
 * change, a credit, a coupon); by its amount only when it lists no priced period line.
 */
export function periodChargeMismatch(
  a: Pick<
    Extract<StripeSubscriptionAction, { kind: 'invoice' }>,
    'first' | 'offCycle' | 'paid' | 'amount' | 'periodCharge'
  >,
  price: number,
): string | null {
  if (a.first || a.offCycle) return null;
  if (a.periodCharge !== null)
    return a.periodCharge === price
      ? null
      : "the invoice's subscription lines (price × quantity) are not the subscription's price";
  if (a.amount !== null && a.amount !== price)
    return `the invoice's amount ${a.paid ? 'paid' : 'due'} is not the subscription's price`;
  return null;
}
