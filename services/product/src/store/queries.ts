import type { Model } from 'mongoose';
import { listPage, outboxOf, withEvents } from '@licensing/runtime';
import type { DomainEvent, PageRequest } from '@licensing/proto';
import type { ProductDoc } from './models';

export class ProductStore {
  constructor(readonly Product: Model<ProductDoc>) {}

  async insert(doc: Omit<ProductDoc, 'outbox'>, events: DomainEvent[]): Promise<void> {
    await this.Product.create({ ...doc, ...outboxOf(events) });
  }

  /** Scoped by account: another account's product is simply not found. */
  find(accountId: string, id: string): Promise<ProductDoc | null> {
    return this.Product.findOne({ _id: id, account_id: accountId }, { outbox: 0 }).lean<ProductDoc>().exec();
  }

  /** Applies the changes and records the event in the same write; null if not in this account. */
  async update(
    accountId: string,
    id: string,
    changes: Partial<Pick<ProductDoc, 'name' | 'description' | 'policy' | 'price'>>,
    event: (after: ProductDoc) => DomainEvent,
  ): Promise<ProductDoc | null> {
    const current = await this.find(accountId, id);
    if (!current) return null;
    const after = { ...current, ...changes };
    await this.Product.updateOne(
      { _id: id, account_id: accountId },
      { $set: { ...changes, ...withEvents([event(after)]) } },
    );
    return after;
  }

  /**
   * Archives or unarchives with the change's events in the same write, only if the product is still as
   * it was read (archived or not, at the same moment): false if another request changed it meanwhile.
   */
  async changeState(
    current: Pick<ProductDoc, '_id' | 'account_id' | 'archived_at'>,
    changes: Pick<ProductDoc, 'archived_at'>,
    events: DomainEvent[],
  ): Promise<boolean> {
    const res = await this.Product.updateOne(
      { _id: current._id, account_id: current.account_id, archived_at: current.archived_at ?? null },
      { $set: { ...changes, ...withEvents(events) } },
    );
    return res.modifiedCount === 1;
  }

  /** Removes the product; false if it was not there (removed by another request). */
  async remove(accountId: string, id: string): Promise<boolean> {
    const res = await this.Product.deleteOne({ _id: id, account_id: accountId });
    return res.deletedCount === 1;
  }

  /** Whether the account has `n` products or more (reads at most n ids, on the account's index). */
  async hasAtLeast(accountId: string, n: number): Promise<boolean> {
    const ids = await this.Product.find({ account_id: accountId }, { _id: 1 }).limit(n).lean().exec();
    return ids.length >= n;
  }

  list(accountId: string, page: PageRequest | undefined) {
    return listPage<ProductDoc>(this.Product, { account_id: accountId }, page);
  }
}
