import { listPage, outboxOf, withEvents } from '@licensing/runtime';
import type { DomainEvent, PageRequest } from '@licensing/proto';
import type { SessionStatus } from '../domain/session';
import type { CheckoutModels, SessionDoc } from './models';

export class CheckoutStore {
  constructor(readonly models: CheckoutModels) {}

  async insert(doc: Omit<SessionDoc, 'outbox'>, events: DomainEvent[]): Promise<void> {
    await this.models.Session.create({ ...doc, ...outboxOf(events) });
  }

  /** Scoped by account: another account's session is simply not found. */
  find(accountId: string, id: string): Promise<SessionDoc | null> {
    return this.models.Session.findOne({ _id: id, account_id: accountId }, { outbox: 0 }).lean<SessionDoc>().exec();
  }

  list(accountId: string, status: SessionStatus | '', page: PageRequest | undefined, now: Date) {
    const byStatus: Record<SessionStatus, Record<string, unknown>> = {
      open: { status: 'open', expires_at: { $gt: now } },
      expired: { $or: [{ status: 'expired' }, { status: 'open', expires_at: { $lte: now } }] },
      complete: { status: 'complete' },
    };
    return listPage<SessionDoc>(this.models.Session, { account_id: accountId, ...(status ? byStatus[status] : {}) }, page);
  }

  /** open → expired, with its event, in one conditional write; false if it was not open any more. */
  async markExpired(id: string, event: DomainEvent): Promise<boolean> {
    const res = await this.models.Session.updateOne({ _id: id, status: 'open' }, { $set: { status: 'expired', ...withEvents([event]) } });
    return res.modifiedCount === 1;
  }

  /** By id alone: the hosted page's URL is the capability. */
  findById(id: string): Promise<SessionDoc | null> {
    return this.models.Session.findById(id, { outbox: 0 }).lean<SessionDoc>().exec();
  }

  /** open → complete with the payment, only while open and unexpired. */
  async markPaid(id: string, paymentId: string, email: string, now: Date): Promise<boolean> {
    const res = await this.models.Session.updateOne(
      { _id: id, status: 'open', expires_at: { $gt: now } },
      { $set: { status: 'complete', payment_id: paymentId, paid_at: now, customer_email: email } },
    );
    return res.modifiedCount === 1;
  }

  /** Records the licence of a paid session once, with checkout.completed. */
  async recordLicense(id: string, licenseKey: string, event: DomainEvent): Promise<boolean> {
    const res = await this.models.Session.updateOne({ _id: id, status: 'complete', license_key: null }, { $set: { license_key: licenseKey, ...withEvents([event]) } });
    return res.modifiedCount === 1;
  }

  paidWithoutLicense(limit: number): Promise<SessionDoc[]> {
    return this.models.Session.find({ status: 'complete', license_key: null }, { outbox: 0 }).limit(limit).lean<SessionDoc[]>().exec();
  }

  dueForExpiry(now: Date, limit: number): Promise<SessionDoc[]> {
    return this.models.Session.find({ status: 'open', expires_at: { $lte: now } }, { outbox: 0 }).limit(limit).lean<SessionDoc[]>().exec();
  }
}
