import { outboxOf, withEvents } from '@licensing/runtime';
import type { DomainEvent } from '@licensing/proto';
import type { ActivationDoc, ErasureDoc, LicenseDeletionDoc, LicenseDoc } from './models';
import { isDuplicate, QUERY_MAX_MS } from './store-base';
import { ActivationQueries } from './activation-queries';

/** The queries of erasing a customer's e-mail and of deleting a licence with its machines. */
export class ErasureQueries extends ActivationQueries {
  /** The account's licences of this (lower-cased) e-mail, by id after `after`: the customer_email_lc index. */
  licensesOfCustomer(accountId: string, emailLc: string, after: string, limit: number): Promise<LicenseDoc[]> {
    const filter: Record<string, unknown> = { account_id: accountId, customer_email_lc: emailLc };
    if (after) filter._id = { $gt: after };
    return this.models.License.find(filter, { outbox: 0 })
      .sort({ _id: 1 })
      .limit(limit)
      .maxTimeMS(QUERY_MAX_MS)
      .lean<LicenseDoc[]>()
      .exec();
  }

  /** A licence's activations (active or freed) whose name matches `pattern` (a case-insensitive regex source). */
  activationsNamed(licenseId: string, pattern: string): Promise<Pick<ActivationDoc, '_id' | 'name'>[]> {
    return this.models.Activation.find({ license_id: licenseId, name: { $regex: pattern, $options: 'i' } }, { name: 1 })
      .maxTimeMS(QUERY_MAX_MS)
      .lean<Pick<ActivationDoc, '_id' | 'name'>[]>()
      .exec();
  }

  /** Renames an activation if its name is still `from` (a concurrent rename is not overwritten). */
  async renameActivation(id: string, from: string, to: string): Promise<void> {
    await this.models.Activation.updateOne({ _id: id, name: from }, { $set: { name: to } });
  }

  /**
   * Gives a licence the placeholder as its customer e-mail, with its license.updated, only if it still
   * holds the e-mail that was read (a second erasure, or a change meanwhile, leaves it alone).
   */
  async replaceCustomerEmail(before: LicenseDoc, placeholder: string, events: DomainEvent[]): Promise<boolean> {
    const res = await this.models.License.updateOne(
      { _id: before._id, customer_email_lc: before.customer_email_lc },
      { $set: { customer_email: placeholder, customer_email_lc: placeholder.toLowerCase(), ...withEvents(events) } },
    );
    return res.modifiedCount === 1;
  }

  /**
   * Records the deletion of a licence with its events (once: a second call for the same licence, a retry
   * after a crash, records nothing and says false).
   */
  async insertDeletion(doc: Omit<LicenseDeletionDoc, 'outbox'>, events: DomainEvent[]): Promise<boolean> {
    try {
      await this.models.LicenseDeletion.create({ ...doc, ...outboxOf(events) });
      return true;
    } catch (err) {
      if (isDuplicate(err)) return false;
      throw err;
    }
  }

  /** Deletes a licence with its activations and their sightings, the licence last (a retry finds it until then). */
  async deleteLicense(licenseId: string): Promise<void> {
    await this.models.Activation.deleteMany({ license_id: licenseId });
    await this.models.Sighting.deleteMany({ license_id: licenseId });
    await this.models.License.deleteOne({ _id: licenseId });
  }

  async insertErasure(doc: Omit<ErasureDoc, 'outbox'>, events: DomainEvent[]): Promise<void> {
    await this.models.Erasure.create({ ...doc, ...outboxOf(events) });
  }
}
