import { AppError, isId, newId, type Clock, type Logger, type Outbox } from '@licensing/runtime';
import {
  MAX_FILE_PIECE_BYTES,
  MAX_IMPORT_BYTES,
  accountLimits,
  graceEndsAt,
  withPolicyDefaults,
  type CreateProductRequest,
  type Import,
  type CreateWebhookEndpointRequest,
  type ListProductsRequest,
  type ListProductsResponse,
  type ListWebhookEndpointsRequest,
  type ListWebhookEndpointsResponse,
  type Product,
  type WebhookEndpointWithSecret,
} from '@licensing/proto';
import { storedPolicy, withProductEntitlements } from '../domain/entitlements';
import { expiryBucket } from '../domain/expiry';
import { checkHead, ImportFileError, type FileRow } from '../domain/import-formats';
import {
  checkRow,
  endpointForm,
  firstDifference,
  importFormats,
  MAX_IMPORT_ERRORS,
  policyKey,
  type ComparableLicense,
  type ImportEndpoint,
  type ImportFormat,
  type ImportProduct,
  type ImportRow,
} from '../domain/import-rows';
import { licenseEvent } from '../events/license-events';
import type { ActivationDoc, LicenseDoc } from '../store/models';
import type { ImportDoc, ImportStore } from '../store/imports';
import type { ImportedLicenses } from '../store/imported-licenses';
import { leaseUntil } from '../domain/job-leases';
import { leaseOf } from './activations';
import { Breather, fileRows } from './import-pacing';

// Imports (issue 32, docs/api.md "Imports"): a file arrives in pieces, is stored whole, and a job reads it
// back a batch of rows at a time: one read for the batch's keys already stored anywhere, one unordered
// insert of its new licences and one of their machines, then a checkpoint. A run that dies is taken over
// from the last checkpoint; rows written after it are recognised by the import and row they carry
// (`imported_from`), so a row is never imported twice nor counted twice.

/** Rows written together. */
export const IMPORT_BATCH = 1000;
/** How long a run holds an import without renewing (each batch renews it). */
export const IMPORT_LEASE_MS = 30_000;
/**
 * What a row whose key another account holds (or held, before a reroll) is told: the same words
 * whichever it is, and nothing about that account.
 */
export const KEY_REFUSED =
  'key refused: keys are unique across the whole system, and this one cannot be given to this account';
/**
 * Rows of one import refused so (KEY_REFUSED) beyond which the import fails: an honest file of an
 * account's own keys has next to none, and trying keys one by one is not a way to learn which exist.
 */
export const MAX_REFUSED_KEYS = accountLimits.import_refused_keys;
/** Runs of an import that may stop on an error (the service away, a bug) before it is failed with it. */
export const MAX_FAILED_RUNS = 3;
/** A refusal of one row by another service (its product or webhook endpoint), not an outage. */
const isRowRefusal = (err: unknown): err is AppError =>
  err instanceof AppError &&
  (err.code === 'invalid_request' ||
    err.code === 'conflict' ||
    err.code === 'not_found' ||
    err.code === 'forbidden' ||
    err.code === 'payload_too_large');
/** license.created events stored (and published) together. */
const EVENTS_PER_GROUP = 50;

export interface ProductAdmin {
  getProduct(req: { account_id: string; id: string }): Promise<Product>;
  listProducts(req: ListProductsRequest): Promise<ListProductsResponse>;
  createProduct(req: CreateProductRequest): Promise<Product>;
}

/** What an import asks of the webhook service: an export's endpoints are created in the account (issue 32). */
export interface WebhookAdmin {
  listEndpoints(req: ListWebhookEndpointsRequest): Promise<ListWebhookEndpointsResponse>;
  createEndpoint(req: CreateWebhookEndpointRequest): Promise<WebhookEndpointWithSecret>;
}

