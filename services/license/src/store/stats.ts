import { Schema, type Connection, type Model } from 'mongoose';
import { PeriodicTask, sha256, type Logger } from '@licensing/runtime';
import { addCodes, hourOf, type CodeCounts, type HourBucket } from '../domain/stats';

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
 * licence adds a few documents an hour, never one per request.
 */
interface SeenDoc {
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

/** One group of validations waiting to be written. */
export interface Seen {
  accountId: string;
  licenseId: string;
  hour: Date;
  code: string;
  fingerprint: string;
  count: number;
  lastAt: Date;
}

const seenId = (s: Pick<Seen, 'licenseId' | 'hour' | 'code' | 'fingerprint'>) =>
  `${s.licenseId}:${hourOf(s.hour).getTime()}:${s.code}:${sha256(s.fingerprint, 'base64url').slice(0, 16)}`;

/** Hourly validation counts are kept this long (the overview shows 30 days). */
export const STATS_RETENTION_DAYS = 90;
/** Recent validations per licence (grouped by hour, code and machine) are kept this long. */
export const SEEN_RETENTION_DAYS = 14;

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
  const seen = new Schema<SeenDoc>(
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
  seen.index({ license_id: 1, hour: -1 }); // a licence's latest hours
  seen.index({ hour: 1 }, { expireAfterSeconds: SEEN_RETENTION_DAYS * 86_400 });
  return {
    Seen: conn.model<SeenDoc>('ValidationSeen', seen) as Model<SeenDoc>,
    Stats: conn.model<StatsDoc>('ValidationStats', stats) as Model<StatsDoc>,
    Activity: conn.model<ActivityDoc>('ValidationActivity', activity) as Model<ActivityDoc>,
  };
}

type StatsModels = ReturnType<typeof statsModels>;
type Tally = { accountId: string; hour: Date; validations: number; valid: number; byCode: CodeCounts };

/**
 * Counts validations and remembers when each licence was last validated,
 * without a write on the hot path: both are kept in memory and flushed every
 * few seconds (and on shutdown) as one batch. The gateways' cached answers
 * arrive here in batches too (RecordValidations). A failed flush keeps its
 * data for the next one. The cost of a flush grows with the traffic since the
 * last one, never with the number of licences.
 */
export class ValidationCounter {
  private pending = new Map<string, Tally>();
  private lastValidated = new Map<string, { accountId: string; at: Date }>();
  private seen = new Map<string, Seen>();
  private task?: PeriodicTask;

  constructor(
    private readonly models: StatsModels,
    private readonly log: Logger,
    private readonly intervalMs: number,
  ) {}

  record(accountId: string, code: string, valid: boolean, at: Date): void {
    this.add(accountId, hourOf(at), 1, valid ? 1 : 0, { [code]: 1 });
  }

  add(accountId: string, hour: Date, validations: number, valid: number, byCode: CodeCounts = {}): void {
    const id = `${accountId}:${hourOf(hour).getTime()}`;
    const entry = this.pending.get(id);
    if (entry) {
      entry.validations += validations;
      entry.valid += valid;
      addCodes(entry.byCode, byCode);
    } else this.pending.set(id, { accountId, hour: hourOf(hour), validations, valid, byCode: { ...byCode } });
  }

  validated(accountId: string, licenseId: string, at: Date): void {
    const seen = this.lastValidated.get(licenseId);
    if (!seen || seen.at < at) this.lastValidated.set(licenseId, { accountId, at });
  }

  /** Validations of a licence, grouped by hour, code and machine (count them, keep the latest time). */
  saw(s: Seen): void {
    const id = seenId(s);
    const entry = this.seen.get(id);
    if (!entry) this.seen.set(id, { ...s, hour: hourOf(s.hour) });
    else {
      entry.count += s.count;
      if (entry.lastAt < s.lastAt) entry.lastAt = s.lastAt;
    }
  }

  async flush(): Promise<void> {
    const tallies = this.pending;
    const seen = this.lastValidated;
    const groups = this.seen;
    this.pending = new Map();
    this.lastValidated = new Map();
    this.seen = new Map();
    if (tallies.size) {
      const ops = [...tallies].map(([id, e]) => ({
        updateOne: {
          filter: { _id: id },
          update: {
            $inc: {
              validations: e.validations,
              valid: e.valid,
              ...Object.fromEntries(Object.entries(e.byCode).map(([code, n]) => [`by_code.${code}`, n])),
            },
            $setOnInsert: { account_id: e.accountId, hour: e.hour },
          },
          upsert: true,
        },
      }));
      await this.models.Stats.bulkWrite(ops, { ordered: false }).catch((err) => {
        this.log.warn({ err }, 'could not store validation counts; will retry');
        for (const e of tallies.values()) this.add(e.accountId, e.hour, e.validations, e.valid, e.byCode);
      });
    }
    if (seen.size) {
      const ops = [...seen].map(([id, v]) => ({
        updateOne: {
          filter: { _id: id },
          update: { $set: { account_id: v.accountId, last_validated_at: v.at } },
          upsert: true,
        },
      }));
      await this.models.Activity.bulkWrite(ops, { ordered: false }).catch((err) => {
        this.log.warn({ err }, 'could not store last-validated times; will retry');
        for (const [id, v] of seen) this.validated(v.accountId, id, v.at);
      });
    }
    if (groups.size) {
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
      await this.models.Seen.bulkWrite(ops, { ordered: false }).catch((err) => {
        this.log.warn({ err }, 'could not store recent validations; will retry');
        for (const g of groups.values()) this.saw(g);
      });
    }
  }

  start(): void {
    this.task = new PeriodicTask('validation counts flush', () => this.flush(), this.intervalMs, this.log);
    this.task.start();
  }

  async stop(): Promise<void> {
    await this.task?.stop();
    await this.flush(); // the last seconds of counts
  }

  async since(accountId: string, from: Date): Promise<HourBucket[]> {
    const docs = await this.models.Stats.find({ account_id: accountId, hour: { $gte: from } })
      .lean<StatsDoc[]>()
      .exec();
    return docs.map((d) => ({ hour: d.hour, validations: d.validations, valid: d.valid, byCode: d.by_code ?? {} }));
  }

  /** A licence's latest validation groups, newest first (flushed ones: a few seconds behind). */
  async recent(licenseId: string, limit: number): Promise<Seen[]> {
    const docs = await this.models.Seen.find({ license_id: licenseId })
      .sort({ hour: -1 })
      .limit(limit * 2)
      .lean<SeenDoc[]>()
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

  /** When the licence was last validated (null = never, or not yet flushed). */
  async lastValidatedAt(licenseId: string): Promise<Date | null> {
    const pending = this.lastValidated.get(licenseId);
    if (pending) return pending.at;
    const doc = await this.models.Activity.findOne({ _id: licenseId }).lean<ActivityDoc>().exec();
    return doc?.last_validated_at ?? null;
  }
}
