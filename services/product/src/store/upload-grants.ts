import { Schema, type Connection, type Model } from 'mongoose';
import { artifactArchs, artifactPlatforms } from '@licensing/proto';
import type { UploadGrantInput } from '../domain/upload-grant';

/** A one-time upload capability (domain/upload-grant.ts). */
export interface UploadGrantDoc extends UploadGrantInput {
  /** The token's SHA-256 (hex): the token itself is never stored. */
  _id: string;
  account_id: string;
  release_id: string;
  expires_at: Date;
  /** When it was redeemed; null until then (one upload per grant). */
  used_at: Date | null;
  created_at: Date;
}

export function uploadGrantModel(conn: Connection): Model<UploadGrantDoc> {
  const schema = new Schema<UploadGrantDoc>(
    {
      _id: String,
      account_id: { type: String, required: true },
      release_id: { type: String, required: true },
      filename: { type: String, required: true },
      platform: { type: String, enum: artifactPlatforms, required: true },
      arch: { type: String, enum: artifactArchs, required: true },
      signature: { type: String, default: '' },
      // MongoDB's TTL monitor removes expired grants; FerretDB 1.x accepts the option and ignores it, and
      // the runtime's TTL sweep deletes them there in bounded batches (packages/runtime's
      // store/ttl-sweep.ts). A redeem checks expires_at itself, so a grant waiting for either is refused.
      expires_at: { type: Date, required: true, index: { expireAfterSeconds: 0 } },
      used_at: { type: Date, default: null },
      created_at: { type: Date, required: true },
    },
    { versionKey: false, collection: 'upload_grants' },
  );
  return conn.model<UploadGrantDoc>('UploadGrant', schema);
}

export class UploadGrantStore {
  constructor(readonly UploadGrant: Model<UploadGrantDoc>) {}

  async insert(doc: UploadGrantDoc): Promise<void> {
    await this.UploadGrant.create(doc);
  }

  /**
   * Marks the grant of this digest used, if it is unused and unexpired at `now`: the grant as it was
   * redeemed, or null (unknown, expired, or used already). A compare-and-set update: atomic on MongoDB;
   * FerretDB 1.x applies an update as read-modify-write, so there two redeems at the very same moment
   * may both match (two uploads of the one file to the one draft it names, the later one replacing the
   * first).
   */
  redeem(digest: string, now: Date): Promise<UploadGrantDoc | null> {
    // No projection: FerretDB's findAndModify does not take one.
    return this.UploadGrant.findOneAndUpdate(
      { _id: digest, used_at: null, expires_at: { $gt: now } },
      { $set: { used_at: now } },
      { returnDocument: 'after' },
    )
      .lean<UploadGrantDoc>()
      .exec();
  }
}
