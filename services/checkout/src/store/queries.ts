import { deleteAllBefore, deleteBefore, listPage, outboxOf, withEvents } from '@licensing/runtime';
import type { CheckoutStatus, DomainEvent, PageRequest, RefundCause } from '@licensing/proto';
import {
  PENDING_REFUND_DAYS,
  type CheckoutModels,
  type PageTokenDoc,
  type PendingRefundDoc,
  type ProviderEventDoc,
  type ReceiptDoc,
  type SessionDoc,
} from './models';

/** A payment as a session records it (markPaid). */
export interface PaymentRecord {
  paymentId: string;
  email: string;
  paidWith: string | null;
  evenIfExpired?: boolean;
  testCard?: string;
  providerSubscriptionId?: string;
  providerCustomerId?: string;
}

export class CheckoutStore {
  constructor(readonly models: CheckoutModels) {}

  async insert(doc: Omit<SessionDoc, 'outbox'>, events: DomainEvent[]): Promise<void> {
    await this.models.Session.create({ ...doc, ...outboxOf(events) });
  }

  /** Scoped by account: another account's session is simply not found. */
  find(accountId: string, id: string): Promise<SessionDoc | null> {
    return this.models.Session.findOne({ _id: id, account_id: accountId }, { outbox: 0 }).lean<SessionDoc>().exec();
  }

  list(accountId: string, status: CheckoutStatus | '', page: PageRequest | undefined, now: Date) {
    const byStatus: Record<CheckoutStatus, Record<string, unknown>> = {
      open: { status: 'open', expires_at: { $gt: now } },
      expired: { $or: [{ status: 'expired' }, { status: 'open', expires_at: { $lte: now } }] },
      complete: { status: 'complete' },
    };
    return listPage<SessionDoc>(
      this.models.Session,
      { account_id: accountId, ...(status ? byStatus[status] : {}) },
      page,
    );
  }

  /** open → expired, with its event, in one conditional write; false if it was not open any more. */
  async markExpired(id: string, event: DomainEvent): Promise<boolean> {
    const res = await this.models.Session.updateOne(
      { _id: id, status: 'open' },
      { $set: { status: 'expired', ...withEvents([event]) } },
    );
    return res.modifiedCount === 1;
  }

  /** By id alone: the hosted page's URL is the capability. */
  findById(id: string): Promise<SessionDoc | null> {
    return this.models.Session.findById(id, { outbox: 0 }).lean<SessionDoc>().exec();
  }

  /**
   * open → complete with the payment, only while open and unexpired. A
   * provider's confirmed payment (`evenIfExpired`) also completes a session
   * our sweeper expired meanwhile: the money was taken, so the buyer gets the licence.
   */
  async markPaid(id: string, p: PaymentRecord, now: Date): Promise<boolean> {
    const filter: Record<string, unknown> = p.evenIfExpired
      ? { _id: id, status: { $in: ['open', 'expired'] } }
      : { _id: id, status: 'open', expires_at: { $gt: now } };
    const set: Record<string, unknown> = {
      status: 'complete',
      payment_id: p.paymentId,
      paid_at: now,
      paid_with: p.paidWith,
      ...(p.testCard ? { test_card: p.testCard } : {}),
      ...(p.providerSubscriptionId ? { provider_subscription_id: p.providerSubscriptionId } : {}),
      ...(p.providerCustomerId ? { provider_customer_id: p.providerCustomerId } : {}),
    };
    if (p.email) Object.assign(set, { customer_email: p.email, customer_email_lc: p.email.toLowerCase() });
    const res = await this.models.Session.updateOne(filter, { $set: set });
    return res.modifiedCount === 1;
  }

  findByPayment(paymentId: string): Promise<SessionDoc | null> {
    return this.models.Session.findOne({ payment_id: paymentId }, { outbox: 0 }).lean<SessionDoc>().exec();
  }

  /** Records that a refund was applied to the licence (idempotent). */
  async markRefunded(id: string, now: Date): Promise<void> {
    await this.models.Session.updateOne({ _id: id, refunded_at: null }, { $set: { refunded_at: now } });
  }

