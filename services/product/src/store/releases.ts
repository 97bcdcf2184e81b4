import { Schema, type Connection, type Model } from 'mongoose';
import { outboxFields, withEvents } from '@licensing/runtime';
import {
  artifactArchs,
  artifactPlatforms,
  releaseChannels,
  releaseStatuses,
  type ArtifactArch,
  type ArtifactPlatform,
  type DomainEvent,
  type Release,
  type ReleaseChannel,
  type ReleaseStatus,
} from '@licensing/proto';
import type { ReleaseState } from '../domain/release';

/** A file of a release, as stored. */
export interface StoredArtifact {
  filename: string;
  platform: ArtifactPlatform;
  arch: ArtifactArch;
  size: number;
  sha256: string;
  /** As the vendor sent it, '' without one. */
  signature: string;
  downloads: number;
  created_at: Date;
}

export interface ReleaseDoc {
  _id: string;
  account_id: string;
  product_id: string;
  /** As given, trimmed. */
  version: string;
  /** The version without build metadata: unique per product (domain/release-version.ts, versionKey). */
  version_key: string;
  channel: ReleaseChannel;
  status: ReleaseStatus;
  notes: string;
  entitlements: string[];
  artifacts: StoredArtifact[];
  published_at: Date | null;
  yanked_at: Date | null;
  created_at: Date;
  outbox?: Record<string, DomainEvent>;
}

/** What orders and filters a product's releases: all a listing reads of every one of them. */
export type ReleaseSummary = Pick<ReleaseDoc, '_id' | 'version' | 'channel' | 'status'>;

const artifactSchema = new Schema<StoredArtifact>(
  {
    filename: { type: String, required: true },
    platform: { type: String, enum: artifactPlatforms, required: true },
    arch: { type: String, enum: artifactArchs, required: true },
    size: { type: Number, required: true },
    sha256: { type: String, required: true },
    signature: { type: String, default: '' },
    downloads: { type: Number, default: 0 },
    created_at: { type: Date, required: true },
  },
  { _id: false },
);

export function releaseModel(conn: Connection): Model<ReleaseDoc> {
  const schema = new Schema<ReleaseDoc>(
    {
      _id: String,
      account_id: { type: String, required: true },
      product_id: { type: String, required: true },
      version: { type: String, required: true },
      version_key: { type: String, required: true },
      channel: { type: String, enum: releaseChannels, required: true },
      status: { type: String, enum: releaseStatuses, required: true },
      notes: { type: String, default: '' },
      entitlements: { type: [String], default: [] },
      artifacts: { type: [artifactSchema], default: [] },
      published_at: { type: Date, default: null },
      yanked_at: { type: Date, default: null },
      created_at: { type: Date, required: true },
      ...outboxFields,
    },
    { versionKey: false, collection: 'releases' },
  );
  // A version once per product (the key leaves out build metadata: 1.0.0+a and 1.0.0+b are one
  // version). It serves every other query too: a product's releases, always within its account.
  schema.index({ account_id: 1, product_id: 1, version_key: 1 }, { unique: true });
  return conn.model<ReleaseDoc>('Release', schema);
}

const isDuplicate = (err: unknown) => (err as { code?: number })?.code === 11000;

export class ReleaseStore {
  constructor(readonly Release: Model<ReleaseDoc>) {}

  /** Stores a new release; false: its product already has this version (the unique index said so). */
  async insert(doc: Omit<ReleaseDoc, 'outbox'>): Promise<boolean> {
    try {
      await this.Release.create(doc);
      return true;
    } catch (err) {
      if (isDuplicate(err)) return false;
      throw err;
    }
  }

  /** Scoped by account: another account's release is simply not found. */
  find(accountId: string, id: string): Promise<ReleaseDoc | null> {
    return this.Release.findOne({ _id: id, account_id: accountId }, { outbox: 0 }).lean<ReleaseDoc>().exec();
  }

  /** Whether the product has `n` releases or more (reads at most n ids, on the unique index). */
  async hasAtLeast(accountId: string, productId: string, n: number): Promise<boolean> {
    const ids = await this.Release.find({ account_id: accountId, product_id: productId }, { _id: 1 })
      .limit(n)
      .lean()
      .exec();
    return ids.length >= n;
  }

  /** Every release of the product, only the fields that order and filter them (at most releaseLimits.per_product). */
  summaries(accountId: string, productId: string): Promise<ReleaseSummary[]> {
    return this.Release.find(
      { account_id: accountId, product_id: productId },
      { _id: 1, version: 1, channel: 1, status: 1 },
    )
      .lean<ReleaseSummary[]>()
      .exec();
  }

  /** The releases of these ids in this account, in no particular order. */
  byIds(accountId: string, ids: string[]): Promise<ReleaseDoc[]> {
    if (!ids.length) return Promise.resolve([]);
    return this.Release.find({ account_id: accountId, _id: { $in: ids } }, { outbox: 0 })
      .lean<ReleaseDoc[]>()
      .exec();
  }

  /**
   * Applies a state change with its event in the same write, only if the release is still in the
   * state it was read in (another request may have moved it since): false if it was not.
   */
  async change(
    current: Pick<ReleaseDoc, '_id' | 'account_id' | 'status'>,
    changes: Partial<ReleaseState>,
    event: DomainEvent,
  ): Promise<boolean> {
    const done = await this.Release.updateOne(
      { _id: current._id, account_id: current.account_id, status: current.status },
      { $set: { ...changes, ...withEvents([event]) } },
    );
    return done.matchedCount === 1;
  }

  /** Removes a release if it is still a draft; false if it is gone or no draft by now. */
  async deleteDraft(accountId: string, id: string): Promise<boolean> {
    const done = await this.Release.deleteOne({ _id: id, account_id: accountId, status: 'draft' });
    return done.deletedCount === 1;
  }
}

/** The gRPC message of a stored release (absent times are ''). */
export const releaseMessage = (doc: Omit<ReleaseDoc, 'outbox'>): Release => ({
  id: doc._id,
  product_id: doc.product_id,
  version: doc.version,
  channel: doc.channel,
  status: doc.status,
  notes: doc.notes,
  published_at: doc.published_at?.toISOString() ?? '',
  entitlements: doc.entitlements,
  artifacts: doc.artifacts.map((a) => ({
    filename: a.filename,
    platform: a.platform,
    arch: a.arch,
    size: a.size,
    sha256: a.sha256,
    signature: a.signature,
    downloads: a.downloads,
    created_at: a.created_at.toISOString(),
  })),
  created_at: doc.created_at.toISOString(),
  yanked_at: doc.yanked_at?.toISOString() ?? '',
});
