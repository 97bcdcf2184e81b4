import { Schema, type Connection, type Model } from 'mongoose';
import { listPage, outboxOf, outboxFields, withEvents } from '@licensing/runtime';
import {
  invoiceStatuses,
  priceIntervals,
  subscriptionStatuses,
  type DomainEvent,
  type InvoiceStatus,
  type PageRequest,
  type PriceInterval,
  type RefundCause,
  type SubscriptionStatus,
} from '@licensing/proto';
import type { TestCard } from '../domain/subscription';
import type { StripeSubscriptionAction } from '../domain/stripe-subscription-events';

// Subscriptions, their invoices and the test-mode billing portal's links: the checkout service's own
// collections (docs/architecture.md, "Subscriptions").

export interface SubscriptionDoc {
  /** sub_ + the ULID of the checkout session that started it: one subscription per session, by its _id. */
  _id: string;
  account_id: string;
  product_id: string;
  session_id: string;
  customer_email: string;
  customer_email_lc: string;
  license_key: string;
  quantity: number;
  status: SubscriptionStatus;
  interval: PriceInterval;
  interval_count: number;
  /** Per period, every seat (minor units). */
  amount: number;
  currency: string;
  current_period_start: Date;
  current_period_end: Date;
  /** The number of the current period (0: the first, paid at checkout, or the trial). */
  period_index: number;
  cancel_at_period_end: boolean;
  trial_end: Date | null;
  canceled_at: Date | null;
  /** When the licence ended (real time): set once canceled. */
  license_ends_at: Date | null;
  /**
   * Canceled before its period end (cancelled now, or a trial that ended unpaid): its licence expires
   * then without the policy's grace days. False for one that ended at its period end (absent on older documents: false).
   */
  ended_early?: boolean;
  payment_grace_days: number;
  livemode: boolean;
  provider: 'test' | 'stripe';
  /** Stripe's subscription (sub_…) for a Stripe subscription; '' in test mode. */
  provider_subscription_id?: string;
  /**
   * Stripe's customer (cus_…) who pays a Stripe subscription, learned from checkout.session.completed
   * or a later subscription event; '' until then (and in test mode). Internal: the billing portal is
   * opened for it; never in the API's subscription or in events.
   */
  provider_customer_id?: string;
  /** The `created` time (seconds) of the last Stripe subscription event applied: an older one changes nothing. */
  provider_updated_at?: number;
  /** Test mode: the subscription's clock, moved only by POST …/test_clock (null for Stripe's). */
  test_clock: Date | null;
  test_card: TestCard | null;
  /** Charges the card on file paid (0341 pays only while none did: domain/subscription.ts cardPaymentsWhenGiven). */
  card_payments: number;
  /** Increases with every change; the licence applies a state only if newer than the last it applied. */
  seq: number;
  /** The licence has yet to apply this state (a failed call is retried by the sweep). */
  license_pending: boolean;
  /** What the last change was (the licence's ApplySubscription change): created | renewed | past_due | unpaid | canceled | updated. */
  last_change: string;
  created_at: Date;
  outbox?: Record<string, DomainEvent>;
}

export interface InvoiceDoc {
  /** in_<subscription ULID>_<period>: one invoice per period, so a period is billed once however many calls meet. */
  _id: string;
  subscription_id: string;
  account_id: string;
  period: number;
  period_start: Date;
  period_end: Date;
  amount: number;
  currency: string;
  status: InvoiceStatus;
  created_at: Date;
  /** Stripe: the PaymentIntent that paid it (a refund names it). */
  payment_id?: string;
  /** Stripe: the subscription's first invoice (billing_reason subscription_create: the checkout's payment). */
  first?: boolean;
  /** Refunded in full or disputed (a chargeback): recorded once, shown as the subscription's `refunds`. */
  refund?: InvoiceRefund | null;
}

export interface InvoiceRefund {
  cause: RefundCause;
  at: Date;
}

/** How long a Stripe event about an object that is not ours (yet) is kept: Stripe keeps its events as long. */
export const PENDING_EVENT_DAYS = 30;

/**
 * A Stripe event about a subscription that is not ours yet (it arrived before the checkout that starts
 * it): kept, and applied once the subscription exists.
 */
export interface PendingEventDoc {
  /** Stripe's event id. */
  _id: string;
  provider_subscription_id: string;
  session_id: string;
  created: number;
  /**
   * What the event means (domain/stripe-subscription-events.ts): only the fields this service uses, never
   * Stripe's whole object (its customer's name, e-mail, address…).
   */
  action?: StripeSubscriptionAction;
  /** Written before only the action was kept: the whole event (applied or dropped like the others). */
  event?: Record<string, unknown>;
  /** Dropped then if no subscription of ours claimed it (a TTL index on MongoDB; the sweep on FerretDB). */
  expires_at?: Date;
}

