import { Schema, type Connection, type Model } from 'mongoose';
import { outboxFields, outboxOf, withSchemaVersion } from '@licensing/runtime';
import type { DomainEvent, TransferActionEvent } from '@licensing/proto';
import type { ImportFormat } from '../domain/import-rows';
import { leaseLapsed, leaseUntil } from '../domain/job-leases';

// Imports and exports: the job's state, and the files themselves kept as numbered pieces
// (GridFS-like: one document per piece of at most 1 MiB), so a job resumes after a crash from the
// stored file and its checkpoint, and nothing holds a whole file in memory.

export interface ImportDoc {
  _id: string;
  account_id: string;
  format: ImportFormat;
  /** uploading (pieces arriving) | running | done | failed */
  state: 'uploading' | 'running' | 'done' | 'failed';
  /** Pieces stored (0 … chunks - 1) and their bytes. */
  chunks: number;
  bytes: number;
  /** Rows in the file, once counted (-1 until then); rows_read: data rows the job has gone past. */
  total: number;
  /** Every row up to this one (from 1) is done: counted, and its licence written or refused. */
  checkpoint_row: number;
  imported: number;
  skipped: number;
  rejected: number;
  /** The first 1,000 rejected rows (named so: `errors` is a reserved name in mongoose). */
  row_errors: { row: number; message: string }[];
  /**
   * The first 1,000 rows skipped for a reason or imported with a change (records not imported, a webhook
   * endpoint's new secret); absent on imports from before it existed.
   */
  row_notices?: { row: number; message: string }[];
  failure: string;
  /** Rows refused for a key held elsewhere (absent: none; past 20 the import fails). */
  refused_keys?: number;
  /** Runs that stopped on an error (absent: none; the third fails the import). */
  failed_runs?: number;
  /** The run holding the job: its epoch (claimed by a unique insert in import_claims) and until when. */
  epoch: number;
  lease_until: Date | null;
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
  /** Its import.created for the audit log, stored with it (the outbox; cleared once published). */
  outbox?: Record<string, DomainEvent>;
  outbox_pending?: boolean;
}

export interface ChunkDoc {
  /** `${import or export id}:${seq, 6 digits}` */
  _id: string;
  owner_id: string;
  seq: number;
  data: Buffer;
}

export interface ExportDoc {
  _id: string;
  account_id: string;
  /** expired: done, and its file deleted (past its 24 hours, or by an erasure of a customer of the account). */
  state: 'running' | 'done' | 'failed' | 'expired';
  chunks: number;
  bytes: number;
  counts: Record<string, number>;
  failure: string;
  /** While running: until when its writer (a gateway's export job) holds it; each piece and heartbeat renews it. */
  lease_until: Date | null;
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
  /** 24 hours after it finished; the file is deleted after that (and never served). */
  expires_at: Date | null;
  /** Its export.created for the audit log, stored with it (the outbox; cleared once published). */
  outbox?: Record<string, DomainEvent>;
  outbox_pending?: boolean;
}

/**
 * The events of a group of imported licences (license.created, at most 50): stored apart from the
 * licences so each licence is written once (an outbox on it would be cleared by a second write of every
 * licence), and published through the outbox like any document's events.
 */
export interface ImportEventsDoc {
  /** `${import id}:${first row of the batch}:${group}` */
  _id: string;
  import_id: string;
  outbox?: Record<string, DomainEvent>;
  outbox_pending?: boolean;
}

/**
 * An account's place for one job of a kind: `_id` is `import:<account>` or `export:<account>`, held by
 * the job `owner_id` while it is waiting or running. Taken by a unique insert, so two requests at once
 * never both get it (FerretDB's updates are not atomic; an insert under a unique _id is); a finished
 * holder's place is free, and the next job takes it over, so nothing has to give it back.
 */
export interface JobSlotDoc {
  _id: string;
  owner_id: string;
  at: Date;
}

/** A place whose holder is not stored yet is kept this long (its job is being created). */
const YOUNG_SLOT_MS = 60_000;

export const chunkId = (ownerId: string, seq: number) => `${ownerId}:${String(seq).padStart(6, '0')}`;

