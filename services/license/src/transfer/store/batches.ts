import { Schema, type Connection, type Model } from 'mongoose';
import { outboxFields, withEvents } from '@licensing/runtime';
import {
  licenseBatchItemStatuses,
  licenseBatchStatuses,
  type DomainEvent,
  type LicenseBatchItemStatus,
  type LicenseBatchStatus,
} from '@licensing/proto';

/** One licence of a batch: what was asked, the licence id fixed when the batch was stored, and how it went. */
export interface BatchItemDoc {
  customer_email: string;
  metadata: Record<string, string>;
  entitlements: string[];
  send_email: boolean;
  /** Fixed when the batch is stored: a run after a crash finds the licence under it, never issues a second. */
  license_id: string;
  status: LicenseBatchItemStatus;
  key: string | null;
  error: string | null;
}

/** A batch of licences to issue (POST /api/v1/licenses/batch): the job and its items in one document. */
export interface LicenseBatchDoc {
  _id: string;
  account_id: string;
  product_id: string;
  status: LicenseBatchStatus;
  items: BatchItemDoc[];
  total: number;
  issued: number;
  failed: number;
  created_at: Date;
  completed_at: Date | null;
  /** A run holds the batch until then (renewed as it goes); a batch past it is resumed by the next sweep. */
  lease_until: Date;
  /**
   * The items' distinct customer e-mails, lower-cased (domain/erasure.ts, emailListOf): how an erasure
   * finds a customer's batches on an index. Absent on batches stored before it existed: the first
   * erasure of an account gives them theirs.
   */
  customer_emails_lc?: string[];
  outbox?: Record<string, DomainEvent>;
}

export function batchModels(conn: Connection) {
  const item = new Schema<BatchItemDoc>(
    {
      customer_email: { type: String, required: true },
      metadata: { type: Object, default: () => ({}) },
      entitlements: { type: [String], default: () => [] },
      send_email: { type: Boolean, default: false },
      license_id: { type: String, required: true },
      status: { type: String, required: true, enum: licenseBatchItemStatuses },
      key: { type: String, default: null },
      error: { type: String, default: null },
    },
    { _id: false },
  );
  const schema = new Schema<LicenseBatchDoc>(
    {
      _id: String,
      account_id: { type: String, required: true },
      product_id: { type: String, required: true },
      status: { type: String, required: true, enum: licenseBatchStatuses },
      items: { type: [item], default: () => [] },
      total: { type: Number, required: true },
      issued: { type: Number, default: 0 },
      failed: { type: Number, default: 0 },
      created_at: { type: Date, required: true },
      completed_at: { type: Date, default: null },
      lease_until: { type: Date, required: true },
      customer_emails_lc: { type: [String], default: undefined },
      ...outboxFields,
    },
    { versionKey: false, collection: 'license_batches' },
  );
  // The sweep's one equality (few batches run at once; their leases are compared in memory).
  schema.index({ status: 1, _id: 1 });
  // The erasure of a customer: the account's batches holding their e-mail (a multikey index).
  schema.index({ account_id: 1, customer_emails_lc: 1, _id: 1 });
  return { LicenseBatch: conn.model<LicenseBatchDoc>('LicenseBatch', schema) as Model<LicenseBatchDoc> };
}

type Models = ReturnType<typeof batchModels>;

const isDuplicate = (err: unknown) => (err as { code?: number })?.code === 11000;

export class LicenseBatchStore {
  constructor(private readonly models: Models) {}

  /** The model whose documents carry license.batch_completed (the outbox tracks it). */
  get model(): Model<LicenseBatchDoc> {
    return this.models.LicenseBatch;
  }

  /** Stores a new batch; false when its id exists (a retried request under the same Idempotency-Key). */
  async insert(doc: Omit<LicenseBatchDoc, 'outbox'>): Promise<boolean> {
    try {
      await this.models.LicenseBatch.create(doc);
      return true;
    } catch (err) {
      if (isDuplicate(err)) return false;
      throw err;
    }
  }

  findInAccount(accountId: string, id: string): Promise<LicenseBatchDoc | null> {
    return this.models.LicenseBatch.findOne({ _id: id, account_id: accountId }, { outbox: 0 })
      .lean<LicenseBatchDoc>()
      .exec();
  }

  findById(id: string): Promise<LicenseBatchDoc | null> {
    return this.models.LicenseBatch.findOne({ _id: id }, { outbox: 0 }).lean<LicenseBatchDoc>().exec();
  }

