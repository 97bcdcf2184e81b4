import { Schema, type Connection, type Model } from 'mongoose';
import { idempotencyModel, outboxFields } from '@licensing/runtime';
import {
  checkoutStatuses,
  DEFAULT_POLICY,
  refundActions,
  type CheckoutStatus,
  type DomainEvent,
  type PriceInterval,
  type RefundAction,
  type RefundCause,
} from '@licensing/proto';
import type { TestCard } from '../domain/subscription';

export interface SessionDoc {
  _id: string;
  account_id: string;
  product_id: string;
  /** Shown on the hosted page; copied at creation so the page needs no second service. */
  product_name: string;
  status: CheckoutStatus;
  amount: number;
  currency: string;
  customer_email: string;
  /**
   * customer_email lower-cased (what an erasure looks for, on an index). Absent on sessions stored
   * before it existed: the first erasure in their account gives it to them (store/queries.ts).
   */
  customer_email_lc?: string;
  success_url: string;
  cancel_url: string;
  metadata: Record<string, string>;
  expires_at: Date;
  created_at: Date;
  license_key: string | null;
  payment_id: string | null;
  paid_at: Date | null;
  /** test | stripe: who takes this session's payment. */
  provider: 'test' | 'stripe';
  /** The provider's session (Stripe's cs_test_…/cs_live_…; '' in test mode). */
  provider_session_id: string;
  /** Where the buyer pays (Stripe's page, or our hosted test-mode page). */
  provider_url: string;
  /** true only for a real payment (a live Stripe key). */
  livemode: boolean;
  /** What a refund does to the licence (the product's policy when the session was created). */
  refund_action: RefundAction;
  /** Test mode: the digest of the page's form token that paid (that browser may see the key). */
  paid_with: string | null;
  /** When the payment was refunded in full and the licence revoked or suspended. */
  refunded_at: Date | null;
  /** Seats (1 for a one-time price; absent on sessions stored before: 1). */
  quantity?: number;
  /** A recurring price (copied at creation): the paid session starts a subscription (domain/subscription.ts). */
  recurring?: SessionRecurring | null;
  /** Test mode, recurring: which test card paid (it is billed again at each period end). */
  test_card?: TestCard | null;
  /** Stripe, recurring: the subscription the Checkout Session made (sub_…). */
  provider_subscription_id?: string;
  /** Stripe, recurring: the customer (cus_…) who pays it; internal (the billing portal is opened for it). */
  provider_customer_id?: string;
  outbox?: Record<string, DomainEvent>;
}

/** What a recurring session's price and policy said when it was created. */
export interface SessionRecurring {
  interval: PriceInterval;
  interval_count: number;
  trial_days: number;
  /** Per period for every seat (minor units). */
  amount: number;
  payment_grace_days: number;
}

/** A form token of the hosted page, checked on the server (stored as a digest). */
export interface PageTokenDoc {
  _id: string;
  session_id: string;
  expires_at: Date;
}

/** The proof that a browser paid: the digest of the secret in its HttpOnly cookie. */
export interface ReceiptDoc {
  _id: string;
  session_id: string;
  created_at: Date;
}

/**
 * A provider event (its id as _id), claimed by the delivery that handles it: while `handling`, other
 * deliveries of the same event wait for it; once handled, they do nothing. A claim whose handler
 * failed is removed, and one whose handler died expires at `claimed_until`, so a retry handles it.
 * (Records from before claims have no state: handled.)
 */
export interface ProviderEventDoc {
  _id: string;
  state?: 'handling' | 'handled';
  claimed_until?: Date | null;
  type: string;
  session_id: string;
  created_at: Date;
}

/** A signed delivery, seen once (the digest of event id and signing time as _id): seen again, it is a replay. */
export interface DeliveryDoc {
  _id: string;
  created_at: Date;
}

/**
 * A full refund seen before its payment's completion (events may arrive in any order), or of a payment
 * that is not ours at all: the payment's id only, for PENDING_REFUND_DAYS.
 */