/** A test-mode billing portal link: the digest of its token as _id, good for an hour. */
export interface PortalLinkDoc {
  _id: string;
  subscription_id: string;
  expires_at: Date;
}

/** A subscription; the list and each of its filters lead an index of their own. */
function subscriptionSchema(): Schema<SubscriptionDoc> {
  const schema = new Schema<SubscriptionDoc>(
    {
      _id: String,
      account_id: { type: String, required: true },
      product_id: { type: String, required: true },
      session_id: { type: String, required: true },
      customer_email: { type: String, required: true },
      customer_email_lc: { type: String, required: true },
      license_key: { type: String, required: true },
      quantity: { type: Number, required: true },
      status: { type: String, required: true, enum: subscriptionStatuses },
      interval: { type: String, required: true, enum: priceIntervals },
      interval_count: { type: Number, required: true },
      amount: { type: Number, required: true },
      currency: { type: String, required: true },
      current_period_start: { type: Date, required: true },
      current_period_end: { type: Date, required: true },
      period_index: { type: Number, default: 0 },
      cancel_at_period_end: { type: Boolean, default: false },
      trial_end: { type: Date, default: null },
      canceled_at: { type: Date, default: null },
      license_ends_at: { type: Date, default: null },
      ended_early: { type: Boolean, default: false },
      payment_grace_days: { type: Number, default: 7 },
      livemode: { type: Boolean, default: false },
      provider: { type: String, default: 'test' },
      provider_subscription_id: { type: String, default: '' },
      provider_customer_id: { type: String, default: '' },
      provider_updated_at: { type: Number, default: 0 },
      test_clock: { type: Date, default: null },
      test_card: { type: String, default: null },
      card_payments: { type: Number, default: 0 },
      seq: { type: Number, default: 1 },
      license_pending: { type: Boolean, default: true },
      last_change: { type: String, default: 'created' },
      created_at: { type: Date, required: true },
      ...outboxFields,
    },
    { versionKey: false, collection: 'subscriptions' },
  );
  // The list and each of its filters lead an index of their own (as the licence list's do).
  schema.index({ account_id: 1, _id: -1 });
  schema.index({ account_id: 1, status: 1, _id: -1 });
  schema.index({ account_id: 1, product_id: 1, _id: -1 });
  schema.index({ account_id: 1, customer_email_lc: 1, _id: -1 });
  schema.index({ license_pending: 1 });
  // The sweep of Stripe subscriptions past due (pastDueWithoutClock).
  schema.index({ status: 1, test_clock: 1, current_period_end: 1 });
  schema.index({ provider_subscription_id: 1 });
  return schema;
}

export function subscriptionModels(conn: Connection) {
  const invoice = new Schema<InvoiceDoc>(
    {
      _id: String,
      subscription_id: { type: String, required: true },
      account_id: { type: String, required: true },
      period: { type: Number, required: true },
      period_start: { type: Date, required: true },
      period_end: { type: Date, required: true },
      amount: { type: Number, required: true },
      currency: { type: String, required: true },
      status: { type: String, required: true, enum: invoiceStatuses },
      created_at: { type: Date, required: true },
      payment_id: { type: String, default: '' },
      first: { type: Boolean, default: undefined },
      refund: { type: Object, default: undefined },
    },
    { versionKey: false, collection: 'subscription_invoices' },
  );
  invoice.index({ subscription_id: 1, period_start: -1, created_at: -1 });
  invoice.index({ payment_id: 1 });
  return {
    Subscription: conn.model<SubscriptionDoc>('Subscription', subscriptionSchema()) as Model<SubscriptionDoc>,
    Invoice: conn.model<InvoiceDoc>('SubscriptionInvoice', invoice) as Model<InvoiceDoc>,
    PendingEvent: conn.model<PendingEventDoc>(
      'SubscriptionPendingEvent',
      new Schema<PendingEventDoc>(
        {
          _id: String,
          provider_subscription_id: { type: String, index: true },
          session_id: { type: String, index: true },
          created: Number,
          action: Object,
          event: Object,
          // Real MongoDB removes expired ones through the TTL index; FerretDB 1.x ignores it, so the
          // checkout sweep deletes them through the same index (dropExpiredPending).
          expires_at: { type: Date, index: { expireAfterSeconds: 0 } },
        },
        { versionKey: false, collection: 'subscription_pending_events' },
      ),
    ) as Model<PendingEventDoc>,
    PortalLink: conn.model<PortalLinkDoc>(
      'SubscriptionPortalLink',
      new Schema<PortalLinkDoc>(
        {
          _id: String,
          subscription_id: { type: String, required: true },
          expires_at: { type: Date, required: true, index: true },
        },
        { versionKey: false, collection: 'subscription_portal_links' },
      ),
    ) as Model<PortalLinkDoc>,
  };
}

