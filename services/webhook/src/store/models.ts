import { Schema, type Connection, type Model } from 'mongoose';
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
  created_at: Date;
  deleted_at: Date | null;
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
      created_at: { type: Date, required: true },
      deleted_at: { type: Date, default: null },
    },
    { versionKey: false, collection: 'webhook_endpoints' },
  );
  schema.index({ account_id: 1, _id: -1 });
  return conn.model<EndpointDoc>('WebhookEndpoint', schema);
}