export interface PendingRefundDoc {
  _id: string;
  created_at: Date;
  /** Forgotten then (a TTL index on MongoDB; the expiry sweep on FerretDB). Absent on older records. */
  expires_at?: Date;
  /** What took the money back (absent: a refund). */
  cause?: RefundCause;
}

/** How long a refund of a payment this service does not know is kept: as long as Stripe keeps its events. */
export const PENDING_REFUND_DAYS = 30;

export function checkoutModels(conn: Connection) {
  const schema = new Schema<SessionDoc>(
    {
      _id: String,
      account_id: { type: String, required: true },
      product_id: { type: String, required: true },
      product_name: { type: String, default: '' },
      status: { type: String, required: true, enum: checkoutStatuses },
      amount: { type: Number, required: true },
      currency: { type: String, required: true },
      customer_email: { type: String, default: '' },
      customer_email_lc: { type: String },
      success_url: { type: String, required: true },
      cancel_url: { type: String, default: '' },
      metadata: { type: Object, default: () => ({}) },
      expires_at: { type: Date, required: true },
      created_at: { type: Date, required: true },
      license_key: { type: String, default: null },
      payment_id: { type: String, default: null },
      paid_at: { type: Date, default: null },
      provider: { type: String, default: 'test' },
      provider_session_id: { type: String, default: '' },
      provider_url: { type: String, default: '' },
      livemode: { type: Boolean, default: false },
      refund_action: { type: String, default: DEFAULT_POLICY.refund_action, enum: refundActions },
      paid_with: { type: String, default: null },
      refunded_at: { type: Date, default: null },
      quantity: { type: Number, default: 1 },
      recurring: { type: Object, default: null },
      test_card: { type: String, default: null },
      provider_subscription_id: { type: String, default: '' },
      provider_customer_id: { type: String, default: '' },
      ...outboxFields,
    },
    { versionKey: false, collection: 'checkout_sessions' },
  );
  schema.index({ account_id: 1, _id: -1 });
  schema.index({ account_id: 1, status: 1, _id: -1 }); // the session list by status (test/repository/list-filter-indexes.test.ts)
  schema.index({ status: 1, expires_at: 1 });
  schema.index({ status: 1, license_key: 1 });
  schema.index({ payment_id: 1 });
  // A customer's sessions (the erasure of their e-mail); sessions without the field are null here.
  schema.index({ account_id: 1, customer_email_lc: 1, _id: 1 });
  const plain = <T>(name: string, collection: string, fields: Record<string, unknown>) =>
    conn.model<T>(name, new Schema<T>({ _id: String, ...fields }, { versionKey: false, collection })) as Model<T>;
  return {
    Session: conn.model<SessionDoc>('CheckoutSession', schema) as Model<SessionDoc>,
    Idempotency: idempotencyModel(conn),
    // Pruned once expired (the expiry sweep): the prune is served by an index.
    PageToken: plain<PageTokenDoc>('CheckoutPageToken', 'checkout_page_tokens', {
      session_id: { type: String, required: true },
      expires_at: { type: Date, required: true, index: true },
    }),
    Receipt: plain<ReceiptDoc>('CheckoutReceipt', 'checkout_receipts', {
      session_id: { type: String, required: true },
      created_at: { type: Date, required: true },
    }),
    ProviderEvent: plain<ProviderEventDoc>('CheckoutProviderEvent', 'checkout_provider_events', {
      state: String,
      claimed_until: Date,
      type: String,
      session_id: String,
      created_at: Date,
    }),
    // Pruned by age (replays are refused for 10 minutes): the prune is served by an index.
    Delivery: plain<DeliveryDoc>('CheckoutWebhookDelivery', 'checkout_webhook_deliveries', {
      created_at: { type: Date, required: true, index: true },
    }),
    // MongoDB removes expired ones through the TTL index; FerretDB 1.x ignores it, so the expiry sweep
    // deletes them through the same index.
    PendingRefund: plain<PendingRefundDoc>('CheckoutPendingRefund', 'checkout_pending_refunds', {
      created_at: Date,
      expires_at: { type: Date, index: { expireAfterSeconds: 0 } },
      cause: String,
    }),
  };
}

export type CheckoutModels = ReturnType<typeof checkoutModels>;
