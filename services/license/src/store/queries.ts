import { listPage, outboxOf } from '@licensing/runtime';
import type { DomainEvent, PageRequest } from '@licensing/proto';
import type { LicenseDoc, LicenseModels } from './models';

// The fields the validation hot path needs; nothing else is read there.
const VALIDATION_FIELDS = { account_id: 1, product_id: 1, key: 1, customer_email: 1, status: 1, expires_at: 1, created_at: 1 };

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

  list(accountId: string, filter: { productId: string; customerEmail: string }, page: PageRequest | undefined) {
    return listPage<LicenseDoc>(
      this.models.License,
      {
        account_id: accountId,
        ...(filter.productId ? { product_id: filter.productId } : {}),
        ...(filter.customerEmail ? { customer_email_lc: filter.customerEmail.trim().toLowerCase() } : {}),
      },
      page,
    );
  }
}