export interface ImportDeps {
  licenses: ImportedLicenses;
  imports: ImportStore;
  products: ProductAdmin;
  /** Absent: webhook endpoint lines are rejected (no webhook service to make them in). */
  webhooks?: WebhookAdmin;
  outbox: Pick<Outbox, 'flush'>;
  clock: Clock;
  log?: Logger;
}

export function presentImport(doc: ImportDoc): Import {
  return {
    id: doc._id,
    account_id: doc.account_id,
    format: doc.format,
    status: doc.state === 'uploading' ? 'running' : doc.state,
    total: Math.max(doc.total, doc.checkpoint_row),
    imported: doc.imported,
    skipped: doc.skipped,
    rejected: doc.rejected,
    errors: doc.row_errors,
    notices: doc.row_notices ?? [],
    created_at: doc.created_at.toISOString(),
    finished_at: doc.finished_at?.toISOString() ?? '',
    failure: doc.failure,
    bytes: doc.bytes,
  };
}

async function own(deps: ImportDeps, accountId: string, id: string): Promise<ImportDoc> {
  const doc = isId('imp', id) ? await deps.imports.get(accountId, id) : null;
  if (!doc) throw AppError.notFound('import');
  return doc;
}

export async function createImport(deps: ImportDeps, accountId: string, format: string): Promise<ImportDoc> {
  if (!(importFormats as readonly string[]).includes(format))
    throw AppError.invalid('format', `format must be one of ${importFormats.join(', ')}`);
  const now = deps.clock.now();
  const id = newId('imp', now.getTime());
  const holder = await deps.imports.takeSlot('import', accountId, id, now);
  if (holder)
    throw new AppError(
      'conflict',
      `this account already has an import waiting or running (${holder}): an account runs ${accountLimits.imports_at_once} import at a time; send the next once it is done or failed`,
    );
  const doc: ImportDoc = {
    _id: id,
    account_id: accountId,
    format: format as ImportFormat,
    state: 'uploading',
    chunks: 0,
    bytes: 0,
    total: -1,
    checkpoint_row: 0,
    imported: 0,
    skipped: 0,
    rejected: 0,
    row_errors: [],
    row_notices: [],
    failure: '',
    epoch: 0,
    lease_until: null,
    created_at: now,
    updated_at: now,
    finished_at: null,
  };
  await deps.imports.create(doc);
  return doc;
}

async function fail(deps: ImportDeps, doc: ImportDoc, failure: string): Promise<ImportDoc> {
  const now = deps.clock.now();
  const set = { state: 'failed' as const, failure, finished_at: now, updated_at: now };
  await deps.imports.update(doc._id, set);
  await deps.imports.deleteChunks(doc._id);
  return { ...doc, ...set };
}

export async function appendImportChunk(
  deps: ImportDeps,
  accountId: string,
  id: string,
  seq: number,
  data: Uint8Array,
): Promise<ImportDoc> {
  const doc = await own(deps, accountId, id);
  if (doc.state !== 'uploading') throw new AppError('conflict', `the import is ${doc.state}: its file is complete`);
  if (data.byteLength > MAX_FILE_PIECE_BYTES)
    throw AppError.invalid('data', `a piece is at most ${MAX_FILE_PIECE_BYTES} bytes`);
  // The same piece again (a retried call) is stored again under its number; any other order is refused.
  if (seq !== doc.chunks && seq !== doc.chunks - 1)
    throw new AppError('conflict', `piece ${seq} out of order: piece ${doc.chunks} is next`);
  const repeat = seq === doc.chunks - 1;
  if (!repeat && doc.bytes + data.byteLength > MAX_IMPORT_BYTES) {
    await fail(deps, doc, `the file is larger than ${MAX_IMPORT_BYTES / 1024 / 1024} MB`);
    throw new AppError('payload_too_large', `an import file is at most ${MAX_IMPORT_BYTES / 1024 / 1024} MB`);
  }
  if (seq === 0) {
    const problem = checkHead(doc.format, data);
    if (problem) {
      await fail(deps, doc, problem);
      throw AppError.invalid('body', problem);
    }
  }
  await deps.imports.putChunk(doc._id, seq, data);
  if (repeat) return doc;
  const set = { chunks: doc.chunks + 1, bytes: doc.bytes + data.byteLength, updated_at: deps.clock.now() };
  await deps.imports.update(doc._id, set);
  return { ...doc, ...set };
}

