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
      amount: number | null;
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
const firstLine = (o: Record<string, unknown>) => obj((obj(o.lines).data as unknown[] | undefined)?.[0]);
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
      const line = firstLine(o);
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
