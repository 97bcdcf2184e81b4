import { randomBytes } from 'node:crypto';
import { Schema, type Connection, type Model } from 'mongoose';
import { sha256 } from '../security/digest';
import { AppError } from '../core/errors';
import { outsideAnyCall } from '../core/request-scope';

/**
 * Idempotency-Key support (IETF httpapi draft, Stripe's semantics): the first
 * request with a key runs and its answer is stored for 24 h; the same key with
 * the same request returns that answer again; with a different request it is
 * 422; while the first is still running it is 409. A request that failed may be
 * retried with the same key (and, like a first request, with another body).
 *
 * How it holds without transactions, on a store (FerretDB 1.x) whose updates are
 * read-modify-write without isolation, where only a unique insert is atomic:
 * - The first request claims the key by inserting its record (`_id` = scope:key).
 * - While its run is in progress the claim is a lease (IDEMPOTENCY_LEASE_MS),
 *   renewed every third of it; a record whose lease has run out belongs to no
 *   live run (its process died, or lost the store for a whole lease), and the
 *   next request with the key takes it over instead of answering 409 for 24 h.
 * - A takeover (of such a record, a failed one, or one older than 24 h) is
 *   decided by a unique insert: a marker named after the version of the record
 *   it replaces (`rev`). Of many requests taking over the same version one wins;
 *   the others get 409. The winner checks the record is still that version
 *   before it rewrites it, so a renewing owner is never overwritten.
 * - Every run of the key gets the same `result_id` (made once, at the first
 *   claim): what a run creates is stored under it, so a run repeated after a
 *   crash, a failure after the write, or an owner that was wrongly thought dead
 *   finds the earlier one's result instead of making a second (a duplicate `_id`).
 * - The bookkeeping (completion, failure, renewals) runs outside the caller's
 *   call scope: the caller's deadline bounds the run, never the record of it.
 */
export const IDEMPOTENCY_TTL_SECONDS = 24 * 3600;

/**
 * How long an in-flight record stays its run's without a renewal. A run renews
 * every third of it, so only a run that missed two renewals in a row (its
 * process died, or could not reach the store) loses its key to a retry. Longer
 * than any call's deadline (5 s at the gateway), short enough that a retry after
 * a crash waits seconds, not the 24 h of the answer.
 */
export const IDEMPOTENCY_LEASE_MS = 30_000;

type State = 'in_flight' | 'done' | 'failed' | 'takeover';

interface IdempotencyRecord {
  _id: string;
  request_hash: string;
  /** 'takeover': a marker (see takeOver), not a key's record. */
  state: State;
  /**
   * The first answer as JSON text: stored as a document, absent optional
   * fields would come back as null (the driver writes undefined as null) and
   * no longer encode as the same message.
   */
  response_json?: string;
  created_at: Date;
  /** The run that holds an in-flight record (random, one per run). */
  owner?: string;
  /** In flight: until when the owner holds it, unless it renews. */
  lease_until?: Date;
  /** Changes with every write of the record: a takeover names the version it replaces. */
  rev?: string;
  /** Given to every run of the key: the id of what the runs create ('' when the caller has none). */
  result_id?: string;
}

export function idempotencyModel(conn: Connection): Model<IdempotencyRecord> {
  const schema = new Schema<IdempotencyRecord>(
    {
      _id: { type: String },
      request_hash: { type: String, required: true },
      state: { type: String, required: true },
      response_json: { type: String },
      created_at: { type: Date, required: true, index: { expireAfterSeconds: IDEMPOTENCY_TTL_SECONDS } },
      owner: { type: String },
      lease_until: { type: Date },
      rev: { type: String },
      result_id: { type: String },
    },
    { versionKey: false, collection: 'idempotency_keys' },
  );
  return conn.models.IdempotencyKey ?? conn.model<IdempotencyRecord>('IdempotencyKey', schema);
}

export function requestHash(request: unknown): string {
  return sha256(JSON.stringify(request), 'hex');
}

/** What a run of an idempotent request is told. */
export interface IdempotentRun {
  /** The same for every run of this key and request: store what the run creates under it. */
  resultId: string;
  /** An earlier run of this key may have got as far as creating it (look for it first). */
  resumed: boolean;
}

