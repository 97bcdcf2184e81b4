import type { DomainEvent } from '@licensing/proto';
import { ImportFileError, type FileRow } from '../domain/import-formats';
import { checkRow, type ComparableLicense } from '../domain/import-rows';
import { leaseUntil } from '../domain/job-leases';
import type { ImportDoc } from '../store/imports';
import { writeLicenseRows, type LicenseRow } from './import-batch';
import { Breather, countRows, fileRows } from './import-pacing';
import { ImportPeers } from './import-peers';
import { ImportTally, KEY_REFUSED, MAX_REFUSED_KEYS } from './import-tally';
import { IMPORT_BATCH, IMPORT_LEASE_MS, type ImportDeps } from './imports';

// One run of an import (docs/api.md "Imports"): the stored file read back a batch of rows at a time:
// one read for the batch's keys already stored anywhere, one unordered insert of its new licences and
// one of their machines (through the licence core), then a checkpoint. A run that dies is taken over
// from the last checkpoint; rows written after it are recognised by the import and row they carry
// (`imported_from`), so a row is never imported twice nor counted twice.

/** license.created events stored (and published) together. */
const EVENTS_PER_GROUP = 50;

/** One run of an import job: from its checkpoint to the end of the file, a batch at a time. */
export class ImportRun {
  private readonly tally: ImportTally;
  private readonly peers: ImportPeers;
  /** Gives the event loop a turn between short stretches of work (parsing, checking rows). */
  readonly breather = new Breather();
  /** Keys met in this run, with the row and form they had (a key twice in one file). */
  private readonly seen = new Map<string, { row: number; form: ComparableLicense }>();

  constructor(
    private readonly deps: ImportDeps,
    private doc: ImportDoc,
    private readonly epoch: number,
    /** True once the service is stopping: the run stops after its batch, and the job resumes elsewhere. */
    private readonly stopping: () => boolean = () => false,
  ) {
    this.tally = new ImportTally(doc);
    this.peers = new ImportPeers(deps, doc.account_id, this.tally);
  }

  /** False when another run took the job over (this one stops). */
  async run(): Promise<boolean> {
    const steps = this.steps();
    for (;;) {
      const step = await steps.next();
      if (step.done) return step.value;
    }
  }

  /**
   * The run a batch at a time: it pauses after each batch (checkpointed), so a runner can take the
   * imports of several accounts in turn. Its value: false when another run took the job over.
   */
  async *steps(): AsyncGenerator<void, boolean> {
    const { deps, doc } = this;
    try {
      if (doc.total < 0) {
        const piece = (seq: number) => deps.imports.chunk(doc._id, seq);
        const total = await countRows(doc.format, doc.chunks, piece, this.breather, missingPiece);
        if (!(await deps.imports.checkpoint(doc._id, this.epoch, { total, ...this.lease() }))) return false;
        this.doc = { ...doc, total };
      }
      let batch: FileRow[] = [];
      let last = 0;
      const piece = (seq: number) => deps.imports.chunk(doc._id, seq);
      for await (const row of fileRows(doc.format, doc.chunks, piece, this.breather, missingPiece)) {
        last = row.row;
        if (row.row <= this.tally.fields.checkpoint_row) continue;
        batch.push(row);
        if (batch.length < IMPORT_BATCH) continue;
        if (!(await this.batch(batch))) return false;
        batch = [];
        if (this.stopping()) {
          // Another run (this instance after a restart, or another) takes it from the checkpoint.
          await deps.imports.checkpoint(doc._id, this.epoch, { lease_until: null });
          return false;
        }
        yield;
      }
      if (batch.length && !(await this.batch(batch))) return false;
      return await this.done(last);
    } catch (err) {
      if (!(err instanceof ImportFileError)) throw err;
      await this.failWith(err.message);
      return true;
    }
  }

  /** Every row read: the import done, with the rows read as its exact total, and its file deleted. */
  private async done(last: number): Promise<boolean> {
    const { deps, doc } = this;
    const now = deps.clock.now();
    // The rows read, exactly (the first count of a CSV file counts its lines).
    const total = Math.max(last, this.tally.fields.checkpoint_row);
    const set = { state: 'done' as const, total, finished_at: now, updated_at: now, lease_until: null };
    if (!(await deps.imports.checkpoint(doc._id, this.epoch, set))) return false;
    await deps.imports.deleteChunks(doc._id);
    return true;
  }

