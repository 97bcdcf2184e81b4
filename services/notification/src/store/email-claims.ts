import { Schema, type Connection, type Model } from 'mongoose';
import { deleteBefore } from '@licensing/runtime';

/**
 * One claim of one mail: the sender that inserted it may make that attempt. `_id` names the mail and the
 * claim's number (`<mail id>:<epoch>`): a mail's next claim is always its last one's number plus one, so
 * of two senders that read the same mail at the same time, exactly one inserts it. An insert is the one
 * write FerretDB 1.x refuses atomically to all but one (the unique `_id`); its updates are
 * read-modify-write, so "set claimed where unclaimed" could let both through and send the mail twice.
 */
export interface EmailClaimDoc {
  _id: string;
  mail_id: string;
  /** Who took it (the sender's instance). */
  by: string;
  /**
   * Kept a day past the claim: a sender that read the mail before this claim was made, and is slow
   * to try its own, still finds the number taken. Then deleted (MongoDB's TTL index, or deleteEnded).
   */
  expires_at: Date;
}

export function emailClaimModel(conn: Connection): Model<EmailClaimDoc> {
  const schema = new Schema<EmailClaimDoc>(
    {
      _id: String,
      mail_id: { type: String, required: true },
      by: { type: String, required: true },
      expires_at: { type: Date, required: true, index: { expireAfterSeconds: 0 } },
    },
    { versionKey: false, collection: 'email_claims' },
  );
  return conn.model<EmailClaimDoc>('EmailClaim', schema);
}

export const claimId = (mailId: string, epoch: number) => `${mailId}:${epoch}`;

/** A claim is kept this long past its own end (see expires_at). */
export const CLAIM_KEPT_MS = 86_400_000;
/** Ended claims deleted per clean-up pass. */
const CLEANUP_BATCH = 500;

const isDuplicate = (err: unknown) => (err as { code?: number })?.code === 11000;

export class EmailClaimStore {
  constructor(readonly Claim: Model<EmailClaimDoc>) {}

  /** Inserts the claim; false if that claim of the mail exists already (another sender made it). */
  async insert(mailId: string, epoch: number, by: string, until: Date): Promise<boolean> {
    try {
      await this.Claim.create({
        _id: claimId(mailId, epoch),
        mail_id: mailId,
        by,
        expires_at: new Date(until.getTime() + CLAIM_KEPT_MS),
      });
      return true;
    } catch (err) {
      if (isDuplicate(err)) return false;
      throw err;
    }
  }

  /** Deletes a bounded batch of claims kept long enough (FerretDB keeps what MongoDB's TTL index would remove). */
  deleteEnded(now: Date): Promise<number> {
    // A range FerretDB does not pass down to PostgreSQL: deleteBefore deletes the batch on the B-tree over
    // expires_at there (its single-field index), and through the index with MongoDB.
    return deleteBefore(this.Claim, 'expires_at', now, CLEANUP_BATCH);
  }
}
