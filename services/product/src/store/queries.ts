import type { Model } from 'mongoose';
import { listPage, outboxOf } from '@licensing/runtime';
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

  list(accountId: string, page: PageRequest | undefined) {
    return listPage<ProductDoc>(this.Product, { account_id: accountId }, page);
  }
}