  /** Ends the import failed (rows before stay imported), its file deleted. */
  private async failWith(failure: string): Promise<void> {
    const now = this.deps.clock.now();
    await this.deps.imports.checkpoint(this.doc._id, this.epoch, {
      ...this.tally.fields,
      state: 'failed',
      failure,
      finished_at: now,
      updated_at: now,
      lease_until: null,
    });
    await this.deps.imports.deleteChunks(this.doc._id);
  }

  private lease() {
    const now = this.deps.clock.now();
    return { lease_until: leaseUntil(now, IMPORT_LEASE_MS), updated_at: now };
  }

  /** One batch: checked, matched against what is stored, written, and the checkpoint moved past it. */
  private async batch(rows: FileRow[]): Promise<boolean> {
    const { deps } = this;
    const now = deps.clock.now();
    const licenses = await this.checkRows(rows, now);
    const writer = { core: deps.licenses, imp: this.doc, tally: this.tally, seen: this.seen };
    const events = await writeLicenseRows(writer, licenses, now);
    await this.publish(rows[0]?.row ?? 0, events);
    this.tally.closeBatch(rows[rows.length - 1]?.row ?? this.tally.fields.checkpoint_row);
    const progress = { ...this.tally.fields, ...this.lease() };
    if (!(await deps.imports.checkpoint(this.doc._id, this.epoch, progress))) return false;
    if (this.tally.tooManyRefusedKeys)
      throw new ImportFileError(
        `more than ${MAX_REFUSED_KEYS} rows were refused their key ("${KEY_REFUSED}"): the import is stopped (the rows before stay imported)`,
      );
    return true;
  }

  /**
   * The batch's rows checked: products and webhook endpoints made (or matched) at once, records noted,
   * bad rows rejected; the licence rows, each with its product, left to write.
   */
  private async checkRows(rows: FileRow[], now: Date): Promise<LicenseRow[]> {
    const { tally, peers } = this;
    const licenses: LicenseRow[] = [];
    for (const r of rows) {
      await this.breather.afterRow();
      if ('error' in r) {
        tally.reject(r.row, r.error);
        continue;
      }
      const checked = checkRow(r.fields, now);
      if (checked.kind === 'rejected') tally.reject(r.row, checked.message);
      else if (checked.kind === 'record') {
        tally.skipped();
        tally.notice(r.row, checked.reason);
      } else if (checked.kind === 'webhook_endpoint') await peers.endpoint(r.row, checked.endpoint);
      else if (checked.kind === 'product') {
        const made = await peers.refusedAs(r.row, 'product', () =>
          peers.productNamed(checked.product.name, checked.product),
        );
        if (made?.created) tally.imported();
        else if (made) tally.skipped();
      } else {
        const row = checked.row;
        const product = await peers.refusedAs(r.row, 'product', async () =>
          peers.product(row.product_id || (await peers.productNamed(row.product_name)).id),
        );
        if (product === undefined) continue;
        if (!product) tally.reject(r.row, `product_id ${row.product_id}: no such product in this account`);
        else licenses.push({ row: r.row, data: row, product });
      }
    }
    return licenses;
  }

  /** The batch's license.created events, in groups stored apart from the licences and published now. */
  private async publish(firstRow: number, events: DomainEvent[]): Promise<void> {
    const { deps } = this;
    for (let g = 0; g * EVENTS_PER_GROUP < events.length; g++) {
      const group = events.slice(g * EVENTS_PER_GROUP, (g + 1) * EVENTS_PER_GROUP);
      const id = `${this.doc._id}:${firstRow}:${g}`;
      if (await deps.imports.insertEvents(id, this.doc._id, group))
        void deps.outbox.flush(deps.imports.models.ImportEvents, id, group);
    }
  }
}

const missingPiece = (seq: number) => new ImportFileError(`piece ${seq} of the file is missing`);