/** Exports: the job's state (its file is in export_chunks). */
function exportSchema(): Schema<ExportDoc> {
  const exp = new Schema<ExportDoc>(
    {
      _id: String,
      account_id: { type: String, required: true },
      state: { type: String, required: true },
      chunks: { type: Number, default: 0 },
      bytes: { type: Number, default: 0 },
      counts: { type: Object, default: () => ({}) },
      failure: { type: String, default: '' },
      lease_until: { type: Date, default: null },
      created_at: { type: Date, required: true },
      updated_at: { type: Date, required: true },
      finished_at: { type: Date, default: null },
      expires_at: { type: Date, default: null },
      ...outboxFields,
    },
    { versionKey: false, collection: 'exports' },
  );
  // The sweeps: running exports, and finished ones past their 24 hours (expired ones leave `done`, so each
  // pass reads only files still to delete). An erasure: the account's finished exports.
  exp.index({ state: 1, expires_at: 1 });
  exp.index({ account_id: 1, state: 1 });
  return exp;
}

export function importModels(conn: Connection) {
  const imp = new Schema<ImportDoc>(
    {
      _id: String,
      account_id: { type: String, required: true },
      format: { type: String, required: true },
      state: { type: String, required: true },
      chunks: { type: Number, default: 0 },
      bytes: { type: Number, default: 0 },
      total: { type: Number, default: -1 },
      checkpoint_row: { type: Number, default: 0 },
      imported: { type: Number, default: 0 },
      skipped: { type: Number, default: 0 },
      rejected: { type: Number, default: 0 },
      row_errors: { type: [Object], default: [] },
      row_notices: { type: [Object], default: [] },
      failure: { type: String, default: '' },
      refused_keys: { type: Number, default: 0 },
      failed_runs: { type: Number, default: 0 },
      epoch: { type: Number, default: 0 },
      lease_until: { type: Date, default: null },
      created_at: { type: Date, required: true },
      updated_at: { type: Date, required: true },
      finished_at: { type: Date, default: null },
      ...outboxFields,
    },
    { versionKey: false, collection: 'imports' },
  );
  imp.index({ state: 1 }); // the job's look for running imports (a few at most)
  const chunk = new Schema<ChunkDoc>(
    { _id: String, owner_id: { type: String, required: true }, seq: Number, data: Buffer },
    { versionKey: false, collection: 'import_chunks' },
  );
  chunk.index({ owner_id: 1 });
  const claim = new Schema<{ _id: string; at: Date }>(
    { _id: String, at: Date },
    { versionKey: false, collection: 'import_claims' },
  );
  const exp = exportSchema();
  const exportChunk = new Schema<ChunkDoc>(
    { _id: String, owner_id: { type: String, required: true }, seq: Number, data: Buffer },
    { versionKey: false, collection: 'export_chunks' },
  );
  exportChunk.index({ owner_id: 1 });
  // An account's one place for an import and one for an export (JobSlotDoc).
  const slot = new Schema<JobSlotDoc>(
    { _id: String, owner_id: { type: String, required: true }, at: { type: Date, required: true } },
    { versionKey: false, collection: 'job_slots' },
  );
  const events = new Schema<ImportEventsDoc>(
    { _id: String, import_id: { type: String, required: true }, ...outboxFields },
    { versionKey: false, collection: 'import_events' },
  );
  return {
    ImportEvents: conn.model<ImportEventsDoc>('ImportEvents', events) as Model<ImportEventsDoc>,
    Import: conn.model<ImportDoc>('Import', imp) as Model<ImportDoc>,
    ImportChunk: conn.model<ChunkDoc>('ImportChunk', chunk) as Model<ChunkDoc>,
    JobSlot: conn.model<JobSlotDoc>('JobSlot', slot) as Model<JobSlotDoc>,
    ImportClaim: conn.model<{ _id: string; at: Date }>('ImportClaim', claim) as Model<{ _id: string; at: Date }>,
    Export: conn.model<ExportDoc>('Export', exp) as Model<ExportDoc>,
    ExportChunk: conn.model<ChunkDoc>('ExportChunk', exportChunk) as Model<ChunkDoc>,
  };
}

export type ImportModels = ReturnType<typeof importModels>;

const isDuplicate = (err: unknown) => (err as { code?: number })?.code === 11000;

/** A new document with these actions in its outbox: published as its events are (an action is one in all but type). */
const withActions = <T>(doc: T, actions: TransferActionEvent[]): T =>
  actions.length ? { ...doc, ...outboxOf(actions as unknown as DomainEvent[]) } : doc;

export class ImportStore {
  constructor(readonly models: ImportModels) {}

  /** Stores a new import with its audit-only action (import.created) in its outbox, in the one insert. */
  async create(doc: ImportDoc, actions: TransferActionEvent[] = []): Promise<void> {
    await this.models.Import.create(withActions(doc, actions));
  }

