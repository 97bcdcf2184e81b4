import type { Model } from 'mongoose';
import { outboxOf } from '@licensing/runtime';
import type { DomainEvent } from '@licensing/proto';
import type { ProductDeletionDoc } from './models';

const isDuplicateKey = (err: unknown) => (err as { code?: number })?.code === 11000;

/** The records of deleted products, each carrying its product.deleted through the outbox. */
export class ProductDeletionStore {
  constructor(readonly Deletion: Model<ProductDeletionDoc>) {}

  /** Stores the deletion with its events; false if it was stored already (a deletion cut short, finished now). */
  async insert(doc: Omit<ProductDeletionDoc, 'outbox'>, events: DomainEvent[]): Promise<boolean> {
    try {
      await this.Deletion.create({ ...doc, ...outboxOf(events) });
      return true;
    } catch (err) {
      if (isDuplicateKey(err)) return false;
      throw err;
    }
  }
}
