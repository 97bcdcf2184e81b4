import { Schema, type Connection, type Model } from 'mongoose';
import { deleteBefore } from '@licensing/runtime';

/**
 * How many mails an account had admitted (queued to send) in one window of its mail quota: one document
 * per account, window kind and window (`<account>:h:<hour number>`, `<account>:d:<day number>`), read and
 * counted by _id only (a look-up every store serves from its primary key).
 */
export interface MailCountDoc {
  _id: string;
  count: number;
  /** The end of its window, and a day more: then nothing reads it, and the clean-up deletes it. */
  expires_at: Date;
}

export function mailCountModel(conn: Connection): Model<MailCountDoc> {
  const schema = new Schema<MailCountDoc>(
    {
      _id: String,
      count: { type: Number, required: true },
      // MongoDB removes them itself; FerretDB ignores TTL indexes, so deleteEnded does it there.
      expires_at: { type: Date, required: true, index: { expireAfterSeconds: 0 } },
    },
    { versionKey: false, collection: 'mail_quota_counts' },
  );
  return conn.model<MailCountDoc>('MailQuotaCount', schema);
}

/** Ended windows deleted per clean-up pass. */
const CLEANUP_BATCH = 500;

export class MailCountStore {
  constructor(readonly Count: Model<MailCountDoc>) {}

  /**
   * Adds `n` (1, or -1 to give one back) to a window's count and says the count now. An $inc is one
   * atomic step on MongoDB; FerretDB 1.x applies it as read-modify-write, so two admissions at the same
   * moment may both count as one there: the quota may then be passed by the few mails admitted at once.
   */
  async add(id: string, n: number, expiresAt: Date): Promise<number> {
    const inc = () =>
      this.Count.findOneAndUpdate(
        { _id: id },
        { $inc: { count: n }, $setOnInsert: { expires_at: expiresAt } },
        { upsert: true, returnDocument: 'after' },
      )
        .lean<MailCountDoc>()
        .exec();
    try {
      return (await inc())?.count ?? n;
    } catch (err) {
      // Two first mails of a window at once: both upserts try the insert and one meets the other's
      // document (a duplicate _id). That one is now there, so the same $inc again updates it.
      if ((err as { code?: number })?.code !== 11000) throw err;
      return (await inc())?.count ?? n;
    }
  }

  /** Deletes a bounded batch of ended windows (FerretDB keeps what MongoDB's TTL index would remove). */
  deleteEnded(now: Date): Promise<number> {
    // A range FerretDB does not pass down to PostgreSQL: deleteBefore deletes the batch on the B-tree over
    // expires_at there (its single-field index), and through the index with MongoDB.
    return deleteBefore(this.Count, 'expires_at', now, CLEANUP_BATCH);
  }
}
