import { Schema, type Connection, type Model } from 'mongoose';
import { IDEMPOTENCY_TTL_SECONDS } from '@licensing/runtime';

/**
 * An Idempotency-Key of an account as the gateway's POSTs use it: claimed by one run of a request (a
 * unique insert, the one write FerretDB applies atomically), then the answer that run gave.
 */
export interface RequestKeyDoc {
  /** `${account_id}:${key}` */
  _id: string;
  request_hash: string;
  state: 'running' | 'done';
  /** The run holding the key while it is running (random). */
  run: string;
  /** Running: until when the run holds it unless it renews (a run whose gateway died frees it so). */
  lease_until: Date;
  created_at: Date;
  /** Done: the answer, given again to the same request. */
  status?: number;
  body_json?: string;
  location?: string;
}

export function requestKeyModels(conn: Connection) {
  const schema = new Schema<RequestKeyDoc>(
    {
      _id: String,
      request_hash: { type: String, required: true },
      state: { type: String, required: true },
      run: { type: String, required: true },
      lease_until: { type: Date, required: true },
      // Kept 24 hours (MongoDB's TTL monitor; a claim also treats an older record as absent).
      created_at: { type: Date, required: true, index: { expireAfterSeconds: IDEMPOTENCY_TTL_SECONDS } },
      status: Number,
      body_json: String,
      location: String,
    },
    { versionKey: false, collection: 'request_keys' },
  );
  return { RequestKey: conn.model<RequestKeyDoc>('RequestKey', schema) as Model<RequestKeyDoc> };
}

const isDuplicate = (err: unknown) => (err as { code?: number })?.code === 11000;

export class RequestKeyStore {
  constructor(private readonly models: ReturnType<typeof requestKeyModels>) {}

  /** Inserts the claim; false when a record of the key exists. */
  async insert(doc: RequestKeyDoc): Promise<boolean> {
    try {
      await this.models.RequestKey.create(doc);
      return true;
    } catch (err) {
      if (isDuplicate(err)) return false;
      throw err;
    }
  }

  find(id: string): Promise<RequestKeyDoc | null> {
    return this.models.RequestKey.findOne({ _id: id }).lean<RequestKeyDoc>().exec();
  }

  /** Removes the record only while it is the one read (that run's, in that state). */
  async remove(doc: Pick<RequestKeyDoc, '_id' | 'run' | 'state'>): Promise<void> {
    await this.models.RequestKey.deleteOne({ _id: doc._id, run: doc.run, state: doc.state });
  }

  /** Changes the record only while that run holds it running. */
  async updateRunning(id: string, run: string, set: Partial<RequestKeyDoc>): Promise<boolean> {
    const res = await this.models.RequestKey.updateOne({ _id: id, run, state: 'running' }, { $set: set });
    return res.matchedCount === 1;
  }
}
