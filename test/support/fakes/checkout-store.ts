import type { CheckoutStatus, DomainEvent, PageRequest } from '@licensing/proto';
import type { CheckoutModels, SessionDoc } from '../../../services/checkout/src/store/models';
import type { CheckoutStore } from '../../../services/checkout/src/store/queries';
import { duplicateKey, modelToken, pageOf } from './common';

/** Only what the runtime's idempotent() asks of its model, in memory (equality filters on top-level fields). */
export class FakeIdempotencyModel {
  readonly modelName = 'IdempotencyKey';
  readonly records = new Map<string, Record<string, unknown>>();

  private matches(filter: Record<string, unknown>): Record<string, unknown> | undefined {
    const r = this.records.get(filter._id as string);
    return r && Object.entries(filter).every(([k, v]) => r[k] === v) ? r : undefined;
  }

  async create(doc: { _id: string }) {
    if (this.records.has(doc._id)) throw duplicateKey();
    this.records.set(doc._id, structuredClone(doc));
  }

  findById(id: string) {
    const r = this.records.get(id);
    return { lean: async () => (r ? structuredClone(r) : null) };
  }

  updateOne(
    filter: Record<string, unknown>,
    update: { $set?: Record<string, unknown>; $unset?: Record<string, unknown> },
  ) {
    return {
      exec: async () => {
        const r = this.matches(filter);
        if (!r) return { modifiedCount: 0 };
        Object.assign(r, structuredClone(update.$set ?? {}));
        for (const k of Object.keys(update.$unset ?? {})) delete r[k];
        return { modifiedCount: 1 };
      },
    };
  }

  async replaceOne(filter: Record<string, unknown>, doc: Record<string, unknown>) {
    if (!this.matches(filter)) return { modifiedCount: 0 };
    this.records.set(filter._id as string, structuredClone(doc));
    return { modifiedCount: 1 };
  }
}

/** In memory, with the conditional writes of the real CheckoutStore (each says whether it changed anything). */
export class FakeCheckoutStore implements CheckoutStore {
  readonly idempotency = new FakeIdempotencyModel();
  readonly models = {
    Session: modelToken<SessionDoc>('CheckoutSession'),
    Idempotency: this.idempotency,
  } as unknown as CheckoutModels;
  readonly sessions = new Map<string, SessionDoc>();
  /** The events each write recorded along with it, in order (the real documents' outbox). */
  readonly events: DomainEvent[] = [];
  readonly pageTokens = new Map<string, { session_id: string; expires_at: Date }>();
  readonly receipts = new Map<string, string>();
  readonly handledEvents = new Map<string, { type: string; session_id: string }>();
  readonly deliveries = new Map<string, Date>();
  readonly pendingRefunds = new Set<string>();

  private copy = (s: SessionDoc | undefined) => (s ? structuredClone(s) : null);

  async insert(doc: Omit<SessionDoc, 'outbox'>, events: DomainEvent[]): Promise<void> {
    if (this.sessions.has(doc._id)) throw duplicateKey();
    this.sessions.set(doc._id, structuredClone(doc));
    this.events.push(...events);
  }

  async sessionsWithoutLowerCaseEmail(accountId: string, after: string, limit: number) {
    return this.ofAccount(accountId, after, (s) => s.customer_email_lc === undefined || s.customer_email_lc === null)
      .slice(0, limit)
      .map((s) => ({ _id: s._id, customer_email: s.customer_email }));
  }

  async giveLowerCaseEmail(id: string, email: string): Promise<void> {
    const s = this.sessions.get(id);
    if (s && (s.customer_email_lc === undefined || s.customer_email_lc === null))
      s.customer_email_lc = email.toLowerCase();
  }

  async sessionsOfCustomer(accountId: string, emailLc: string, after: string, limit: number): Promise<string[]> {
    return this.ofAccount(accountId, after, (s) => s.customer_email_lc === emailLc)
      .slice(0, limit)
      .map((s) => s._id);
  }

