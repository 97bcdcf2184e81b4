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

  /** Whether the account has `n` products or more (reads at most n ids, on the account's index). */
  async hasAtLeast(accountId: string, n: number): Promise<boolean> {
    const ids = await this.Product.find({ account_id: accountId }, { _id: 1 }).limit(n).lean().exec();
    return ids.length >= n;
  }

  list(accountId: string, page: PageRequest | undefined) {
    return listPage<ProductDoc>(this.Product, { account_id: accountId }, page);
  }
}