export async function startImport(deps: ImportDeps, accountId: string, id: string): Promise<ImportDoc> {
  const doc = await own(deps, accountId, id);
  if (doc.state !== 'uploading') return doc;
  if (doc.chunks === 0) {
    await fail(deps, doc, 'the file is empty');
    throw AppError.invalid('body', 'the file is empty');
  }
  const set = { state: 'running' as const, updated_at: deps.clock.now() };
  await deps.imports.update(doc._id, set);
  return { ...doc, ...set };
}

export async function abandonImport(deps: ImportDeps, accountId: string, id: string): Promise<ImportDoc> {
  const doc = await own(deps, accountId, id);
  if (doc.state !== 'uploading') return doc;
  return fail(deps, doc, 'the upload broke off before the whole file arrived');
}

/**
 * An upload that received no piece for this long is failed and its pieces deleted: the gateway that
 * streamed it stopped (a crash or a kill: a broken connection is abandoned by that gateway at once).
 */
export const UPLOAD_IDLE_MS = 10 * 60_000;

/** The job's sweep: fails uploads cut off by a gateway that stopped (UPLOAD_IDLE_MS); how many. */
export async function failStalledUploads(deps: ImportDeps): Promise<number> {
  const now = deps.clock.now();
  let failed = 0;
  for (const doc of await deps.imports.stalledUploads(new Date(now.getTime() - UPLOAD_IDLE_MS))) {
    const set = {
      state: 'failed' as const,
      failure: 'the upload broke off before the whole file arrived (no piece for 10 minutes)',
      finished_at: now,
      updated_at: now,
    };
    if (!(await deps.imports.failUpload(doc, set))) continue;
    await deps.imports.deleteChunks(doc._id);
    failed++;
  }
  return failed;
}

export async function getImport(deps: ImportDeps, accountId: string, id: string): Promise<ImportDoc> {
  return own(deps, accountId, id);
}

/** Where a licence came from: the import and its row (what makes a resumed run recognise its own rows). */
export interface ImportedFrom {
  import_id: string;
  row: number;
}

type Tally = Pick<ImportDoc, 'imported' | 'skipped' | 'rejected' | 'row_errors' | 'checkpoint_row'> & {
  row_notices: NonNullable<ImportDoc['row_notices']>;
  refused_keys: number;
};