  // Form tokens and receipts: unique inserts, looked up by _id (a digest).

  async addPageToken(digest: string, sessionId: string, expiresAt: Date): Promise<void> {
    await this.models.PageToken.create({ _id: digest, session_id: sessionId, expires_at: expiresAt });
  }

  async pageTokenValid(digest: string, sessionId: string, now: Date): Promise<boolean> {
    const t = await this.models.PageToken.findById(digest).lean<PageTokenDoc>().exec();
    return !!t && t.session_id === sessionId && t.expires_at.getTime() > now.getTime();
  }

  /**
   * Deletes expired form tokens, at most `limit`, and says how many: every view of the
   * hosted page issues one, and an expired one can never be accepted again.
   */
  async prunePageTokens(now: Date, limit: number): Promise<number> {
    // Expired means expires_at <= now: before the next millisecond.
    return deleteBefore(this.models.PageToken, 'expires_at', new Date(now.getTime() + 1), limit);
  }

  async addReceipt(digest: string, sessionId: string, now: Date): Promise<void> {
    await this.models.Receipt.create({ _id: digest, session_id: sessionId, created_at: now });
  }

  async hasReceipt(digest: string, sessionId: string): Promise<boolean> {
    const r = await this.models.Receipt.findById(digest).lean<ReceiptDoc>().exec();
    return !!r && r.session_id === sessionId;
  }

  // Provider events: one delivery claims an event (a unique insert on its id) and handles it.

