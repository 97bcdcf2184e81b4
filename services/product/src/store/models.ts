import { Schema, type Connection, type Model } from 'mongoose';
import { outboxFields } from '@licensing/runtime';
import { DEFAULT_POLICY, type DomainEvent, type StoredPolicy } from '@licensing/proto';
import type { StoredPrice } from '../domain/price';

export interface ProductDoc {
  _id: string;
  account_id: string;
  name: string;
  description: string;
  policy: StoredPolicy;
  price: StoredPrice | null;
  /** Whether a purchase e-mails the buyer their key (absent on older products: true). */
  email_on_purchase?: boolean;
  created_at: Date;
  /** When it was archived (it sells and issues nothing new); absent or null while on sale. */
  archived_at?: Date | null;
  outbox?: Record<string, DomainEvent>;
}

/**
 * A product its account deleted: carries its product.deleted (the audit log's) through the outbox (the
 * product's own document, which would carry it, is gone), and is the deletion's claim (its _id is the
 * product's, so a deletion finished by a second call publishes no second event).
 */
export interface ProductDeletionDoc {
  _id: string;
  account_id: string;
  created_at: Date;
  outbox?: Record<string, DomainEvent>;
}

export function productModel(conn: Connection): Model<ProductDoc> {
  const schema = new Schema<ProductDoc>(
    {
      _id: String,
      account_id: { type: String, required: true },
      name: { type: String, required: true },
      description: { type: String, default: '' },
      // Stored as given; older products without one read as the default policy.
      policy: { type: Object, default: () => ({ ...DEFAULT_POLICY }) },
      price: { type: Object, default: null },
      email_on_purchase: { type: Boolean, default: true },
      created_at: { type: Date, required: true },
      archived_at: { type: Date, default: null },
      ...outboxFields,
    },
    { versionKey: false, collection: 'products' },
  );
  // Every query is scoped to an account and lists newest first.
  schema.index({ account_id: 1, _id: -1 });
  return conn.model<ProductDoc>('Product', schema);
}

export function productDeletionModel(conn: Connection): Model<ProductDeletionDoc> {
  const schema = new Schema<ProductDeletionDoc>(
    {
      _id: String,
      account_id: { type: String, required: true },
      created_at: { type: Date, required: true },
      ...outboxFields,
    },
    { versionKey: false, collection: 'product_deletions' },
  );
  return conn.model<ProductDeletionDoc>('ProductDeletion', schema);
}
