import { Schema, type Connection, type Model } from 'mongoose';

/**
 * One lease of one endpoint's deliveries: whoever holds the newest epoch of an
 * endpoint may send to it, until `expires_at`. A new epoch is only ever made by
 * inserting its document, and `_id` names the endpoint and the epoch, so of two
 * instances that try to make the same epoch exactly one succeeds.
 */
export interface LeaseDoc {
  /** `<endpoint id>:<epoch>`. */
  _id: string;
  endpoint_id: string;
  epoch: number;
  /** The dispatcher instance that made this epoch (for logs and for the reader's curiosity; ownership is the epoch). */
  holder: string;
  expires_at: Date;
}

export function leaseModel(conn: Connection): Model<LeaseDoc> {
  const schema = new Schema<LeaseDoc>(
    {
      _id: String,
      endpoint_id: { type: String, required: true },
      epoch: { type: Number, required: true },
      holder: { type: String, required: true },
      expires_at: { type: Date, required: true },
    },
    { versionKey: false, collection: 'webhook_endpoint_leases' },
  );
  schema.index({ endpoint_id: 1, epoch: -1 });
  return conn.model<LeaseDoc>('WebhookEndpointLease', schema);
}

const isDuplicate = (err: unknown) => (err as { code?: number })?.code === 11000;

/**
 * Why this holds on FerretDB 1.x as well as on MongoDB: FerretDB applies an
 * update as read-modify-write without isolation (two conditional updates can
 * both "win"), but it enforces the unique `_id` of an insert. So a lease changes
 * hands only by inserting the next epoch's document (`claim`): two instances
 * that read the same newest epoch both try to insert the one after it, and one
 * of them gets a duplicate-key error. Nothing ever deletes the newest epoch of
 * an endpoint (`forgetBefore` removes only epochs below one its caller just
 * confirmed as newest), so epochs only grow, and "my epoch is the newest" read
 * after my insert means nobody made a later one. The one update (`release`)
 * touches only the holder's own document, which nobody else writes.
 */
export class LeaseStore {
  constructor(readonly Lease: Model<LeaseDoc>) {}

  /** The endpoint's newest epoch, or null if it never had a lease. */
  newest(endpointId: string): Promise<LeaseDoc | null> {
    return this.Lease.findOne({ endpoint_id: endpointId }).sort({ epoch: -1 }).lean<LeaseDoc>().exec();
  }

  /** Inserts the epoch's document; false if that epoch exists already (another instance made it). */
  async claim(doc: LeaseDoc): Promise<boolean> {
    try {
      await this.Lease.create(doc);
      return true;
    } catch (err) {
      if (isDuplicate(err)) return false;
      throw err;
    }
  }

  /** Removes the endpoint's epochs below `epoch` (the caller confirmed `epoch` as the newest). */
  async forgetBefore(endpointId: string, epoch: number): Promise<void> {
    await this.Lease.deleteMany({ endpoint_id: endpointId, epoch: { $lt: epoch } });
  }

  /** Ends the holder's own epoch now, so another instance may take the endpoint at once. */
  async release(id: string, at: Date): Promise<void> {
    await this.Lease.updateOne({ _id: id }, { $set: { expires_at: at } });
  }
}

export const leaseId = (endpointId: string, epoch: number) => `${endpointId}:${epoch}`;
