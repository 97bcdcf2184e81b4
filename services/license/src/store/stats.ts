import { Schema, type Connection, type Model } from 'mongoose';
import { PeriodicTask, type Logger } from '@licensing/runtime';
import { hourOf, type HourBucket } from '../domain/stats';

interface StatsDoc {
  /** account_id:hour-start-ms */
  _id: string;
  account_id: string;
  hour: Date;
  validations: number;
  valid: number;
}

export function statsModel(conn: Connection): Model<StatsDoc> {
  const schema = new Schema<StatsDoc>(
    { _id: String, account_id: { type: String, required: true }, hour: { type: Date, required: true }, validations: { type: Number, default: 0 }, valid: { type: Number, default: 0 } },
    { versionKey: false, collection: 'validation_stats' },
  );
  schema.index({ account_id: 1, hour: -1 });
  return conn.model<StatsDoc>('ValidationStats', schema);
}

/**
 * Counts validations without a write on the hot path: increments in memory,
 * flushed as one $inc upsert per account and hour every few seconds (and on
 * shutdown). A failed flush keeps its counts for the next one.
 */
export class ValidationCounter {
  private pending = new Map<string, { accountId: string; hour: Date; validations: number; valid: number }>();
  private task?: PeriodicTask;

  constructor(
    private readonly Stats: Model<StatsDoc>,
    private readonly log: Logger,
    private readonly intervalMs: number,
  ) {}

  record(accountId: string, valid: boolean, at: Date): void {
    const hour = hourOf(at);
    const id = `${accountId}:${hour.getTime()}`;
    const entry = this.pending.get(id) ?? { accountId, hour, validations: 0, valid: 0 };
    entry.validations++;
    if (valid) entry.valid++;
    this.pending.set(id, entry);
  }

  async flush(): Promise<void> {
    const batch = this.pending;
    this.pending = new Map();
    for (const [id, e] of batch) {
      try {
        await this.Stats.updateOne({ _id: id }, { $inc: { validations: e.validations, valid: e.valid }, $setOnInsert: { account_id: e.accountId, hour: e.hour } }, { upsert: true });
      } catch (err) {
        this.log.warn({ err }, 'could not store validation counts; will retry');
        const again = this.pending.get(id) ?? { ...e, validations: 0, valid: 0 };
        this.pending.set(id, { ...again, validations: again.validations + e.validations, valid: again.valid + e.valid });
      }
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
    const docs = await this.Stats.find({ account_id: accountId, hour: { $gte: from } }).lean<StatsDoc[]>().exec();
    return docs.map((d) => ({ hour: d.hour, validations: d.validations, valid: d.valid }));
  }
}