  get(accountId: string, id: string): Promise<ImportDoc | null> {
    return this.models.Import.findOne({ _id: id, account_id: accountId }).lean<ImportDoc>().exec();
  }

  byId(id: string): Promise<ImportDoc | null> {
    return this.models.Import.findOne({ _id: id }).lean<ImportDoc>().exec();
  }

  /** Stores one piece (again: the same piece twice is the same document). */
  async putChunk(ownerId: string, seq: number, data: Uint8Array, exported = false): Promise<void> {
    const model = exported ? this.models.ExportChunk : this.models.ImportChunk;
    const doc = { _id: chunkId(ownerId, seq), owner_id: ownerId, seq, data: Buffer.from(data) };
    try {
      // An insert: cheaper on FerretDB than an upsert, which reads first. The driver's, so stamped here.
      await model.collection.insertOne(withSchemaVersion(model, doc) as never);
    } catch (err) {
      if (!isDuplicate(err)) throw err;
      await model.updateOne({ _id: doc._id }, { $set: { data: doc.data } });
    }
  }

  async chunk(ownerId: string, seq: number, exported = false): Promise<Buffer | null> {
    const model = exported ? this.models.ExportChunk : this.models.ImportChunk;
    const doc = await model
      .findOne({ _id: chunkId(ownerId, seq) })
      .lean<ChunkDoc>()
      .exec();
    if (!doc) return null;
    const d = doc.data as unknown as Buffer | { buffer: Buffer };
    return Buffer.isBuffer(d) ? d : Buffer.from((d as { buffer: Buffer }).buffer);
  }

  async deleteChunks(ownerId: string, exported = false): Promise<void> {
    const model = exported ? this.models.ExportChunk : this.models.ImportChunk;
    await model.deleteMany({ owner_id: ownerId });
  }

  async update(id: string, set: Partial<ImportDoc>): Promise<void> {
    await this.models.Import.updateOne({ _id: id }, { $set: set });
  }

  /** Writes the run's progress only while it still holds the job (its epoch). */
  async checkpoint(id: string, epoch: number, set: Partial<ImportDoc>): Promise<boolean> {
    const res = await this.models.Import.updateOne({ _id: id, epoch }, { $set: set });
    return res.matchedCount === 1;
  }

  /** Uploads that received no piece since `before` (their gateway stopped mid-file). */
  async stalledUploads(before: Date): Promise<ImportDoc[]> {
    const uploading = await this.models.Import.find({ state: 'uploading' }).limit(200).lean<ImportDoc[]>().exec();
    return uploading.filter((d) => d.updated_at.getTime() < before.getTime());
  }

  /** Fails an upload only if no piece came since it was read (a late piece keeps it). */
  async failUpload(doc: ImportDoc, set: Partial<ImportDoc>): Promise<boolean> {
    const res = await this.models.Import.updateOne(
      { _id: doc._id, state: 'uploading', updated_at: doc.updated_at },
      { $set: set },
    );
    return res.matchedCount === 1;
  }

  /** Imports waiting for a run, or whose run stopped renewing its lease (a crash). */
  async runnable(now: Date): Promise<ImportDoc[]> {
    const running = await this.models.Import.find({ state: 'running' }).limit(50).lean<ImportDoc[]>().exec();
    return running.filter((d) => leaseLapsed(d.lease_until, now));
  }

  /**
   * Takes the job for a run: the unique insert of its next epoch decides between runs (FerretDB's
   * updates are not atomic; an insert under a unique _id is).
   */
  async claim(doc: ImportDoc, now: Date, leaseMs: number): Promise<number | null> {
    const epoch = doc.epoch + 1;
    try {
      await this.models.ImportClaim.create({ _id: `${doc._id}:${epoch}`, at: now });
    } catch (err) {
      if (isDuplicate(err)) return null;
      throw err;
    }
    await this.models.Import.updateOne(
      { _id: doc._id },
      { $set: { epoch, lease_until: leaseUntil(now, leaseMs), updated_at: now } },
    );
    return epoch;
  }

  /** Stores a group's events (again after a crash: the same group is the same document, kept once). */
  async insertEvents(id: string, importId: string, events: DomainEvent[]): Promise<boolean> {
    try {
      await this.models.ImportEvents.create({ _id: id, import_id: importId, ...outboxOf(events) });
      return true;
    } catch (err) {
      if (isDuplicate(err)) return false;
      throw err;
    }
  }