export interface IdempotencyOptions {
  /** The service's clock (tests move it). */
  now?: Date;
  /** Makes the result id, once per key (e.g. a licence id); without it runs get ''. */
  resultId?: () => string;
  /** IDEMPOTENCY_LEASE_MS unless a test wants it shorter. */
  leaseMs?: number;
}

const isDuplicate = (err: unknown) => (err as { code?: number })?.code === 11000;
const token = () => randomBytes(12).toString('base64url');
const reused = () =>
  new AppError('idempotency_key_reused', 'this Idempotency-Key was already used with a different request');
const inProgress = () =>
  new AppError('conflict', 'a request with this Idempotency-Key is already in progress; retry later');

/** A marker's _id: a key's record id never holds a space (keys are printable ASCII without it). */
const markerId = (id: string, rev: string) => `${id} takeover ${rev}`;

/** Records written before leases existed: their version and lease, from what they have. */
const revOf = (r: IdempotencyRecord) => r.rev ?? `legacy-${r.state}-${new Date(r.created_at).getTime()}`;
const leaseEnd = (r: IdempotencyRecord, leaseMs: number) =>
  r.lease_until ? new Date(r.lease_until).getTime() : new Date(r.created_at).getTime() + leaseMs;

/** How often the final write of a run is tried again while the store is away (up to the lease's end). */
const SETTLE_RETRY_MS = 500;

/** Takeovers of one version whose taker died between marker and rewrite, before the key answers 409 until it expires. */
const MAX_MARKER_LINKS = 20;

type Claim<T> = { replay: T } | { run: IdempotentRun };

/** One request's claim on its key: who it is, what it asks and in whose clock. */
interface KeyClaim {
  model: Model<IdempotencyRecord>;
  _id: string;
  now: Date;
  leaseMs: number;
  hash: string;
  owner: string;
  resultId?: () => string;
}

/** The record this request writes when it claims the key. */
const claimedRecord = (c: KeyClaim, resultId: string): IdempotencyRecord => ({
  _id: c._id,
  request_hash: c.hash,
  state: 'in_flight',
  created_at: c.now,
  owner: c.owner,
  lease_until: new Date(c.now.getTime() + c.leaseMs),
  rev: c.owner,
  result_id: resultId,
});

/** Claims the key: a new record, a replay of the first answer, 409/422, or the takeover of a dead or failed run. */
async function claimKey<T>(c: KeyClaim): Promise<Claim<T>> {
  const { model, _id, now, leaseMs, hash } = c;
  for (let attempt = 0; attempt < 3; attempt++) {
    const fresh = claimedRecord(c, c.resultId?.() ?? '');
    try {
      await model.create(fresh);
      return { run: { resultId: fresh.result_id ?? '', resumed: false } };
    } catch (err) {
      if (!isDuplicate(err)) throw err;
    }
    const existing = await model.findById(_id).lean<IdempotencyRecord>();
    if (!existing) continue; // taken over and gone meanwhile (MongoDB's TTL monitor): claim afresh
    const expired = new Date(existing.created_at).getTime() <= now.getTime() - IDEMPOTENCY_TTL_SECONDS * 1000;
    const sameRequest = existing.request_hash === hash;
    if (!expired && existing.state === 'done') {
      if (!sameRequest) throw reused();
      return { replay: JSON.parse(existing.response_json ?? 'null') as T };
    }
    if (!expired && existing.state === 'in_flight' && leaseEnd(existing, leaseMs) > now.getTime()) {
      if (!sameRequest) throw reused();
      throw inProgress();
    }
    // Failed, in flight with no live owner, or older than 24 h: take it over. The same request
    // keeps the result id and the 24 h of the first (an earlier run may have created its result);
    // another request (a new body after a failure, or any after 24 h) starts afresh.
    const keep = sameRequest && !expired && !!existing.result_id;
    const next = claimedRecord(c, keep ? (existing.result_id as string) : (c.resultId?.() ?? ''));
    if (keep) next.created_at = existing.created_at;
    await takeOver(c, existing, next);
    return { run: { resultId: next.result_id ?? '', resumed: keep } };
  }
  throw inProgress();
}

/**
 * Replaces `existing` by `next` if this request wins the takeover of that version; else 409.
 * Outside the call's scope: a marker won must be followed by the rewrite, whatever the deadline.
 */
