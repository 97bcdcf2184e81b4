import { countMatching, listPage, outboxOf, withEvents } from '@licensing/runtime';
import type { DomainEvent, PageRequest, Status } from '@licensing/proto';
import { ErasureQueries } from './erasure-queries';
import type { LicenseDoc } from './models';
import { QUERY_MAX_MS } from './store-base';

export type { Seat } from './activation-queries';

// Everything but the outbox: the validation hot path reads one document.
const VALIDATION_FIELDS = { outbox: 0 };

/**
 * The licence service's store: the licences' own reads and writes here, the rest by subject in the
 * files of this folder (expiry-queries.ts, activation-queries.ts, erasure-queries.ts; store-base.ts
 * says how they chain).
 */
export class LicenseStore extends ErasureQueries {
  async insert(doc: Omit<LicenseDoc, 'outbox'>, events: DomainEvent[]): Promise<void> {
    // Through mongoose, not the driver: a raw insertOne (tried to save CPU) once made a restarted
    // webhook service lose the deliveries of licences issued meanwhile (through the whole system, the
    // outbox included); the cause was not found, so the mongoose path stays.
    await this.models.License.create({ ...doc, ...outboxOf(events) });
  }

  /** By id, in one account (another account's is null). */
  findIdInAccount(accountId: string, id: string): Promise<LicenseDoc | null> {
    return this.models.License.findOne({ _id: id, account_id: accountId }, { outbox: 0 }).lean<LicenseDoc>().exec();
  }

  /** One read on the unique key index; account scoping is checked by the caller. */
  findByKey(key: string): Promise<LicenseDoc | null> {
    return this.models.License.findOne({ key }, VALIDATION_FIELDS).lean<LicenseDoc>().exec();
  }

  findInAccount(accountId: string, key: string): Promise<LicenseDoc | null> {
    return this.models.License.findOne({ key, account_id: accountId }, { outbox: 0 }).lean<LicenseDoc>().exec();
  }

  count(accountId: string): Promise<number> {
    return countMatching(this.models.License, { account_id: accountId });
  }

  list(
    accountId: string,
    filter: { productId: string; customerEmail: string; status: Status | '' },
    page: PageRequest | undefined,
    now: Date,
  ) {
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

  /** Whether the account has a licence of this (lower-cased) e-mail: one read of the customer_email_lc index. */
  async holdsLicences(accountId: string, emailLc: string): Promise<boolean> {
    const one = await this.models.License.findOne({ account_id: accountId, customer_email_lc: emailLc }, { _id: 1 })
      .maxTimeMS(QUERY_MAX_MS)
      .lean<{ _id: string }>()
      .exec();
    return one !== null;
  }

  /** Writes a changed licence only if it is still as it was read (no lost update), with its event. */
  async replaceState(before: LicenseDoc, changes: Partial<LicenseDoc>, events: DomainEvent[]): Promise<boolean> {
    const res = await this.models.License.updateOne(
      { _id: before._id, status: before.status, expires_at: before.expires_at },
      { $set: { ...changes, ...withEvents(events) } },
    );
    return res.modifiedCount === 1;
  }

  /**
   * Gives a licence its new key (and replaced keys) with license.rerolled, only if it still has the key
   * it was read with. A new key another licence holds is the unique index's duplicate error (thrown).
   */
  async replaceKey(before: LicenseDoc, changes: Partial<LicenseDoc>, events: DomainEvent[]): Promise<boolean> {
    const res = await this.models.License.updateOne(
      { _id: before._id, key: before.key },
      { $set: { ...changes, ...withEvents(events) } },
    );
    return res.modifiedCount === 1;
  }
}
