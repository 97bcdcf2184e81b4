// What a verified Stripe event means for checkout: pure, unit tested.
// (The signature is checked before this, in providers/stripe.ts.)

/** The fields of a Stripe event this service reads; anything else is ignored. */
export interface StripeEventLike {
  id: string;
  type: string;
  livemode: boolean;
  /** When Stripe made the event (seconds). */
  created?: number;
  data: { object: Record<string, unknown> };
}

export type StripeAction =
  | {
      kind: 'paid';
      sessionId: string;
      providerSessionId: string;
      paymentId: string;
      email: string;
      livemode: boolean;
      amount: number | null;
      currency: string | null;
      /** mode subscription: Stripe's subscription (sub_…); '' otherwise. */
      providerSubscriptionId: string;
      /** mode subscription: Stripe's customer (cus_…) who pays it (the billing portal needs it); '' otherwise. */
      customerId: string;
    }
  | { kind: 'awaiting_payment'; sessionId: string; providerSessionId: string; livemode: boolean }
  | { kind: 'expired'; sessionId: string; providerSessionId: string; livemode: boolean }
  /** A payment taken back: refunded in full, or disputed (a chargeback). */
  | { kind: 'refunded'; paymentId: string; livemode: boolean; cause: 'refund' | 'dispute' }
  | { kind: 'ignored'; reason: string };

/** The metadata key that links a Stripe Checkout Session to ours (client_reference_id carries it too). */
export const LINK_KEY = 'checkout_session_id';

const text = (v: unknown) => (typeof v === 'string' ? v : '');
const idOf = (v: unknown) =>
  typeof v === 'string' ? v : v && typeof v === 'object' ? text((v as { id?: unknown }).id) : '';

/** A Stripe customer id (`cus_…`, a string or an expanded object) an event names, or '' when it names none that looks like one. */
export function stripeCustomerId(v: unknown): string {
  const id = idOf(v);
  return /^cus_[A-Za-z0-9]{1,250}$/.test(id) ? id : '';
}

/** Our session id named by a Stripe Checkout Session ('' when it names none: not one of ours). */
export function linkedSessionId(o: Record<string, unknown>): string {
  const meta = (o.metadata ?? {}) as Record<string, unknown>;
  return text(meta[LINK_KEY]) || text(o.client_reference_id);
}

export function interpretStripeEvent(e: StripeEventLike): StripeAction {
  const o = e.data?.object ?? {};
  switch (e.type) {
    case 'checkout.session.completed':
    case 'checkout.session.async_payment_succeeded':
    case 'checkout.session.expired': {
      const sessionId = linkedSessionId(o);
      if (!sessionId) return { kind: 'ignored', reason: 'a Stripe Checkout Session this service did not create' };
      const providerSessionId = text(o.id);
      if (e.type === 'checkout.session.expired')
        return { kind: 'expired', sessionId, providerSessionId, livemode: e.livemode };
      // Delayed payment methods complete the session unpaid; async_payment_succeeded follows.
      if (o.payment_status !== 'paid' && o.payment_status !== 'no_payment_required')
        return { kind: 'awaiting_payment', sessionId, providerSessionId, livemode: e.livemode };
      const details = (o.customer_details ?? {}) as Record<string, unknown>;
      return {
        kind: 'paid',
        sessionId,
        providerSessionId,
        paymentId: idOf(o.payment_intent) || providerSessionId,
        email: text(details.email) || text(o.customer_email),
        livemode: e.livemode,
        amount: typeof o.amount_total === 'number' ? o.amount_total : null,
        currency: typeof o.currency === 'string' ? o.currency.toUpperCase() : null,
        providerSubscriptionId: o.mode === 'subscription' ? idOf(o.subscription) : '',
        customerId: o.mode === 'subscription' ? stripeCustomerId(o.customer) : '',
      };
    }
    case 'charge.refunded': {
      // Partial refunds leave the licence alone; only a charge refunded in full counts.
      if (o.refunded !== true) return { kind: 'ignored', reason: 'a partial refund' };
      const paymentId = idOf(o.payment_intent);
      if (!paymentId) return { kind: 'ignored', reason: 'a charge without a PaymentIntent (not from Checkout)' };
      return { kind: 'refunded', paymentId, livemode: e.livemode, cause: 'refund' };
    }
    case 'charge.dispute.created': {
      // A chargeback takes the money back as a refund does (the buyer's bank holds it from the start),
      // so the licence gets the product's refund_action too; a dispute the vendor wins later changes
      // nothing by itself (the vendor reinstates the licence).
      const paymentId = idOf(o.payment_intent);
      if (!paymentId) return { kind: 'ignored', reason: 'a dispute without a PaymentIntent (not from Checkout)' };
      return { kind: 'refunded', paymentId, livemode: e.livemode, cause: 'dispute' };
    }
    default:
      return { kind: 'ignored', reason: `events of type ${e.type} are not used` };
  }
}

export interface StripeSessionFacts {
  provider: string;
  provider_session_id: string;
  livemode: boolean;
  amount: number;
  currency: string;
  /** A recurring price with a trial: the checkout takes no money (amount_total 0). */
  recurring?: { trial_days: number } | null;
}

/** Why a Stripe event cannot belong to this session (null: it does). */
export function mismatch(
  s: StripeSessionFacts,
  a: { providerSessionId: string; livemode: boolean; amount?: number | null; currency?: string | null },
): string | null {
  if (s.provider !== 'stripe') return 'the checkout session is not paid through Stripe';
  if (a.providerSessionId !== s.provider_session_id)
    return 'the Stripe Checkout Session is not the one created for this checkout session';
  if (a.livemode !== s.livemode)
    return `a ${a.livemode ? 'live' : 'test'} event for a ${s.livemode ? 'live' : 'test'} checkout session`;
  const trialFree = !!s.recurring?.trial_days && a.amount === 0;
  if (a.amount != null && !trialFree && (a.amount !== s.amount || (a.currency ?? '').toUpperCase() !== s.currency))
    return 'the amount paid is not the price of the checkout session';
  return null;
}
