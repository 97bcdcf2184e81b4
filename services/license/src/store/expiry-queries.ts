import { postgresPagesOf, recordShape, withEvents } from '@licensing/runtime';
import type { DomainEvent } from '@licensing/proto';
import { bucketOf } from '../domain/expiry';
import { HOUR_MS } from '../domain/stats';
import type { LicenseDoc, SweepStateDoc } from './models';
import { LicenseStoreBase } from './store-base';

/** Licences per read of one hour's bucket while catching up over FerretDB's PostgreSQL. */
const RANGE_PAGE = 500;

/** The expiry sweep's queries: licences by expiry bucket, the sweep's own state, the one-off backfill. */
export class ExpiryQueries extends LicenseStoreBase {
  /** The licences of one expiry bucket, by id after `after` (one equality on an index; sorted within the bucket). */
  inExpiryBucket(bucket: string, after: string, limit: number): Promise<LicenseDoc[]> {
    const filter = after ? { expiry_bucket: bucket, _id: { $gt: after } } : { expiry_bucket: bucket };
    return this.models.License.find(filter, { outbox: 0 }).sort({ _id: 1 }).limit(limit).lean<LicenseDoc[]>().exec();
  }

  /** Catching up (after downtime, or a clock moved on): every licence filed from `first` to `last`, in index order. */
  async *inExpiryRange(first: string, last: string): AsyncGenerator<LicenseDoc> {
    if (postgresPagesOf(this.models.License.db)) {
      // FerretDB passes no range down to PostgreSQL (the range would decode every licence): there, each
      // hour's bucket by equality on its index, in pages, which reads the same licences in the same order.
      // MongoDB's query is recorded all the same (its index is checked: runtime/store/query-shapes.ts).
      recordShape(
        this.models.License,
        'find',
        { expiry_bucket: { $gte: first, $lte: last } },
        { sort: { expiry_bucket: 1, _id: 1 } },
      );
      for (let hour = Date.parse(`${first}:00:00.000Z`); bucketOf(new Date(hour)) <= last; hour += HOUR_MS) {
        const bucket = bucketOf(new Date(hour));
        for (let after = ''; ; ) {
          const docs = await this.inExpiryBucket(bucket, after, RANGE_PAGE);
          for (const doc of docs) yield doc;
          if (docs.length < RANGE_PAGE) break;
          after = docs[docs.length - 1]._id;
        }
      }
      return;
    }
    const cursor = this.models.License.find({ expiry_bucket: { $gte: first, $lte: last } }, { outbox: 0 })
      .sort({ expiry_bucket: 1, _id: 1 })
      .lean<LicenseDoc>()
      .cursor();
    for await (const doc of cursor) yield doc as LicenseDoc;
  }

  /** Marks one licence expired-and-published; false if another instance did first. */
  async markExpired(id: string, event: DomainEvent): Promise<boolean> {
    const res = await this.models.License.updateOne(
      { _id: id, expired_notified: { $ne: true } },
      { $set: { expired_notified: true, expiry_bucket: null, ...withEvents([event]) } },
    );
    return res.modifiedCount === 1;
  }

  /**
   * Marks one licence expired-and-published and revoked with it (its policy's revoke_access), if it is
   * still active with the expiry it was read with: false if another instance did first, or a renewal or a
   * suspension got there in between (which files or answers it anew).
   */
  async markRevokedAtExpiry(doc: Pick<LicenseDoc, '_id' | 'expires_at'>, events: DomainEvent[]): Promise<boolean> {
    const res = await this.models.License.updateOne(
      { _id: doc._id, expired_notified: { $ne: true }, status: 'active', expires_at: doc.expires_at },
      { $set: { status: 'revoked', expired_notified: true, expiry_bucket: null, ...withEvents(events) } },
    );
    return res.modifiedCount === 1;
  }

  async sweepState(id: string): Promise<SweepStateDoc> {
    return (
      (await this.models.SweepState.findOne({ _id: id }).lean<SweepStateDoc>().exec()) ?? {
        _id: id,
        through: null,
        backfilled: false,
      }
    );
  }

  async saveSweepState(state: SweepStateDoc): Promise<void> {
    await this.models.SweepState.updateOne(
      { _id: state._id },
      { $set: { through: state.through, backfilled: state.backfilled } },
      { upsert: true },
    );
  }

  /**
   * Once per database: licences stored before expiry buckets existed get theirs.
   * One pass over the collection, the only one this sweeper ever makes.
   */
  /**
   * The earliest bucket a licence not yet announced is filed under: where the sweeper's first pass starts
   * (licences filed before any pass ran may already be due). Read once, when the sweep state is made.
   */
  async earliestFiledBucket(): Promise<string | null> {
    const first = await this.models.License.findOne({ expiry_bucket: { $gt: '' } }, { expiry_bucket: 1 })
      .sort({ expiry_bucket: 1, _id: 1 })
      .lean<Pick<LicenseDoc, 'expiry_bucket'>>()
      .exec();
    return first?.expiry_bucket ?? null;
  }

  async backfillExpiryBuckets(bucketFor: (doc: LicenseDoc) => string | null): Promise<string | null> {
    let earliest: string | null = null;
    const cursor = this.models.License.find({ expiry_bucket: { $exists: false } }, { outbox: 0 })
      .lean<LicenseDoc>()
      .cursor();
    for await (const doc of cursor) {
      const bucket = bucketFor(doc as LicenseDoc);
      await this.models.License.updateOne(
        { _id: doc._id, expiry_bucket: { $exists: false } },
        { $set: { expiry_bucket: bucket } },
      );
      if (bucket && (!earliest || bucket < earliest)) earliest = bucket;
    }
    return earliest;
  }
}
