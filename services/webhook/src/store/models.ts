import { Schema, type Connection, type Model } from 'mongoose';
import { outboxFields } from '@licensing/runtime';
import type { DomainEvent } from '@licensing/proto';
import type { StoredSecret } from '../domain/endpoint';

export interface EndpointDoc {
  _id: string;
  account_id: string;
  url: string;
  events: string[];
  description: string;
  enabled: boolean;
  /** Newest first; sealed with WEBHOOK_SECRET_KEY (they must be usable to sign, so not hashed). */
  secrets: StoredSecret[];
  /** Set at the first failed attempt after a success; five days of only failures disable the endpoint. */
  failing_since: Date | null;
  created_at: Date;
  deleted_at: Date | null;
  /** "1".."WEBHOOK_MAX_ENDPOINTS" while the endpoint exists, unique per account (the cap holds under concurrency); "freed:<id>" once deleted. */
  slot_key: string;
  outbox?: Record<string, DomainEvent>;
}

export function endpointModel(conn: Connection): Model<EndpointDoc> {
  const schema = new Schema<EndpointDoc>(
    {
      _id: String,
      account_id: { type: String, required: true },
      url: { type: String, required: true },
      events: { type: [String], required: true },
      description: { type: String, default: '' },
      enabled: { type: Boolean, default: true },
      secrets: { type: [Object], required: true },
      failing_since: { type: Date, default: null },
      created_at: { type: Date, required: true },
      deleted_at: { type: Date, default: null },
      slot_key: { type: String, required: true },
      ...outboxFields,
    },
    { versionKey: false, collection: 'webhook_endpoints' },
  );
  schema.index({ account_id: 1, _id: -1 });
  schema.index({ account_id: 1, slot_key: 1 }, { unique: true });
  return conn.model<EndpointDoc>('WebhookEndpoint', schema);
}
