import { Schema, type Connection, type Model } from 'mongoose';
import { outboxFields, withEvents } from '@licensing/runtime';
import {
  artifactArchs,
  artifactPlatforms,
  releaseChannels,
  releaseStatuses,
  type DomainEvent,
  type Release,
  type ReleaseChannel,
  type ReleaseStatus,
} from '@licensing/proto';
import type { ArtifactRecord } from '../domain/artifact';
import type { ReleaseState } from '../domain/release';

/** A file of a release, as stored (domain/artifact.ts). */
export type StoredArtifact = ArtifactRecord;

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

/** What choosing the releases to offer reads of every published one (domain/release-offer.ts). */
export type OfferSummary = Pick<
  ReleaseDoc,
  '_id' | 'version' | 'channel' | 'status' | 'entitlements' | 'published_at'
> & {
  artifacts: Pick<StoredArtifact, 'platform' | 'arch'>[];
};

const artifactSchema = new Schema<StoredArtifact>(
  {
    filename: { type: String, required: true },
    platform: { type: String, enum: artifactPlatforms, required: true },
    arch: { type: String, enum: artifactArchs, required: true },
    size: { type: Number, required: true },
    sha256: { type: String, required: true },
    signature: { type: String, default: '' },
    storage_key: { type: String, required: true },
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

  /**
   * Writes a draft's new list of files, only if it is still a draft holding the list it was read with
   * (as many files, each under the same storage key): there are no transactions on FerretDB, so this
   * compare-and-set is what keeps an upload from landing on a release published meanwhile, and two
   * uploads to one release from undoing each other. False if the release changed or is gone. Atomic
   * on MongoDB; FerretDB 1.x applies an update as read-modify-write, so there two writes at the very
   * same moment may still both match (the later list wins).
   */
  async setArtifacts(
    current: Pick<ReleaseDoc, '_id' | 'account_id' | 'artifacts'>,
    artifacts: StoredArtifact[],
  ): Promise<boolean> {
    const sameFiles = Object.fromEntries(
      current.artifacts.map((a, i) => [`artifacts.${i}.storage_key`, a.storage_key]),
    );
    const done = await this.Release.updateOne(
      {
        _id: current._id,
        account_id: current.account_id,
        status: 'draft',
        artifacts: { $size: current.artifacts.length },
        ...sameFiles,
      },
      { $set: { artifacts } },
    );
    return done.matchedCount === 1;
  }

  /** The names of a release's files in their order; null when the account has no such release. */
  async artifactNames(accountId: string, id: string): Promise<string[] | null> {
    const doc = await this.Release.findOne({ _id: id, account_id: accountId }, { artifacts: 1 })
      .lean<Pick<ReleaseDoc, 'artifacts'>>()
      .exec();
    return doc ? doc.artifacts.map((a) => a.filename) : null;
  }

  /**
   * One more download of the file at `index`, if that place still holds `filename` (FerretDB 1.x has
   * no positional `$` update, so the file is addressed by its place, pinned by its name): its count
   * now, or null when the place holds another file or the release is gone. An $inc is one atomic step
   * on MongoDB; FerretDB 1.x applies it as read-modify-write, so two downloads at the same moment may
   * count as one there.
   */
  async countDownload(accountId: string, id: string, index: number, filename: string): Promise<number | null> {
    // No projection: FerretDB's findAndModify does not take one.
    const after = await this.Release.findOneAndUpdate(
      { _id: id, account_id: accountId, [`artifacts.${index}.filename`]: filename },
      { $inc: { [`artifacts.${index}.downloads`]: 1 } },
      { returnDocument: 'after' },
    )
      .lean<ReleaseDoc>()
      .exec();
    return after?.artifacts[index]?.downloads ?? null;
  }

  /**
   * The product's published releases, only what choosing the ones to offer reads (domain/release-offer.ts):
   * at most releaseLimits.per_product, on the unique index's account and product.
   */
  publishedOffers(accountId: string, productId: string): Promise<OfferSummary[]> {
    return this.Release.find(
      { account_id: accountId, product_id: productId, status: 'published' },
      {
        _id: 1,
        version: 1,
        channel: 1,
        status: 1,
        entitlements: 1,
        published_at: 1,
        'artifacts.platform': 1,
        'artifacts.arch': 1,
      },
    )
      .lean<OfferSummary[]>()
      .exec();
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
    storage_key: a.storage_key,
    created_at: a.created_at.toISOString(),
  })),
  created_at: doc.created_at.toISOString(),
  yanked_at: doc.yanked_at?.toISOString() ?? '',
});
