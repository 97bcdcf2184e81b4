import { Schema, type Connection, type Model } from 'mongoose';
import { bulkUpdate, deleteAllBefore, listPage, withSchemaVersion } from '@licensing/runtime';
import { deliveryStatuses, type DeliveryStatus, type PageRequest } from '@licensing/proto';

export interface DeliveryDoc {
  /** dlv_<event id>_<endpoint id>: one delivery per (event, endpoint), however often the event arrives. */
  _id: string;
  account_id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  /** The exact body that is signed and sent. */
  body: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  last_latency_ms: number | null;
  created_at: Date;
  delivered_at: Date | null;
  /** The W3C trace context of the fan-out that recorded it, when traced: each attempt continues that trace. */
  traceparent?: string;
}

export function deliveryModel(conn: Connection): Model<DeliveryDoc> {
  const schema = new Schema<DeliveryDoc>(
    {
      _id: String,
      account_id: { type: String, required: true },
      endpoint_id: { type: String, required: true },
      event_id: { type: String, required: true },
      event_type: { type: String, required: true },
      body: { type: String, required: true },
      status: { type: String, required: true, enum: deliveryStatuses },
      attempts: { type: Number, default: 0 },
      next_attempt_at: { type: Date, default: null },
      last_status_code: { type: Number, default: null },
      last_error: { type: String, default: null },
      last_latency_ms: { type: Number, default: null },
      created_at: { type: Date, required: true },
      delivered_at: { type: Date, default: null },
      traceparent: { type: String, default: undefined },
    },
    { versionKey: false, collection: 'webhook_deliveries' },
  );
  schema.index({ status: 1, next_attempt_at: 1 });
  schema.index({ endpoint_id: 1, _id: -1 });
  schema.index({ created_at: 1 }); // retention: the finished deliveries older than the window
  schema.index({ account_id: 1, _id: 1 }); // the erasure of a customer's e-mail walks an account's deliveries in batches
  return conn.model<DeliveryDoc>('WebhookDelivery', schema);
}

/** Deliveries removed per statement by the retention. */
const PRUNE_BATCH = 1000;

/** No query of the dispatcher runs longer than this on the server. */
const QUERY_MAX_MS = 5000;

const isDuplicate = (err: unknown) => (err as { code?: number })?.code === 11000;

export class DeliveryStore {
  constructor(readonly Delivery: Model<DeliveryDoc>) {}

  /** Records a delivery once; a second arrival of the same event is ignored. */
  async record(doc: DeliveryDoc): Promise<void> {
    try {
      await this.Delivery.create(doc);
    } catch (err) {
      if (!isDuplicate(err)) throw err;
    }
  }

  /**
   * Records new deliveries in one insert (unordered: one that exists already does not stop the
   * others); those recorded before (an event that arrived again) are left as they are. Answers the
   * ones this call added: only those may be sent as new.
   */
  async recordAll(docs: DeliveryDoc[]): Promise<DeliveryDoc[]> {
    if (!docs.length) return [];
    try {
      // lean: the documents are made whole by the fan-out; mongoose's casting and validation per
      // document would cost more than the insert. So stamped here, as mongoose would (migrations.ts).
      await this.Delivery.insertMany(
        docs.map((d) => withSchemaVersion(this.Delivery, d)),
        { ordered: false, lean: true },
      );
      return docs;
    } catch (err) {
      const writeErrors = (err as { writeErrors?: { index: number; code?: number }[] }).writeErrors;
      if (!writeErrors?.length || !writeErrors.every(isDuplicate)) throw err;
      const existing = new Set(writeErrors.map((e) => e.index));
      return docs.filter((_, i) => !existing.has(i));
    }
  }

  /** Several deliveries' changes in one round trip (each a $set by _id, as update() makes it). */
  async updateAll(changes: { id: string; changes: Partial<DeliveryDoc> }[]): Promise<void> {
    if (!changes.length) return;
    // A few statements per command (runtime's bulkUpdate: FerretDB stalls on an update command of many).
    await bulkUpdate(
      this.Delivery,
      changes.map((c) => ({ updateOne: { filter: { _id: c.id }, update: { $set: c.changes } } })),
    );
  }

  /** Due deliveries, oldest first, leaving out endpoints that already have one in flight. */
  due(now: Date, limit: number, busyEndpoints: string[] = []): Promise<DeliveryDoc[]> {
    const filter: Record<string, unknown> = { status: 'pending', next_attempt_at: { $lte: now } };
    if (busyEndpoints.length) filter.endpoint_id = { $nin: busyEndpoints };
    return this.Delivery.find(filter)
      .sort({ next_attempt_at: 1 })
      .limit(limit)
      .maxTimeMS(QUERY_MAX_MS)
      .lean<DeliveryDoc[]>()
      .exec();
  }

  /**
   * Retention: finished deliveries (delivered or failed) created before `before` are removed, in
   * batches on the created_at index (deleteAllBefore: one statement per batch over FerretDB's PostgreSQL).
   */
  async prune(before: Date): Promise<number> {
    return deleteAllBefore(this.Delivery, 'created_at', before, PRUNE_BATCH, {
      $or: [{ status: 'delivered' }, { status: 'failed' }],
    });
  }

  async update(id: string, changes: Partial<DeliveryDoc>): Promise<void> {
    await this.Delivery.updateOne({ _id: id }, { $set: changes });
  }

  find(endpointId: string, id: string): Promise<DeliveryDoc | null> {
    return this.Delivery.findOne({ _id: id, endpoint_id: endpointId }).lean<DeliveryDoc>().exec();
  }

  list(endpointId: string, page: PageRequest | undefined) {
    return listPage<DeliveryDoc>(this.Delivery, { endpoint_id: endpointId }, page);
  }

  /**
   * Up to `limit` of the account's deliveries after `after` (by id) whose body matches `pattern`
   * (case-insensitive): one bounded read on (account_id, _id). Also the last id it looked at, so the
   * next batch starts there even when few matched.
   */
  async bodiesMatching(
    accountId: string,
    pattern: string,
    after: string,
    limit: number,
  ): Promise<{ matches: Pick<DeliveryDoc, '_id' | 'body'>[]; last: string | null }> {
    const range = after ? { _id: { $gt: after } } : {};
    // The window of ids first (index only), then the matching bodies within it: each batch costs at
    // most `limit` entries of the index, however rare the e-mail is.
    const window = await this.Delivery.find({ account_id: accountId, ...range }, { _id: 1 })
      .sort({ _id: 1 })
      .limit(limit)
      .maxTimeMS(QUERY_MAX_MS)
      .lean<{ _id: string }[]>()
      .exec();
    if (!window.length) return { matches: [], last: null };
    const last = window[window.length - 1]._id;
    const matches = await this.Delivery.find(
      {
        account_id: accountId,
        _id: { ...(after ? { $gt: after } : {}), $lte: last },
        body: { $regex: pattern, $options: 'i' },
      },
      { body: 1 },
    )
      .maxTimeMS(QUERY_MAX_MS)
      .lean<Pick<DeliveryDoc, '_id' | 'body'>[]>()
      .exec();
    return { matches, last: window.length < limit ? null : last };
  }

  /** Sets a delivery's body if it is still `from` (the dispatcher only ever writes its status fields). */
  async replaceBody(id: string, from: string, to: string): Promise<boolean> {
    const res = await this.Delivery.updateOne({ _id: id, body: from }, { $set: { body: to } });
    return res.modifiedCount === 1;
  }
}