  /**
   * Whether a batch of this product is still issuing (its licences not all written yet): read on the
   * status index, among the running batches only (a few at a time).
   */
  async runningFor(accountId: string, productId: string): Promise<boolean> {
    const one = await this.models.LicenseBatch.findOne(
      { status: 'running', account_id: accountId, product_id: productId },
      { _id: 1 },
    )
      .lean<{ _id: string }>()
      .exec();
    return one !== null;
  }

  /** The ids of running batches whose lease has run out (nobody is issuing them), oldest first. */
  async abandoned(now: Date, limit: number): Promise<string[]> {
    const docs = await this.models.LicenseBatch.find({ status: 'running' }, { lease_until: 1 })
      .sort({ _id: 1 })
      .limit(200)
      .lean<Pick<LicenseBatchDoc, '_id' | 'lease_until'>[]>()
      .exec();
    return docs
      .filter((d) => d.lease_until.getTime() <= now.getTime())
      .slice(0, limit)
      .map((d) => d._id);
  }

  /**
   * Takes a batch for a run until `until`, if its lease is still the one read. On FerretDB two runs may
   * both get it (updates are not atomic): that costs work, never a second licence (items' ids are fixed).
   */
  async lease(doc: LicenseBatchDoc, until: Date): Promise<boolean> {
    const res = await this.models.LicenseBatch.updateOne(
      { _id: doc._id, status: 'running', lease_until: doc.lease_until },
      { $set: { lease_until: until } },
    );
    return res.modifiedCount === 1;
  }

  // Erasure of a customer's e-mail

  /** The account's batches stored before customer_emails_lc existed, by id after `after`, with their items. */
  batchesWithoutEmailList(
    accountId: string,
    after: string,
    limit: number,
  ): Promise<Pick<LicenseBatchDoc, '_id' | 'items'>[]> {
    return this.pageOfItems({ account_id: accountId, customer_emails_lc: null }, after, limit);
  }

  /** Gives an older batch its e-mail list (unless it has one already). */
  async giveEmailList(id: string, emails: string[]): Promise<void> {
    await this.models.LicenseBatch.updateOne(
      { _id: id, customer_emails_lc: null },
      { $set: { customer_emails_lc: emails } },
    );
  }

  /** The account's batches with an item of this lower-cased e-mail, by id after `after`, with their items. */
  batchesOfCustomer(
    accountId: string,
    emailLc: string,
    after: string,
    limit: number,
  ): Promise<Pick<LicenseBatchDoc, '_id' | 'items'>[]> {
    return this.pageOfItems({ account_id: accountId, customer_emails_lc: emailLc }, after, limit);
  }

  /** The batches matching `filter`, by id after `after` (the erasure walks them in pages), with their items. */
  private pageOfItems(
    filter: Record<string, unknown>,
    after: string,
    limit: number,
  ): Promise<Pick<LicenseBatchDoc, '_id' | 'items'>[]> {
    return this.models.LicenseBatch.find(after ? { ...filter, _id: { $gt: after } } : filter, { items: 1 })
      .sort({ _id: 1 })
      .limit(limit)
      .lean<Pick<LicenseBatchDoc, '_id' | 'items'>[]>()
      .exec();
  }

  /** The batch's items and e-mail list after an erasure, if it still lists the erased e-mail; true when changed. */
  async replaceItemEmails(id: string, emailLc: string, items: BatchItemDoc[], emails: string[]): Promise<boolean> {
    const res = await this.models.LicenseBatch.updateOne(
      { _id: id, customer_emails_lc: emailLc },
      { $set: { items, customer_emails_lc: emails } },
    );
    return res.modifiedCount === 1;
  }

  /** What a run got through: the items as they are now, their counts, and a lease renewed. */
  async progress(doc: LicenseBatchDoc, leaseUntil: Date): Promise<void> {
    await this.models.LicenseBatch.updateOne(
      { _id: doc._id, status: 'running' },
      { $set: { items: doc.items, issued: doc.issued, failed: doc.failed, lease_until: leaseUntil } },
    );
  }

  /** The batch done, with its license.batch_completed in the same write. */
  async complete(doc: LicenseBatchDoc, event: DomainEvent): Promise<void> {
    await this.models.LicenseBatch.updateOne(
      { _id: doc._id },
      {
        $set: {
          items: doc.items,
          issued: doc.issued,
          failed: doc.failed,
          status: 'done',
          completed_at: doc.completed_at,
          ...withEvents([event]),
        },
      },
    );
  }
}
