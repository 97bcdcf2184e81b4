import { Schema, type Connection, type Model } from 'mongoose';
import { idempotencyModel, outboxFields } from '@licensing/runtime';
import type { DomainEvent } from '@licensing/proto';
import type { SessionStatus } from '../domain/session';

export interface SessionDoc {
  _id: string;
  account_id: string;
  product_id: string;
  /** Shown on the hosted page; copied at creation so the page needs no second service. */
  product_name: string;
  status: SessionStatus;
  amount: number;
  currency: string;
  customer_email: string;
  success_url: string;
  cancel_url: string;
  metadata: Record<string, string>;
  expires_at: Date;
  created_at: Date;
  license_key: string | null;
  payment_id: string | null;
  paid_at: Date | null;
  outbox?: Record<string, DomainEvent>;
}

export function checkoutModels(conn: Connection) {
  const schema = new Schema<SessionDoc>(
    {
      _id: String,
      account_id: { type: String, required: true },
      product_id: { type: String, required: true },
      product_name: { type: String, default: '' },
      status: { type: String, required: true },
      amount: { type: Number, required: true },
      currency: { type: String, required: true },
      customer_email: { type: String, default: '' },
      success_url: { type: String, required: true },
      cancel_url: { type: String, default: '' },
      metadata: { type: Object, default: () => ({}) },
      expires_at: { type: Date, required: true },
      created_at: { type: Date, required: true },
      license_key: { type: String, default: null },
      payment_id: { type: String, default: null },
      paid_at: { type: Date, default: null },
      ...outboxFields,
    },
    { versionKey: false, collection: 'checkout_sessions' },
  );
  schema.index({ account_id: 1, _id: -1 });
  schema.index({ status: 1, expires_at: 1 });
  schema.index({ status: 1, license_key: 1 });
  return { Session: conn.model<SessionDoc>('CheckoutSession', schema) as Model<SessionDoc>, Idempotency: idempotencyModel(conn) };
}

export type CheckoutModels = ReturnType<typeof checkoutModels>;
