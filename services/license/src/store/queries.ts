import { listPage, outboxOf, withEvents } from '@licensing/runtime';
import type { DomainEvent, PageRequest } from '@licensing/proto';
import type { Status } from '../domain/lifecycle';
import type { ActivationDoc, LicenseDoc, LicenseModels } from './models';

// Everything but the outbox: the validation hot path reads one document.
const VALIDATION_FIELDS = { outbox: 0 };

const isDuplicate = (err: unknown) => (err as { code?: number })?.code === 11000;

export class LicenseStore {
  constructor(readonly models: LicenseModels) {}

  async insert(doc: Omit<LicenseDoc, 'outbox'>, events: DomainEvent[]): Promise<void> {
    await this.models.License.create({ ...doc, ...outboxOf(events) });
  }

  /** One read on the unique key index; account scoping is checked by the caller. */
  findByKey(key: string): Promise<LicenseDoc | null> {
    return this.models.License.findOne({ key }, VALIDATION_FIELDS).lean<LicenseDoc>().exec();
  }

  findInAccount(accountId: string, key: string): Promise<LicenseDoc | null> {
    return this.models.License.findOne({ key, account_id: accountId }, { outbox: 0 }).lean<LicenseDoc>().exec();
  }

  count(accountId: string): Promise<number> {
    return this.models.License.countDocuments({ account_id: accountId }).exec();
  }

  list(accountId: string, filter: { productId: string; customerEmail: string; status: Status | '' }, page: PageRequest | undefined, now: Date) {
    const byStatus: Record<Status, Record<string, unknown>> = {
      active: { status: 'active', $or: [{ grace_ends_at: null }, { grace_ends_at: { $gt: now } }] },
      expired: { status: 'active', grace_ends_at: { $lte: now } },
      suspended: { status: 'suspended' },
      revoked: { status: 'revoked' },
    };
    return listPage<LicenseDoc>(
      this.models.License,
      {
        account_id: accountId,
        ...(filter.productId ? { product_id: filter.productId } : {}),
        ...(filter.customerEmail ? { customer_email_lc: filter.customerEmail.trim().toLowerCase() } : {}),
        ...(filter.status ? byStatus[filter.status] : {}),
      },
      page,
    );
  }

  /** Writes a changed licence only if it is still as it was read (no lost update), with its event. */
  async replaceState(before: LicenseDoc, changes: Partial<LicenseDoc>, events: DomainEvent[]): Promise<boolean> {
    const res = await this.models.License.updateOne(
      { _id: before._id, status: before.status, expires_at: before.expires_at },
      { $set: { ...changes, ...withEvents(events) } },
    );
    return res.modifiedCount === 1;
  }

  /** Licences past expiry and grace whose license.expired was not yet published. */
  dueForExpiry(now: Date, limit: number): Promise<LicenseDoc[]> {
    return this.models.License.find({ status: 'active', expired_notified: { $ne: true }, grace_ends_at: { $lte: now } }, { outbox: 0 }).limit(limit).lean<LicenseDoc[]>().exec();
  }

  /** Marks one licence expired-and-published; false if another instance did first. */
  async markExpired(id: string, event: DomainEvent): Promise<boolean> {
    const res = await this.models.License.updateOne({ _id: id, expired_notified: { $ne: true } }, { $set: { expired_notified: true, ...withEvents([event]) } });
    return res.modifiedCount === 1;
  }

  // Activations

  findActivation(licenseId: string, fingerprint: string): Promise<ActivationDoc | null> {
    return this.models.Activation.findOne({ license_id: licenseId, fingerprint_key: fingerprint }, { outbox: 0 }).lean<ActivationDoc>().exec();
  }

  /** Inserts into the first free slot; null when every slot is taken. An existing activation of the fingerprint wins. */
  async activate(doc: Omit<ActivationDoc, 'slot_key' | 'outbox'>, maxActivations: number | null, events: DomainEvent[]): Promise<{ activation: ActivationDoc; created: boolean } | null> {
    const slots = maxActivations === null ? [doc._id] : Array.from({ length: maxActivations }, (_, i) => String(i + 1));
    for (const slot of slots) {
      try {
        const activation = { ...doc, slot_key: slot };
        await this.models.Activation.create({ ...activation, ...outboxOf(events) });
        return { activation, created: true };
      } catch (err) {
        if (!isDuplicate(err)) throw err;
        // Either the slot is taken (try the next) or this fingerprint was just activated by a concurrent retry.
        const existing = await this.findActivation(doc.license_id, doc.fingerprint);
        if (existing) return { activation: existing, created: false };
      }
    }
    return null;
  }

  listActivations(licenseId: string, page: PageRequest | undefined) {
    return listPage<ActivationDoc>(this.models.Activation, { license_id: licenseId, deactivated_at: null }, page);
  }

  countActivations(licenseId: string): Promise<number> {
    return this.models.Activation.countDocuments({ license_id: licenseId, deactivated_at: null }).exec();
  }

  /** Frees the slot and the fingerprint, keeping the record, with its event. */
  async deactivate(licenseId: string, id: string, at: Date, event: (a: ActivationDoc) => DomainEvent): Promise<ActivationDoc | null> {
    const current = await this.models.Activation.findOne({ _id: id, license_id: licenseId, deactivated_at: null }, { outbox: 0 }).lean<ActivationDoc>().exec();
    if (!current) return null;
    const after = { ...current, deactivated_at: at };
    const res = await this.models.Activation.updateOne(
      { _id: id, deactivated_at: null },
      { $set: { deactivated_at: at, slot_key: `freed:${id}`, fingerprint_key: `freed:${id}`, ...withEvents([event(after)]) } },
    );
    if (res.modifiedCount !== 1) return null;
    return after;
  }
}
