import { Schema, type Connection, type Model } from 'mongoose';
import { bulkUpdate, deleteBefore, sha256 } from '@licensing/runtime';
import { DAY_MS, hourOf, type CodeCounts, type HourBucket } from '../domain/stats';

// The stored validation counts: their models and the queries that add to them and read them. The
// counting itself (in memory, flushed every few seconds) is jobs/validation-counter.ts.

interface StatsDoc {
  /** account_id:hour-start-ms */
  _id: string;
  account_id: string;
  hour: Date;
  validations: number;
  valid: number;
  /** Validations per answer code (absent on counts stored before codes were). */
  by_code?: CodeCounts;
}

/** When each licence was last validated; its own collection so a stats write never races a licence change. */
interface ActivityDoc {
  /** The licence id. */
  _id: string;
  account_id: string;
  last_validated_at: Date;
}

/**
 * A licence's validations grouped by hour, answer code and machine (the
 * licence page's "recent validations"): one document per group, so a busy
 * licence adds a few documents an hour, never one per request. Collection
 * `validation_seen`, as RecordValidations' field `seen` carries them.
 */
interface RecentGroupDoc {
  /** license_id:hour-ms:code:fingerprint digest */
  _id: string;
  account_id: string;
  license_id: string;
  hour: Date;
  code: string;
  fingerprint: string;
  count: number;
  last_at: Date;
}

/** A licence's validations in one hour with one answer code from one machine: how many, and the latest. */
export interface RecentGroup {
  accountId: string;
  licenseId: string;
  hour: Date;
  code: string;
  fingerprint: string;
  count: number;
  lastAt: Date;
}

/** An account's validations in one hour: how many, how many valid, and how many of each answer code. */
export interface HourCount {
  accountId: string;
  hour: Date;
  validations: number;
  valid: number;
  byCode: CodeCounts;
}

/** When a licence was last validated, and its account. */
export interface LastValidation {
  accountId: string;
  at: Date;
}

/** The id of an account's hour (its document's `_id`, and the counter's key for it). */
export const hourCountId = (accountId: string, hour: Date) => `${accountId}:${hourOf(hour).getTime()}`;

/** The id of a group of recent validations (its document's `_id`, and the counter's key for it). */
export const recentGroupId = (g: Pick<RecentGroup, 'licenseId' | 'hour' | 'code' | 'fingerprint'>) =>
  `${g.licenseId}:${hourOf(g.hour).getTime()}:${g.code}:${sha256(g.fingerprint, 'base64url').slice(0, 16)}`;

/** Hourly validation counts are kept this long (the overview shows 30 days). */
export const STATS_RETENTION_DAYS = 90;
/** Recent validations per licence (grouped by hour, code and machine) are kept this long. */
export const RECENT_RETENTION_DAYS = 14;

export function statsModels(conn: Connection) {
  const stats = new Schema<StatsDoc>(
    {
      _id: String,
      account_id: { type: String, required: true },
      hour: { type: Date, required: true },
      validations: { type: Number, default: 0 },
      valid: { type: Number, default: 0 },
      by_code: { type: Schema.Types.Mixed },
    },
    { versionKey: false, collection: 'validation_stats' },
  );
  stats.index({ account_id: 1, hour: -1 });
  // Retention (MongoDB removes them; FerretDB has no TTL indexes, so there they stay and reads
  // filter by hour): the overview reads 30 days of counts and the licence page its latest hours.
  stats.index({ hour: 1 }, { expireAfterSeconds: STATS_RETENTION_DAYS * 86_400 });
  const activity = new Schema<ActivityDoc>(
    { _id: String, account_id: { type: String, required: true }, last_validated_at: { type: Date, required: true } },
    { versionKey: false, collection: 'validation_activity' },
  );
  const recent = new Schema<RecentGroupDoc>(
    {
      _id: String,
      account_id: { type: String, required: true },
      license_id: { type: String, required: true },
      hour: { type: Date, required: true },
      code: { type: String, required: true },
      fingerprint: { type: String, default: '' },
      count: { type: Number, default: 0 },
      last_at: { type: Date, required: true },
    },
    { versionKey: false, collection: 'validation_seen' },
  );
  recent.index({ license_id: 1, hour: -1 }); // a licence's latest hours
  recent.index({ hour: 1 }, { expireAfterSeconds: RECENT_RETENTION_DAYS * 86_400 });
  return {
    RecentGroups: conn.model<RecentGroupDoc>('ValidationSeen', recent) as Model<RecentGroupDoc>,
    Stats: conn.model<StatsDoc>('ValidationStats', stats) as Model<StatsDoc>,
    Activity: conn.model<ActivityDoc>('ValidationActivity', activity) as Model<ActivityDoc>,
  };
}