  async replaceCustomerEmail(id: string, emailLc: string, placeholder: string): Promise<boolean> {
    const s = this.sessions.get(id);
    if (!s || s.customer_email_lc !== emailLc) return false;
    Object.assign(s, { customer_email: placeholder, customer_email_lc: placeholder.toLowerCase() });
    return true;
  }

  private ofAccount(accountId: string, after: string, match: (s: SessionDoc) => boolean): SessionDoc[] {
    return [...this.sessions.values()]
      .filter((s) => s.account_id === accountId && (!after || s._id > after) && match(s))
      .sort((a, b) => (a._id < b._id ? -1 : 1));
  }

  async find(accountId: string, id: string): Promise<SessionDoc | null> {
    const s = this.sessions.get(id);
    return s?.account_id === accountId ? this.copy(s) : null;
  }

  async list(accountId: string, status: CheckoutStatus | '', page: PageRequest | undefined, now: Date) {
    const open = (s: SessionDoc) => s.status === 'open' && s.expires_at > now;
    const matches: Record<CheckoutStatus, (s: SessionDoc) => boolean> = {
      open,
      expired: (s) => s.status === 'expired' || (s.status === 'open' && !open(s)),
      complete: (s) => s.status === 'complete',
    };
    return pageOf(
      [...this.sessions.values()].filter((s) => s.account_id === accountId && (!status || matches[status](s))),
      page,
    );
  }

  async markExpired(id: string, event: DomainEvent): Promise<boolean> {
    const s = this.sessions.get(id);
    if (s?.status !== 'open') return false;
    s.status = 'expired';
    this.events.push(event);
    return true;
  }

  async findById(id: string): Promise<SessionDoc | null> {
    return this.copy(this.sessions.get(id));
  }

  async markPaid(
    id: string,
    p: { paymentId: string; email: string; paidWith: string | null; evenIfExpired?: boolean },
    now: Date,
  ): Promise<boolean> {
    const s = this.sessions.get(id);
    const payable = p.evenIfExpired
      ? s?.status === 'open' || s?.status === 'expired'
      : s?.status === 'open' && s.expires_at > now;
    if (!s || !payable) return false;
    Object.assign(
      s,
      { status: 'complete', payment_id: p.paymentId, paid_at: now, paid_with: p.paidWith },
      p.email ? { customer_email: p.email, customer_email_lc: p.email.toLowerCase() } : {},
    );
    return true;
  }

  async findByPayment(paymentId: string): Promise<SessionDoc | null> {
    return this.copy([...this.sessions.values()].find((s) => s.payment_id === paymentId));
  }

  async markRefunded(id: string, now: Date): Promise<void> {
    const s = this.sessions.get(id);
    if (s && s.refunded_at === null) s.refunded_at = now;
  }

  async addPageToken(digest: string, sessionId: string, expiresAt: Date): Promise<void> {
    this.pageTokens.set(digest, { session_id: sessionId, expires_at: expiresAt });
  }

  async pageTokenValid(digest: string, sessionId: string, now: Date): Promise<boolean> {
    const t = this.pageTokens.get(digest);
    return !!t && t.session_id === sessionId && t.expires_at > now;
  }

  async prunePageTokens(now: Date, limit: number): Promise<number> {
    const expired = [...this.pageTokens]
      .filter(([, t]) => t.expires_at <= now)
      .sort(([, a], [, b]) => a.expires_at.getTime() - b.expires_at.getTime())
      .slice(0, limit);
    for (const [digest] of expired) this.pageTokens.delete(digest);
    return expired.length;
  }

  async addReceipt(digest: string, sessionId: string): Promise<void> {
    this.receipts.set(digest, sessionId);
  }

  async hasReceipt(digest: string, sessionId: string): Promise<boolean> {
    return this.receipts.get(digest) === sessionId;
  }

