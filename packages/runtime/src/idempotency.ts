import { Schema, type Connection, type Model } from 'mongoose';
import { sha256 } from './digest';
import { AppError } from './errors';

/**
 * Idempotency-Key support (IETF httpapi draft, Stripe's semantics): the first
 * request with a key runs and its answer is stored for 24 h; the same key with
 * the same request returns that answer again; with a different request it is
 * 422; while the first is still running it is 409. Failed requests are
 * forgotten, so a client may retry them with the same key.
 */
export const IDEMPOTENCY_TTL_SECONDS = 24 * 3600;

interface IdempotencyRecord {
  _id: string;
  request_hash: string;
  state: 'in_flight' | 'done';
  /**
   * The first answer as JSON text: stored as a document, absent optional
   * fields would come back as null (the driver writes undefined as null) and
   * no longer encode as the same message.
   */
  response_json?: string;
  created_at: Date;
}

export function idempotencyModel(conn: Connection): Model<IdempotencyRecord> {
  const schema = new Schema<IdempotencyRecord>(
    {
      _id: { type: String },
      request_hash: { type: String, required: true },
      state: { type: String, required: true },
      response_json: { type: String },
      created_at: { type: Date, required: true, index: { expireAfterSeconds: IDEMPOTENCY_TTL_SECONDS } },
    },
    { versionKey: false, collection: 'idempotency_keys' },
  );
  return conn.models.IdempotencyKey ?? conn.model<IdempotencyRecord>('IdempotencyKey', schema);
}

export function requestHash(request: unknown): string {
  return sha256(JSON.stringify(request), 'hex');
}

const isDuplicate = (err: unknown) => (err as { code?: number })?.code === 11000;

export async function idempotent<T>(
  model: Model<IdempotencyRecord>,
  scope: string,
  key: string,
  request: unknown,
  run: () => Promise<T>,
  now = new Date(),
): Promise<T> {
  const _id = `${scope}:${key}`;
  const hash = requestHash(request);
  const expiredBefore = new Date(now.getTime() - IDEMPOTENCY_TTL_SECONDS * 1000);
  try {
    await model.create({ _id, request_hash: hash, state: 'in_flight', created_at: now });
  } catch (err) {
    if (!isDuplicate(err)) throw err;
    const existing = await model.findById(_id).lean();
    if (existing && existing.created_at < expiredBefore) {
      // Expired but not yet removed by the TTL monitor (FerretDB has none): take it over.
      const taken = await model.findOneAndUpdate(
        { _id, created_at: existing.created_at },
        { $set: { request_hash: hash, state: 'in_flight', created_at: now }, $unset: { response_json: '' } },
        { returnDocument: 'after' },
      );
      if (!taken) throw new AppError('conflict', 'a request with this Idempotency-Key is already in progress');
    } else if (!existing) {
      return idempotent(model, scope, key, request, run, now);
    } else if (existing.request_hash !== hash) {
      throw new AppError('idempotency_key_reused', 'this Idempotency-Key was already used with a different request');
    } else if (existing.state === 'in_flight') {
      throw new AppError('conflict', 'a request with this Idempotency-Key is already in progress; retry later');
    } else {
      return JSON.parse(existing.response_json ?? 'null') as T;
    }
  }
  try {
    const response = await run();
    await model.updateOne({ _id }, { $set: { state: 'done', response_json: JSON.stringify(response) } });
    return response;
  } catch (err) {
    await model.deleteOne({ _id, state: 'in_flight' }).catch(() => undefined);
    throw err;
  }
}