type StatsModels = ReturnType<typeof statsModels>;

/**
 * The queries of the validation counts: batches added in bulk writes of a few statements each
 * (runtime's bulkUpdate: FerretDB stalls on an update command of many; one statement per map entry,
 * in the map's order, so a failure says which entries were stored and the caller keeps the rest),
 * and the reads of the dashboard and the licence page.
 */
export class ValidationStatsStore {
  constructor(private readonly models: StatsModels) {}

  /** Adds each account's hour to its stored counts (made when missing). */
  async addHourCounts(counts: Map<string, HourCount>): Promise<void> {
    const ops = [...counts].map(([id, c]) => ({
      updateOne: {
        filter: { _id: id },
        update: {
          $inc: {
            validations: c.validations,
            valid: c.valid,
            ...Object.fromEntries(Object.entries(c.byCode).map(([code, n]) => [`by_code.${code}`, n])),
          },
          $setOnInsert: { account_id: c.accountId, hour: c.hour },
        },
        upsert: true,
      },
    }));
    await bulkUpdate(this.models.Stats, ops);
  }

  /** Sets when each licence (the map's key) was last validated. */
  async setLastValidated(lastValidated: Map<string, LastValidation>): Promise<void> {
    const ops = [...lastValidated].map(([licenseId, v]) => ({
      updateOne: {
        filter: { _id: licenseId },
        update: { $set: { account_id: v.accountId, last_validated_at: v.at } },
        upsert: true,
      },
    }));
    await bulkUpdate(this.models.Activity, ops);
  }

  /** Adds each group of recent validations to its stored group (made when missing). */
  async addRecentGroups(groups: Map<string, RecentGroup>): Promise<void> {
    // last_at is set, not maxed: groups of one hour are flushed from one process in order, and a
    // few seconds' difference between instances does not matter on the licence page.
    const ops = [...groups].map(([id, g]) => ({
      updateOne: {
        filter: { _id: id },
        update: {
          $inc: { count: g.count },
          $set: { last_at: g.lastAt },
          $setOnInsert: {
            account_id: g.accountId,
            license_id: g.licenseId,
            hour: g.hour,
            code: g.code,
            fingerprint: g.fingerprint,
          },
        },
        upsert: true,
      },
    }));
    await bulkUpdate(this.models.RecentGroups, ops);
  }

  /** An account's stored hours from `from` on. */
  async hoursSince(accountId: string, from: Date): Promise<HourBucket[]> {
    const docs = await this.models.Stats.find({ account_id: accountId, hour: { $gte: from } })
      .lean<StatsDoc[]>()
      .exec();
    return docs.map((d) => ({ hour: d.hour, validations: d.validations, valid: d.valid, byCode: d.by_code ?? {} }));
  }

  /** A licence's latest stored groups of validations, newest first. */
  async recentGroups(licenseId: string, limit: number): Promise<RecentGroup[]> {
    const docs = await this.models.RecentGroups.find({ license_id: licenseId })
      .sort({ hour: -1 })
      .limit(limit * 2)
      .lean<RecentGroupDoc[]>()
      .exec();
    return docs
      .map((d) => ({
        accountId: d.account_id,
        licenseId: d.license_id,
        hour: d.hour,
        code: d.code,
        fingerprint: d.fingerprint,
        count: d.count,
        lastAt: d.last_at,
      }))
      .sort((a, b) => b.lastAt.getTime() - a.lastAt.getTime())
      .slice(0, limit);
  }

  /**
   * Deletes stored telemetry past its retention (recent validation groups after RECENT_RETENTION_DAYS,
   * hourly counts after STATS_RETENTION_DAYS), at most `limit` of each: MongoDB's TTL indexes do this on
   * their own, FerretDB accepts them and never deletes (FerretDB/FerretDB#2415). On the `hour` index
   * (over FerretDB's PostgreSQL one DELETE on its B-tree: runtime deleteBefore). How many went.
   */
  async deleteExpired(now: Date, limit: number): Promise<number> {
    const [recent, hours] = await Promise.all([
      deleteBefore(this.models.RecentGroups, 'hour', new Date(now.getTime() - RECENT_RETENTION_DAYS * DAY_MS), limit),
      deleteBefore(this.models.Stats, 'hour', new Date(now.getTime() - STATS_RETENTION_DAYS * DAY_MS), limit),
    ]);
    return recent + hours;
  }

  /** When the licence was last validated, as stored (null = never, or not yet flushed). */
  async lastValidatedAt(licenseId: string): Promise<Date | null> {
    const doc = await this.models.Activity.findOne({ _id: licenseId }).lean<ActivityDoc>().exec();
    return doc?.last_validated_at ?? null;
  }
}