const takeOver = (
  { model, _id, now, leaseMs, hash }: KeyClaim,
  existing: IdempotencyRecord,
  next: IdempotencyRecord,
): Promise<void> =>
  outsideAnyCall(async () => {
    const rev = revOf(existing);
    // One marker per version decides among the requests taking it over. A marker whose taker died
    // before the rewrite (older than a lease, the record unchanged) passes the turn to the next link.
    let won = false;
    for (let link = markerId(_id, rev), n = 0; !won && n < MAX_MARKER_LINKS; link += '+', n++) {
      try {
        await model.create({ _id: link, request_hash: hash, state: 'takeover', created_at: now });
        won = true;
      } catch (err) {
        if (!isDuplicate(err)) throw err;
        const marker = await model.findById(link).lean<IdempotencyRecord>();
        if (marker && new Date(marker.created_at).getTime() > now.getTime() - leaseMs) throw inProgress();
      }
    }
    // It must still be the version we read: its owner may have renewed since.
    const current = won ? await model.findById(_id).lean<IdempotencyRecord>() : null;
    if (!current || revOf(current) !== rev) throw inProgress();
    await model.replaceOne({ _id }, next);
  });

/**
 * The record is ours from its claim on: renewed while the run lasts, and settled (how the run ended)
 * whatever the caller's deadline (outside its call scope, so the deadline plugin does not refuse the writes).
 */
function holdRecord({ model, _id, owner, leaseMs }: KeyClaim, clockNow: () => Date) {
  const mine = { _id, owner };
  // One write of the record at a time: on FerretDB a renewal racing the final write could put back
  // the in-flight record it read.
  let writing: Promise<boolean> = Promise.resolve(true);
  /** Queues a write of the record; resolves whether it was made. */
  const write = (update: Record<string, unknown>) => {
    writing = writing.then(() =>
      outsideAnyCall(() =>
        model
          .updateOne(mine, update)
          .exec()
          .then(
            () => true,
            () => false,
          ),
      ),
    );
    return writing;
  };
  const renew = () => write({ $set: { lease_until: new Date(clockNow().getTime() + leaseMs), rev: token() } });
  // A missed renewal is settled by the next one, or by the lease's end.
  const timer = outsideAnyCall(() => setInterval(renew, Math.max(1, Math.floor(leaseMs / 3))));
  timer.unref();
  const settle = async (set: Partial<IdempotencyRecord>) => {
    clearInterval(timer);
    const final = { $set: { ...set, rev: token() }, $unset: { lease_until: '' } };
    if (await write(final)) return;
    // The store is away: the caller gets its answer now, and the record is written as soon as the store
    // is back (tried every SETTLE_RETRY_MS), so a retry need not wait for the lease to run out. Past the
    // lease the record is no longer this run's to write: the next request takes it over with the same
    // result id and finds what this run created.
    const until = Date.now() + leaseMs;
    const again = () =>
      void write(final).then((made) => {
        if (!made && Date.now() + SETTLE_RETRY_MS < until) later();
      });
    const later = () => outsideAnyCall(() => setTimeout(again, SETTLE_RETRY_MS)).unref();
    later();
  };
  return { settle };
}

export async function idempotent<T>(
  model: Model<IdempotencyRecord>,
  scope: string,
  key: string,
  request: unknown,
  run: (attempt: IdempotentRun) => Promise<T>,
  opts: IdempotencyOptions = {},
): Promise<T> {
  const now = opts.now ?? new Date();
  // Leases are in the caller's clock (tests move it); renewals count on from `now` in real time.
  const skew = now.getTime() - Date.now();
  const claim: KeyClaim = {
    model,
    _id: `${scope}:${key}`,
    now,
    leaseMs: opts.leaseMs ?? IDEMPOTENCY_LEASE_MS,
    hash: requestHash(request),
    owner: token(),
    resultId: opts.resultId,
  };
  const outcome = await claimKey<T>(claim);
  if ('replay' in outcome) return outcome.replay;

  const held = holdRecord(claim, () => new Date(Date.now() + skew));
  let response: T;
  try {
    response = await run(outcome.run);
  } catch (err) {
    await held.settle({ state: 'failed' });
    throw err;
  }
  await held.settle({ state: 'done', response_json: JSON.stringify(response) });
  return response;
}