  /** Events claimed by a delivery that is handling them, with the claim's lease. */
  readonly claimedEvents = new Map<string, Date>();

  /** How often a delivery was told another one is handling its event. */
  busyAnswers = 0;

  async claimEvent(eventId: string, now: Date, leaseUntil: Date): Promise<'claimed' | 'handled' | 'busy'> {
    if (this.handledEvents.has(eventId)) return 'handled';
    const held = this.claimedEvents.get(eventId);
    if (held && held > now) {
      this.busyAnswers++;
      return 'busy';
    }
    this.claimedEvents.set(eventId, leaseUntil);
    return 'claimed';
  }

  async finishEvent(eventId: string, type: string, sessionId: string): Promise<void> {
    this.claimedEvents.delete(eventId);
    this.handledEvents.set(eventId, { type, session_id: sessionId });
  }

  async releaseEvent(eventId: string, leaseUntil: Date): Promise<void> {
    if (this.claimedEvents.get(eventId)?.getTime() === leaseUntil.getTime()) this.claimedEvents.delete(eventId);
  }

  async claimDelivery(digest: string, now: Date): Promise<boolean> {
    if (this.deliveries.has(digest)) return false;
    this.deliveries.set(digest, now);
    return true;
  }

  async pruneDeliveries(before: Date): Promise<void> {
    for (const [digest, at] of this.deliveries) if (at < before) this.deliveries.delete(digest);
  }

  async addPendingRefund(paymentId: string): Promise<void> {
    this.pendingRefunds.add(paymentId);
  }

  async pendingRefund(paymentId: string) {
    return this.pendingRefunds.has(paymentId) ? { _id: paymentId, created_at: new Date(0) } : null;
  }

  async pruneExpiredPendingRefunds(): Promise<number> {
    return 0; // the fake keeps no expiry: the store's own sweep is tested on FerretDB
  }

  async hasPendingRefund(paymentId: string): Promise<boolean> {
    return this.pendingRefunds.has(paymentId);
  }

  async recordLicense(id: string, licenseKey: string, event: DomainEvent): Promise<boolean> {
    const s = this.sessions.get(id);
    if (s?.status !== 'complete' || s.license_key !== null) return false;
    s.license_key = licenseKey;
    this.events.push(event);
    return true;
  }

  async paidWithoutLicense(limit: number): Promise<SessionDoc[]> {
    return [...this.sessions.values()]
      .filter((s) => s.status === 'complete' && s.license_key === null)
      .slice(0, limit)
      .map((s) => structuredClone(s));
  }

  async dueForExpiry(now: Date, limit: number): Promise<SessionDoc[]> {
    return [...this.sessions.values()]
      .filter((s) => s.status === 'open' && s.expires_at <= now)
      .slice(0, limit)
      .map((s) => structuredClone(s));
  }
}

/** The subscriptions an erasure goes through, in memory: only their e-mail fields matter to it. */
export class FakeSubscriptionEmails {
  readonly rows = new Map<
    string,
    { _id: string; account_id: string; customer_email: string; customer_email_lc: string }
  >();

  add(id: string, accountId: string, email: string): void {
    this.rows.set(id, {
      _id: id,
      account_id: accountId,
      customer_email: email,
      customer_email_lc: email.toLowerCase(),
    });
  }

  async subscriptionsOfCustomer(accountId: string, emailLc: string, after: string, limit: number): Promise<string[]> {
    return [...this.rows.values()]
      .filter((r) => r.account_id === accountId && r.customer_email_lc === emailLc && (!after || r._id < after))
      .map((r) => r._id)
      .sort()
      .reverse()
      .slice(0, limit);
  }

  async replaceCustomerEmail(id: string, emailLc: string, placeholder: string): Promise<boolean> {
    const r = this.rows.get(id);
    if (r?.customer_email_lc !== emailLc) return false;
    Object.assign(r, { customer_email: placeholder, customer_email_lc: placeholder.toLowerCase() });
    return true;
  }
}