/** One run of an import job: from its checkpoint to the end of the file, a batch at a time. */
export class ImportRun {
  private readonly tally: Tally;
  private names?: Map<string, string>;
  private readonly productsById = new Map<string, Product | null>();
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
    this.tally = {
      imported: doc.imported,
      skipped: doc.skipped,
      rejected: doc.rejected,
      row_errors: [...doc.row_errors],
      row_notices: [...(doc.row_notices ?? [])],
      checkpoint_row: doc.checkpoint_row,
      refused_keys: doc.refused_keys ?? 0,
    };
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
        const total = await this.count();
        if (!(await deps.imports.checkpoint(doc._id, this.epoch, { total, ...this.lease() }))) return false;
        this.doc = { ...doc, total };
      }
      let batch: FileRow[] = [];
      let last = 0;
      const rows = fileRows(
        doc.format,
        doc.chunks,
        (seq) => deps.imports.chunk(doc._id, seq),
        this.breather,
        (seq) => new ImportFileError(`piece ${seq} of the file is missing`),
      );
      for await (const row of rows) {
        last = row.row;
        if (row.row <= this.tally.checkpoint_row) continue;
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
      const now = deps.clock.now();
      // The rows read, exactly (the first count of a CSV file counts its lines).
      const total = Math.max(last, this.tally.checkpoint_row);
      if (
        !(await deps.imports.checkpoint(doc._id, this.epoch, {
          state: 'done',
          total,
          finished_at: now,
          updated_at: now,
          lease_until: null,
        }))
      )
        return false;
      await deps.imports.deleteChunks(doc._id);
      return true;
    } catch (err) {
      if (!(err instanceof ImportFileError)) throw err;
      await this.failWith(err.message);
      return true;
    }
  }

  /** Ends the import failed (rows before stay imported), its file deleted. */
  private async failWith(failure: string): Promise<void> {
    const now = this.deps.clock.now();
    await this.deps.imports.checkpoint(this.doc._id, this.epoch, {
      ...this.tally,
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

  /**
   * The file's data rows, counted without reading them (the progress has its total): its lines that
   * hold anything but white space, less a CSV file's header. A quoted CSV field over several lines
   * counts more than once: the total is made exact when the import is done.
   */
  private async count(): Promise<number> {
    const counter = new LineCounter();
    let lines = 0;
    for (let seq = 0; seq < this.doc.chunks; seq++) {
      const data = await this.deps.imports.chunk(this.doc._id, seq);
      if (!data) throw new ImportFileError(`piece ${seq} of the file is missing`);
      lines += counter.push(data).length;
      await this.breather.turn();
    }
    lines += counter.end().length;
    return this.doc.format === 'jsonl' ? lines : Math.max(lines - 1, 0);
  }

  /** This batch's rejections, added to the import's in row order at its end. */
  private batchErrors: { row: number; message: string }[] = [];

  private reject(row: number, message: string): void {
    this.tally.rejected++;
    this.batchErrors.push({ row, message });
  }

  /** This batch's notices (a row skipped for a reason, or imported with a change), added at its end. */
  private batchNotices: { row: number; message: string }[] = [];

  private notice(row: number, message: string): void {
    this.batchNotices.push({ row, message });
  }

  /** The account's webhook endpoints by form, each matching one line at most (read once per run). */
  private endpointForms?: Map<string, string[]>;

  /**
   * An export's webhook endpoint: skipped when the account has one of the same url, events, description
   * and enabled (running the file again adds nothing), else created with a new signing secret (the file
   * never holds one), which the import's notices say. A url or events the webhook service refuses
   * reject the row with its message.
   */
  private async endpoint(row: number, e: ImportEndpoint): Promise<void> {
    const webhooks = this.deps.webhooks;
    if (!webhooks) {
      this.reject(row, 'webhook_endpoint: webhook endpoints cannot be imported here');
      return;
    }
    if (!this.endpointForms) {
      const forms = new Map<string, string[]>();
      let after = '';
      for (;;) {
        const page = await webhooks.listEndpoints({
          account_id: this.doc.account_id,
          page: { limit: 100, starting_after: after },
        });
        for (const x of page.data) {
          const form = endpointForm({ url: x.url, events: x.events, description: x.description, enabled: x.enabled });
          forms.set(form, [...(forms.get(form) ?? []), x.id]);
        }
        if (!page.page?.has_more || !page.page.next_cursor) break;
        after = page.page.next_cursor;
      }
      this.endpointForms = forms;
    }
    const form = endpointForm(e);
    const same = this.endpointForms.get(form);
    if (same?.length) {
      same.shift();
      this.tally.skipped++;
      return;
    }
    let made: WebhookEndpointWithSecret;
    try {
      made = await webhooks.createEndpoint({
        account_id: this.doc.account_id,
        url: e.url,
        events: e.events,
        description: e.description,
        enabled: e.enabled,
      });
    } catch (err) {
      if (err instanceof AppError && (err.code === 'invalid_request' || err.code === 'conflict')) {
        this.reject(row, `webhook_endpoint: ${err.message}`);
        return;
      }
      throw err; // the webhook service away: the run stops, and the job resumes from its checkpoint
    }
    const id = made.endpoint!.id;
    this.tally.imported++;
    this.notice(
      row,
      `webhook_endpoint: created as ${id} with a new signing secret (an export never holds one): POST /api/v1/webhooks/${id}/rotate-secret shows a secret to verify its deliveries with`,
    );
  }

  private async productNamed(name: string, create?: ImportProduct): Promise<{ id: string; created: boolean }> {
    const names = await this.productNames();
    const known = names.get(name);
    if (known) return { id: known, created: false };
    const product = await this.deps.products.createProduct({
      account_id: this.doc.account_id,
      name,
      description: create?.description ?? '',
      policy: create?.policy,
      price: create?.price,
      email_on_purchase: create?.email_on_purchase,
    });
    names.set(name, product.id);
    this.productsById.set(product.id, product);
    return { id: product.id, created: true };
  }

  /** The account's products by name (read once per run, page by page; the first of a name wins). */
  private async productNames(): Promise<Map<string, string>> {
    if (this.names) return this.names;
    const names = new Map<string, string>();
    let after = '';
    for (;;) {
      const page = await this.deps.products.listProducts({
        account_id: this.doc.account_id,
        page: { limit: 100, starting_after: after },
      });
      // Newest first: an older product of the same name wins.
      for (const p of page.data) names.set(p.name, p.id);
      if (!page.page?.has_more || !page.page.next_cursor) break;
      after = page.page.next_cursor;
    }
    this.names = names;
    return names;
  }

  private async product(id: string): Promise<Product | null> {
    if (this.productsById.has(id)) return this.productsById.get(id)!;
    let product: Product | null = null;
    try {
      product = await this.deps.products.getProduct({ account_id: this.doc.account_id, id });
    } catch (err) {
      if (!(err instanceof AppError) || err.code !== 'not_found') throw err;
    }
    this.productsById.set(id, product);
    return product;
  }

  /**
   * What `work` gives, or undefined once the row is rejected with the refusal of the service asked
   * (a product name or policy the product service refuses, its cap on products): a row it refuses
   * never stops the run. An outage throws on (the run stops, and is resumed from its checkpoint).
   */
  private async refusedAs<T>(row: number, what: string, work: () => Promise<T>): Promise<T | undefined> {
    try {
      return await work();
    } catch (err) {
      if (!isRowRefusal(err)) throw err;
      this.reject(row, `${what}: ${err.message}`);
      return undefined;
    }
  }

  /** A row refused for a key held elsewhere (KEY_REFUSED); past MAX_REFUSED_KEYS the import fails. */
  private refuseKey(row: number): void {
    this.tally.refused_keys++;
    this.reject(row, KEY_REFUSED);
  }

  /** One batch: checked, matched against what is stored, written, and the checkpoint moved past it. */
  private async batch(rows: FileRow[]): Promise<boolean> {
    const { deps } = this;
    const now = deps.clock.now();
    const licenses: { row: number; data: ImportRow; product: Product }[] = [];
    for (const r of rows) {
      await this.breather.afterRow();
      if ('error' in r) {
        this.reject(r.row, r.error);
        continue;
      }
      const checked = checkRow(r.fields, now);
      if (checked.kind === 'rejected') this.reject(r.row, checked.message);
      else if (checked.kind === 'record') {
        this.tally.skipped++;
        this.notice(r.row, checked.reason);
      } else if (checked.kind === 'webhook_endpoint') await this.endpoint(r.row, checked.endpoint);
      else if (checked.kind === 'product') {
        const made = await this.refusedAs(r.row, 'product', () =>
          this.productNamed(checked.product.name, checked.product),
        );
        if (made?.created) this.tally.imported++;
        else if (made) this.tally.skipped++;
      } else {
        const row = checked.row;
        const product = await this.refusedAs(r.row, 'product', async () =>
          this.product(row.product_id || (await this.productNamed(row.product_name)).id),
        );
        if (product === undefined) continue;
        if (!product) {
          this.reject(r.row, `product_id ${row.product_id}: no such product in this account`);
          continue;
        }
        licenses.push({ row: r.row, data: row, product });
      }
    }

    // Keys met earlier in the file are settled here; the others are inserted at once, in one unordered
    // insert: a key stored anywhere already is refused by the unique index, and only those are read
    // (one look-up per batch for the keys that exist), which a first import of a file seldom has.
    const toInsert: {
      row: number;
      product: Product;
      data: ImportRow;
      form: ComparableLicense;
      doc: Omit<LicenseDoc, 'outbox'>;
      events: ReturnType<typeof importedLicenseEvents>;
      activations: ActivationDoc[];
    }[] = [];
    for (const l of licenses) {
      const form = comparable(l.data, l.product);
      const earlier = this.seen.get(l.data.key);
      if (earlier) {
        const diff = firstDifference(earlier.form, form);
        if (diff) this.reject(l.row, `key appears earlier in the file (row ${earlier.row}) with another ${diff}`);
        else this.tally.skipped++;
        continue;
      }
      this.seen.set(l.data.key, { row: l.row, form });
      const made = newImportedLicense(this.doc, l.row, l.data, l.product, now);
      toInsert.push({
        row: l.row,
        product: l.product,
        data: l.data,
        form,
        ...made,
        events: importedLicenseEvents(made.doc, l.product),
      });
    }
    // A key a reroll took from a licence stays taken (retired_keys), in its grace and after it: else the
    // importer's licence would answer for a key another licence's holder still has. Read before the
    // insert (rows holding one are settled below, never written), and again once the licences are in:
    // a reroll that retired one of these keys meanwhile had claimed it before it freed the key index, so
    // the second read finds every claim the first missed, and that licence is taken back at once.
    const retiredBefore = await deps.licenses.retiredKeys(toInsert.map((t) => t.data.key));
    const writable = toInsert.filter((t) => !retiredBefore.has(t.data.key));
    const refused = new Map<string, string>();
    const failed = await deps.licenses.insertImported(
      writable.map((t) => ({ doc: t.doc })),
      writable.flatMap((t) => t.activations),
      async (inserted) => {
        const retired = await deps.licenses.retiredKeys(inserted.map((d) => d.key));
        return new Set(inserted.filter((d) => retired.has(d.key)).map((d) => d._id));
      },
      refused,
    );
    for (const t of toInsert) if (retiredBefore.has(t.data.key)) failed.add(t.doc._id);
    const existing = toInsert.filter((t) => failed.has(t.doc._id));
    const events: ReturnType<typeof importedLicenseEvents> = [];
    for (const t of toInsert) {
      const why = refused.get(t.doc._id);
      if (why) {
        this.reject(t.row, why);
        continue;
      }
      if (failed.has(t.doc._id)) continue;
      this.tally.imported++;
      events.push(...t.events);
    }

    if (existing.length) {
      const keys = existing.map((t) => t.data.key);
      const [stored, retired] = await Promise.all([
        deps.licenses.licensesByKeys(keys),
        deps.licenses.retiredKeys(keys),
      ]);
      // A retired key held by a licence this import wrote (before a crash, after its last checkpoint,
      // and before the second read above could take it back): taken back now.
      const misplaced = [...stored.values()].filter((d) => {
        const claim = retired.get(d.key);
        return claim && claim.license_id !== d._id && d.imported_from?.import_id === this.doc._id;
      });
      await deps.licenses.removeImported(misplaced.map((d) => d._id));
      for (const d of misplaced) stored.delete(d.key);
      const ours = [...stored.values()].filter((d) => d.account_id === this.doc.account_id);
      const fingerprints = await deps.licenses.activeFingerprints(ours.map((d) => d._id));
      const missingMachines: ActivationDoc[] = [];
      for (const t of existing) {
        const found = stored.get(t.data.key);
        const claim = retired.get(t.data.key);
        if (claim && claim.license_id !== found?._id) {
          // Taken by a reroll (the licence it was taken from has another key now): as any taken key, with
          // nothing about where; in this account, what happened to it.
          if (claim.account_id === this.doc.account_id)
            this.reject(t.row, 'key was replaced by a reroll in this account: a replaced key is never given out again');
          else this.refuseKey(t.row);
          continue;
        }
        if (!found || found.account_id !== this.doc.account_id) {
          // Nothing about where: another account's key is simply refused (or it went away meanwhile: retry the file).
          this.refuseKey(t.row);
          continue;
        }
        const from = found.imported_from;
        if (from?.import_id === this.doc._id && from.row === t.row) {
          // Written by this import before a crash, after its last checkpoint: imported, its machines made whole.
          const have = new Set(fingerprints.get(found._id) ?? []);
          for (const a of activationDocs(found, t.data, now)) if (!have.has(a.fingerprint)) missingMachines.push(a);
          this.tally.imported++;
          // Its events again, under the same ids (their group may not have been stored before the crash).
          events.push(...importedLicenseEvents(found, t.product));
          continue;
        }
        const diff = firstDifference(storedForm(found, fingerprints.get(found._id) ?? []), t.form);
        if (diff) this.reject(t.row, `key is already in this account with another ${diff}`);
        else this.tally.skipped++;
      }
      if (missingMachines.length) await deps.licenses.insertImported([], missingMachines);
    }

    // The batch's license.created events, in groups stored apart from the licences and published now.
    const firstRow = rows[0]?.row ?? 0;
    for (let g = 0; g * EVENTS_PER_GROUP < events.length; g++) {
      const group = events.slice(g * EVENTS_PER_GROUP, (g + 1) * EVENTS_PER_GROUP);
      const id = `${this.doc._id}:${firstRow}:${g}`;
      if (await deps.imports.insertEvents(id, this.doc._id, group))
        void deps.outbox.flush(deps.imports.models.ImportEvents, id, group);
    }

    for (const e of this.batchErrors.sort((a, b) => a.row - b.row))
      if (this.tally.row_errors.length < MAX_IMPORT_ERRORS) this.tally.row_errors.push(e);
    this.batchErrors = [];
    for (const n of this.batchNotices.sort((a, b) => a.row - b.row))
      if (this.tally.row_notices.length < MAX_IMPORT_ERRORS) this.tally.row_notices.push(n);
    this.batchNotices = [];
    const last = rows[rows.length - 1]?.row ?? this.tally.checkpoint_row;
    this.tally.checkpoint_row = Math.max(this.tally.checkpoint_row, last);
    if (!(await deps.imports.checkpoint(this.doc._id, this.epoch, { ...this.tally, ...this.lease() }))) return false;
    if (this.tally.refused_keys > MAX_REFUSED_KEYS)
      throw new ImportFileError(
        `more than ${MAX_REFUSED_KEYS} rows were refused their key ("${KEY_REFUSED}"): the import is stopped (the rows before stay imported)`,
      );
    return true;
  }
}

/** A jsonl file's rows counted without reading them: its lines that hold anything but white space. */
class LineCounter {
  private filled = false;

  push(data: Uint8Array): { length: number } {
    let n = 0;
    for (let i = 0; i < data.length; i++) {
      const b = data[i];
      if (b === 10) {
        if (this.filled) n++;
        this.filled = false;
      } else if (b !== 32 && b !== 9 && b !== 13) this.filled = true;
    }
    return { length: n };
  }

  end(): { length: number } {
    return { length: this.filled ? 1 : 0 };
  }
}

/** The stored status an import row has (expired is derived from the expiry, as for every licence). */
const storedStatus = (row: ImportRow) => (row.status === 'expired' ? 'active' : row.status);

/** The licence's policy: its own (an export's line), else its product's; a row's max_activations over either. */
function policyFor(row: ImportRow, product: Product) {
  const policy = storedPolicy(withPolicyDefaults(row.policy ?? product.policy));
  return row.max_activations === undefined ? policy : { ...policy, max_activations: row.max_activations };
}

function comparable(row: ImportRow, product: Product): ComparableLicense {
  return {
    product_id: product.id,
    customer_email: row.customer_email,
    status: storedStatus(row),
    expires_at: row.expires_at,
    max_activations: policyFor(row, product).max_activations,
    metadata: row.metadata,
    entitlements: row.entitlements,
    fingerprints: row.activations.map((a) => a.fingerprint),
    ...(row.policy ? { policy: policyKey(policyFor(row, product)) } : {}),
  };
}

function storedForm(doc: LicenseDoc, fingerprints: string[]): ComparableLicense {
  return {
    product_id: doc.product_id,
    customer_email: doc.customer_email,
    status: doc.status,
    expires_at: doc.expires_at,
    max_activations: doc.policy.max_activations,
    metadata: doc.metadata ?? {},
    entitlements: doc.extra_entitlements ?? [],
    fingerprints,
    policy: policyKey(doc.policy),
  };
}

function activationDocs(
  license: Pick<LicenseDoc, '_id' | 'account_id' | 'policy'>,
  row: ImportRow,
  now: Date,
): ActivationDoc[] {
  const limited = license.policy.max_activations !== null;
  return row.activations.map((a, i) => {
    const id = newId('act', now.getTime());
    return {
      _id: id,
      license_id: license._id,
      account_id: license.account_id,
      fingerprint: a.fingerprint,
      name: a.name,
      slot_key: limited ? String(i + 1) : id,
      fingerprint_key: a.fingerprint,
      created_at: now,
      deactivated_at: null,
      last_seen_at: null,
      ...leaseOf(license, now),
    };
  });
}

/** A licence as an import row makes it, with license.created (announced with the product's entitlements). */
export function newImportedLicense(
  imp: Pick<ImportDoc, '_id' | 'account_id'>,
  row: number,
  data: ImportRow,
  product: Product,
  now: Date,
): { doc: Omit<LicenseDoc, 'outbox'> & { imported_from: ImportedFrom }; activations: ActivationDoc[] } {
  const policy = policyFor(data, product);
  const graceEnds = graceEndsAt(data.expires_at, policy.grace_days);
  // A licence that had expired before it came here announces no license.expired.
  const lapsed = graceEnds !== null && graceEnds <= now;
  const doc = {
    _id: newId('lic', now.getTime()),
    account_id: imp.account_id,
    product_id: product.id,
    key: data.key,
    customer_email: data.customer_email,
    customer_email_lc: data.customer_email.toLowerCase(),
    status: storedStatus(data),
    expires_at: data.expires_at,
    grace_ends_at: graceEnds,
    policy,
    metadata: data.metadata,
    ...(data.entitlements.length ? { extra_entitlements: data.entitlements } : {}),
    expired_notified: lapsed,
    expiry_bucket: expiryBucket(graceEnds, lapsed, now),
    created_at: now,
    imported_from: { import_id: imp._id, row },
  };
  return { doc, activations: activationDocs(doc, data, now) };
}

/**
 * license.created of an imported licence, with its product's current entitlements, under an id derived
 * from the licence: a resumed run that announces it again publishes the same event (JetStream keeps one).
 */
export const importedLicenseEvents = (doc: Omit<LicenseDoc, 'outbox'>, product: Product) => [
  licenseEvent(
    'license.created',
    withProductEntitlements(doc, withPolicyDefaults(product.policy).entitlements),
    doc.created_at,
    `evt_imported_${doc._id.slice(4)}`,
  ),
];