export type SubscriptionModels = ReturnType<typeof subscriptionModels>;

export interface SubscriptionFilter {
  status: string;
  customer_email: string;
  product_id: string;
}

const isDuplicate = (err: unknown) => (err as { code?: number })?.code === 11000;

export class SubscriptionStore {
  constructor(readonly models: SubscriptionModels) {}

  /** The first write of a subscription; false when it exists already (another run of the same completion). */
  async insert(doc: Omit<SubscriptionDoc, 'outbox'>, events: DomainEvent[]): Promise<boolean> {
    try {
      await this.models.Subscription.create({ ...doc, ...outboxOf(events) });
      return true;
    } catch (err) {
      if (isDuplicate(err)) return false;
      throw err;
    }
  }

  /** Scoped by account: another account's subscription is simply not found. */
  find(accountId: string, id: string): Promise<SubscriptionDoc | null> {
    return this.models.Subscription.findOne({ _id: id, account_id: accountId }, { outbox: 0 })
      .lean<SubscriptionDoc>()
      .exec();
  }

  findById(id: string): Promise<SubscriptionDoc | null> {
    return this.models.Subscription.findById(id, { outbox: 0 }).lean<SubscriptionDoc>().exec();
  }

  list(accountId: string, f: SubscriptionFilter, page: PageRequest | undefined) {
    // One filter at a time leads an index; the others narrow what it finds.
    return listPage<SubscriptionDoc>(
      this.models.Subscription,
      {
        account_id: accountId,
        ...(f.status ? { status: f.status } : {}),
        ...(f.product_id ? { product_id: f.product_id } : {}),
        ...(f.customer_email ? { customer_email_lc: f.customer_email.toLowerCase() } : {}),
      },
      page,
    );
  }

  /**
   * The subscription's next state with its events, only over the state it was read in (seq): false when
   * another writer moved it first (read again and decide again).
   */
  async replace(before: SubscriptionDoc, changes: Partial<SubscriptionDoc>, events: DomainEvent[]): Promise<boolean> {
    const res = await this.models.Subscription.updateOne(
      { _id: before._id, seq: before.seq },
      { $set: { ...changes, seq: before.seq + 1, license_pending: true, ...withEvents(events) } },
    );
    return res.modifiedCount === 1;
  }

  /**
   * Stripe's customer of a Stripe subscription, learned from one of its events: a plain field of ours
   * (no event, no new state), written only when it differs.
   */
  async setCustomer(id: string, customerId: string): Promise<void> {
    await this.models.Subscription.updateOne(
      { _id: id, provider_customer_id: { $ne: customerId } },
      { $set: { provider_customer_id: customerId } },
    );
  }

  /** The test clock moved on with nothing to bill or change on the way (only over state `seq`). */
  async setClock(id: string, seq: number, to: Date): Promise<void> {
    await this.models.Subscription.updateOne({ _id: id, seq }, { $set: { test_clock: to } });
  }

  /**
   * The licence applied state `seq`: nothing pending, unless the subscription moved on meanwhile; with
   * the licence's key when a reroll changed it (in the same write: FerretDB's updates are not atomic).
   */
  async licenseApplied(id: string, seq: number, licenseKey?: string): Promise<void> {
    await this.models.Subscription.updateOne(
      { _id: id, seq },
      { $set: { license_pending: false, ...(licenseKey ? { license_key: licenseKey } : {}) } },
    );
  }

  /**
   * Past-due subscriptions that follow real time (Stripe's: no test clock), earliest period end first:
   * the sweep makes those whose payment grace has passed unpaid.
   */
  async pastDueWithoutClock(limit: number): Promise<SubscriptionDoc[]> {
    return this.models.Subscription.find({ status: 'past_due', test_clock: null }, { outbox: 0 })
      .sort({ current_period_end: 1 })
      .limit(limit)
      .lean<SubscriptionDoc[]>()
      .exec();
  }

  /** Subscriptions whose licence has not applied their latest state (a failed call): told again by the sweep. */
  async licenseBehind(limit: number): Promise<SubscriptionDoc[]> {
    return this.models.Subscription.find({ license_pending: true }, { outbox: 0 })
      .limit(limit)
      .lean<SubscriptionDoc[]>()
      .exec();
  }

  /** The period's invoice, once: false when it exists (billed by another call). */
  async addInvoice(doc: InvoiceDoc): Promise<boolean> {
    try {
      await this.models.Invoice.create(doc);
      return true;
    } catch (err) {
      if (isDuplicate(err)) return false;
      throw err;
    }
  }

  findInvoice(id: string): Promise<InvoiceDoc | null> {
    return this.models.Invoice.findById(id).lean<InvoiceDoc>().exec();
  }