  /**
   * Claims a provider event for this delivery until `leaseUntil`: 'claimed' (handle it), 'handled'
   * (done before: do nothing) or 'busy' (another delivery is handling it now). A claim left by a
   * handler that died is taken over once its lease has run out.
   */
  async claimEvent(eventId: string, now: Date, leaseUntil: Date): Promise<'claimed' | 'handled' | 'busy'> {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await this.models.ProviderEvent.create({
          _id: eventId,
          state: 'handling',
          claimed_until: leaseUntil,
          type: '',
          session_id: '',
          created_at: now,
        });
        return 'claimed';
      } catch (err) {
        if ((err as { code?: number }).code !== 11000) throw err;
      }
      const held = await this.models.ProviderEvent.findById(eventId).lean<ProviderEventDoc>().exec();
      if (!held) continue; // released meanwhile: claim it again
      if (held.state !== 'handling') return 'handled';
      if (held.claimed_until && held.claimed_until.getTime() > now.getTime()) return 'busy';
      const took = await this.models.ProviderEvent.updateOne(
        { _id: eventId, state: 'handling', claimed_until: held.claimed_until },
        { $set: { claimed_until: leaseUntil } },
      );
      return took.modifiedCount === 1 ? 'claimed' : 'busy';
    }
    return 'busy';
  }

  /** The claimed event was handled to the end: every later delivery of it does nothing. */
  async finishEvent(eventId: string, type: string, sessionId: string, now: Date): Promise<void> {
    await this.models.ProviderEvent.updateOne(
      { _id: eventId },
      { $set: { state: 'handled', claimed_until: null, type, session_id: sessionId, created_at: now } },
    );
  }

  /** The claimed event was not handled (refused, or failed half-way): a retry may handle it. Only this claim goes. */
  async releaseEvent(eventId: string, leaseUntil: Date): Promise<void> {
    await this.models.ProviderEvent.deleteOne({ _id: eventId, state: 'handling', claimed_until: leaseUntil });
  }

  /** True the first time a signed delivery is seen; false for the same one again (a unique insert). */
  async claimDelivery(digest: string, now: Date): Promise<boolean> {
    try {
      await this.models.Delivery.create({ _id: digest, created_at: now });
      return true;
    } catch (err) {
      if ((err as { code?: number }).code === 11000) return false;
      throw err;
    }
  }

  /** Signatures older than the 300 s tolerance can never verify again: they need not be kept. */
  async pruneDeliveries(before: Date): Promise<void> {
    await deleteAllBefore(this.models.Delivery, 'created_at', before, 1000);
  }

  async addPendingRefund(paymentId: string, now: Date, cause?: RefundCause): Promise<void> {
    const expires_at = new Date(now.getTime() + PENDING_REFUND_DAYS * 86_400_000);
    await this.models.PendingRefund.create({ _id: paymentId, created_at: now, expires_at, cause }).catch(
      (err: { code?: number }) => {
        if (err.code !== 11000) throw err;
      },
    );
  }

  /** Forgets the pending refunds past their expiry (through the expires_at index), and says how many. */
  async pruneExpiredPendingRefunds(now: Date): Promise<number> {
    const res = await this.models.PendingRefund.deleteMany({ expires_at: { $lte: now } });
    return res.deletedCount;
  }

  async hasPendingRefund(paymentId: string): Promise<boolean> {
    return (await this.models.PendingRefund.exists({ _id: paymentId })) !== null;
  }

  /** The refund kept for a payment this service did not know then, or null. */
  pendingRefund(paymentId: string): Promise<PendingRefundDoc | null> {
    return this.models.PendingRefund.findById(paymentId).lean<PendingRefundDoc>().exec();
  }

  /** Records the licence of a paid session once, with checkout.completed. */
  async recordLicense(id: string, licenseKey: string, event: DomainEvent): Promise<boolean> {
    const res = await this.models.Session.updateOne(
      { _id: id, status: 'complete', license_key: null },
      { $set: { license_key: licenseKey, ...withEvents([event]) } },
    );
    return res.modifiedCount === 1;
  }

  paidWithoutLicense(limit: number): Promise<SessionDoc[]> {
    return this.models.Session.find({ status: 'complete', license_key: null }, { outbox: 0 })
      .limit(limit)
      .lean<SessionDoc[]>()
      .exec();
  }

  dueForExpiry(now: Date, limit: number): Promise<SessionDoc[]> {
    return this.models.Session.find({ status: 'open', expires_at: { $lte: now } }, { outbox: 0 })
      .limit(limit)
      .lean<SessionDoc[]>()
      .exec();
  }

  // Erasure of a customer's e-mail

  /**
   * The account's sessions stored before customer_email_lc existed, by id after `after`, with their
   * e-mail (null on the customer_email_lc index: a set that only shrinks, see giveLowerCaseEmail).
   */
  sessionsWithoutLowerCaseEmail(
    accountId: string,
    after: string,
    limit: number,
  ): Promise<Pick<SessionDoc, '_id' | 'customer_email'>[]> {
    const filter: Record<string, unknown> = { account_id: accountId, customer_email_lc: null };
    if (after) filter._id = { $gt: after };
    return this.models.Session.find(filter, { customer_email: 1 })
      .sort({ _id: 1 })
      .limit(limit)
      .lean<Pick<SessionDoc, '_id' | 'customer_email'>[]>()
      .exec();
  }

  /** Gives an older session its customer_email_lc (unless a write gave it one meanwhile). */
  async giveLowerCaseEmail(id: string, email: string): Promise<void> {
    await this.models.Session.updateOne(
      { _id: id, customer_email_lc: null },
      { $set: { customer_email_lc: email.toLowerCase() } },
    );
  }

  /** The ids of the account's sessions of this lower-cased e-mail, after `after` (the customer_email_lc index). */
  async sessionsOfCustomer(accountId: string, emailLc: string, after: string, limit: number): Promise<string[]> {
    const filter: Record<string, unknown> = { account_id: accountId, customer_email_lc: emailLc };
    if (after) filter._id = { $gt: after };
    const docs = await this.models.Session.find(filter, { _id: 1 })
      .sort({ _id: 1 })
      .limit(limit)
      .lean<{ _id: string }[]>()
      .exec();
    return docs.map((d) => d._id);
  }

  /** The placeholder as a session's e-mail, if it still holds this one (lower-cased); true when changed. */
  async replaceCustomerEmail(id: string, emailLc: string, placeholder: string): Promise<boolean> {
    const res = await this.models.Session.updateOne(
      { _id: id, customer_email_lc: emailLc },
      { $set: { customer_email: placeholder, customer_email_lc: placeholder.toLowerCase() } },
    );
    return res.modifiedCount === 1;
  }
}