  /**
   * Takes the account's place for a job of this kind for `ownerId` (before that job is stored): null
   * when taken, else the id of the job holding it (waiting or running).
   */
  async takeSlot(kind: 'import' | 'export', accountId: string, ownerId: string, now: Date): Promise<string | null> {
    const id = `${kind}:${accountId}`;
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await this.models.JobSlot.create({ _id: id, owner_id: ownerId, at: now });
        return null;
      } catch (err) {
        if (!isDuplicate(err)) throw err;
      }
      const held = await this.models.JobSlot.findOne({ _id: id }).lean<JobSlotDoc>().exec();
      if (!held) continue;
      if (await this.holds(kind, held, now)) return held.owner_id;
      // Its job is over: the place is taken back from that holder only (another request may have done so).
      await this.models.JobSlot.deleteOne({ _id: id, owner_id: held.owner_id });
    }
    const held = await this.models.JobSlot.findOne({ _id: id }).lean<JobSlotDoc>().exec();
    return held?.owner_id ?? ownerId;
  }

  /** Gives the place back (the job was refused before it was stored). */
  async freeSlot(kind: 'import' | 'export', accountId: string, ownerId: string): Promise<void> {
    await this.models.JobSlot.deleteOne({ _id: `${kind}:${accountId}`, owner_id: ownerId });
  }

  /** Whether a place's holder still holds it: its job waiting or running (or still being created). */
  private async holds(kind: 'import' | 'export', slot: JobSlotDoc, now: Date): Promise<boolean> {
    const job =
      kind === 'import'
        ? await this.models.Import.findOne({ _id: slot.owner_id }, { state: 1 }).lean<Pick<ImportDoc, 'state'>>().exec()
        : await this.models.Export.findOne({ _id: slot.owner_id }, { state: 1 })
            .lean<Pick<ExportDoc, 'state'>>()
            .exec();
    if (!job) return now.getTime() - new Date(slot.at).getTime() < YOUNG_SLOT_MS;
    return job.state === 'uploading' || job.state === 'running';
  }

  // Exports.

  /** Stores a new export with its audit-only action (export.created) in its outbox, in the one insert. */
  async createExport(doc: ExportDoc, actions: TransferActionEvent[] = []): Promise<void> {
    await this.models.Export.create(withActions(doc, actions));
  }

  getExport(accountId: string, id: string): Promise<ExportDoc | null> {
    return this.models.Export.findOne({ _id: id, account_id: accountId }).lean<ExportDoc>().exec();
  }

  async updateExport(id: string, set: Partial<ExportDoc>, inc?: Record<string, number>): Promise<void> {
    await this.models.Export.updateOne({ _id: id }, { $set: set, ...(inc ? { $inc: inc } : {}) });
  }

  /** Changes an export only while it is running (false: it was finished or failed meanwhile). */
  async updateRunningExport(id: string, set: Partial<ExportDoc>, inc?: Record<string, number>): Promise<boolean> {
    const res = await this.models.Export.updateOne(
      { _id: id, state: 'running' },
      { $set: set, ...(inc ? { $inc: inc } : {}) },
    );
    return res.matchedCount === 1;
  }

  /** Running exports (a few at most: each is a gateway's job of the moment), for the sweep of stopped ones. */
  runningExports(): Promise<ExportDoc[]> {
    return this.models.Export.find({ state: 'running' }).limit(200).lean<ExportDoc[]>().exec();
  }

  /** Finished exports past their 24 hours whose file is still stored (at most `limit` per pass). */
  expiredExports(now: Date, limit = 200): Promise<ExportDoc[]> {
    return this.models.Export.find({ state: 'done', expires_at: { $lte: now } })
      .limit(limit)
      .lean<ExportDoc[]>()
      .exec();
  }

  /** The account's finished exports whose file is still stored (at most `limit`). */
  finishedExports(accountId: string, limit: number): Promise<ExportDoc[]> {
    return this.models.Export.find({ account_id: accountId, state: 'done' }).limit(limit).lean<ExportDoc[]>().exec();
  }

  /** A finished export whose file was deleted: stored `expired`, so no later pass reads it again. */
  async markExportExpired(id: string, now: Date): Promise<void> {
    await this.models.Export.updateOne(
      { _id: id, state: 'done' },
      { $set: { state: 'expired', chunks: 0, updated_at: now } },
    );
  }
}
