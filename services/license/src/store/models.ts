import { Schema, type Connection, type Model } from 'mongoose';
import { idempotencyModel, outboxFields } from '@licensing/runtime';
import type { DomainEvent } from '@licensing/proto';

export interface LicenseDoc {
  _id: string;
  account_id: string;
  product_id: string;
  /** Canonical hyphenated form; unique across the whole system. */
  key: string;
  customer_email: string;
  /** Lower-cased copy for case-insensitive search. */
  customer_email_lc: string;
  status: string;
  expires_at: Date | null;
  created_at: Date;
  outbox?: Record<string, DomainEvent>;
}

export function licenseModels(conn: Connection) {
  const schema = new Schema<LicenseDoc>(
    {
      _id: String,
      account_id: { type: String, required: true },
      product_id: { type: String, required: true },
      key: { type: String, required: true, unique: true },
      customer_email: { type: String, required: true },
      customer_email_lc: { type: String, required: true },
      status: { type: String, required: true },
      expires_at: { type: Date, default: null },
      created_at: { type: Date, required: true },
      ...outboxFields,
    },
    { versionKey: false, collection: 'licenses' },
  );
  schema.index({ account_id: 1, _id: -1 });
  schema.index({ account_id: 1, product_id: 1, _id: -1 });
  schema.index({ account_id: 1, customer_email_lc: 1, _id: -1 });
  return { License: conn.model<LicenseDoc>('License', schema) as Model<LicenseDoc>, Idempotency: idempotencyModel(conn) };
}

export type LicenseModels = ReturnType<typeof licenseModels>;