  async setInvoiceStatus(id: string, status: InvoiceStatus, paymentId = ''): Promise<void> {
    await this.models.Invoice.updateOne(
      { _id: id },
      { $set: { status, ...(paymentId ? { payment_id: paymentId } : {}) } },
    );
  }

  /** The invoice a payment (PaymentIntent) paid, or null: no invoice of ours. */
  invoiceOfPayment(paymentId: string): Promise<InvoiceDoc | null> {
    if (!paymentId) return Promise.resolve(null);
    return this.models.Invoice.findOne({ payment_id: paymentId }).lean<InvoiceDoc>().exec();
  }

  /** Records an invoice's refund or dispute, once (the first cause recorded stays). */
  async markInvoiceRefunded(id: string, refund: InvoiceRefund): Promise<void> {
    await this.models.Invoice.updateOne({ _id: id, refund: null }, { $set: { refund } });
  }

  /** Newest first: by period, then by when recorded (ids do not sort by time: `_9` is after `_12`, Stripe's are random). */
  invoices(subscriptionId: string, limit = 100): Promise<InvoiceDoc[]> {
    return this.models.Invoice.find({ subscription_id: subscriptionId })
      .sort({ period_start: -1, created_at: -1 })
      .limit(limit)
      .lean<InvoiceDoc[]>()
      .exec();
  }

  findByProvider(providerSubscriptionId: string): Promise<SubscriptionDoc | null> {
    return this.models.Subscription.findOne({ provider_subscription_id: providerSubscriptionId }, { outbox: 0 })
      .lean<SubscriptionDoc>()
      .exec();
  }

  /** Keeps an early event (once: its id). */
  async keepPending(doc: PendingEventDoc): Promise<void> {
    try {
      await this.models.PendingEvent.create(doc);
    } catch (err) {
      if (!isDuplicate(err)) throw err;
    }
  }

  /** The early events of a subscription, oldest first. */
  async pendingFor(providerSubscriptionId: string, sessionId: string): Promise<PendingEventDoc[]> {
    const found = await Promise.all([
      providerSubscriptionId
        ? this.models.PendingEvent.find({ provider_subscription_id: providerSubscriptionId })
            .lean<PendingEventDoc[]>()
            .exec()
        : [],
      this.models.PendingEvent.find({ session_id: sessionId }).lean<PendingEventDoc[]>().exec(),
    ]);
    const byId = new Map(found.flat().map((d) => [d._id, d]));
    return [...byId.values()].sort((a, b) => a.created - b.created || a._id.localeCompare(b._id));
  }

  async dropPending(id: string): Promise<void> {
    await this.models.PendingEvent.deleteOne({ _id: id });
  }

  /**
   * Deletes the early events no subscription claimed within PENDING_EVENT_DAYS (through the expires_at
   * index), and says how many: MongoDB's TTL index does this itself, FerretDB does not.
   */
  async dropExpiredPending(now: Date): Promise<number> {
    const res = await this.models.PendingEvent.deleteMany({ expires_at: { $lte: now } });
    return res.deletedCount;
  }

  // Erasure of a customer's e-mail

  /** The ids of the account's subscriptions of this lower-cased e-mail, after `after` (its list index). */
  async subscriptionsOfCustomer(accountId: string, emailLc: string, after: string, limit: number): Promise<string[]> {
    const filter: Record<string, unknown> = { account_id: accountId, customer_email_lc: emailLc };
    if (after) filter._id = { $lt: after };
    const docs = await this.models.Subscription.find(filter, { _id: 1 })
      .sort({ _id: -1 })
      .limit(limit)
      .lean<{ _id: string }[]>()
      .exec();
    return docs.map((d) => d._id);
  }

  /**
   * The placeholder as a subscription's e-mail, if it still holds this one; true when changed. A plain
   * field of ours, as setCustomer: no new state (seq), no event (those already published said what they
   * said; the next one names the placeholder).
   */
  async replaceCustomerEmail(id: string, emailLc: string, placeholder: string): Promise<boolean> {
    const res = await this.models.Subscription.updateOne(
      { _id: id, customer_email_lc: emailLc },
      { $set: { customer_email: placeholder, customer_email_lc: placeholder.toLowerCase() } },
    );
    return res.modifiedCount === 1;
  }

  async addPortalLink(digest: string, subscriptionId: string, expiresAt: Date): Promise<void> {
    await this.models.PortalLink.create({ _id: digest, subscription_id: subscriptionId, expires_at: expiresAt });
  }

  async portalLink(digest: string, now: Date): Promise<PortalLinkDoc | null> {
    const link = await this.models.PortalLink.findById(digest).lean<PortalLinkDoc>().exec();
    return link && link.expires_at.getTime() > now.getTime() ? link : null;
  }
}
