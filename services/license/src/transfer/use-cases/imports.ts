import { AppError, isId, newEnvelope, newId, type Clock, type Logger, type Outbox } from '@licensing/runtime';
import {
  MAX_FILE_PIECE_BYTES,
  MAX_IMPORT_BYTES,
  accountLimits,
  type CreateProductRequest,
  type CreateWebhookEndpointRequest,
  type Import,
  type ListProductsRequest,
  type ListProductsResponse,
  type ListWebhookEndpointsRequest,
  type ListWebhookEndpointsResponse,
  type DomainEvent,
  type Product,
  type TransferActionEvent,
  type WebhookEndpointWithSecret,
} from '@licensing/proto';
import type { LicenseCore } from '../../use-cases/license-core';
import { checkHead } from '../domain/import-formats';
import { importFormats, type ImportFormat } from '../domain/import-rows';
import type { ImportDoc, ImportStore } from '../store/imports';

// Imports (docs/api.md "Imports"): a file arrives in pieces and is stored whole; then a job reads it back
// a batch of rows at a time (import-run.ts). Here: the upload, its refusals, and what an import shows.

/** Rows written together. */
export const IMPORT_BATCH = 1000;
/** How long a run holds an import without renewing (each batch renews it). */
export const IMPORT_LEASE_MS = 30_000;
/** Runs of an import that may stop on an error (the service away, a bug) before it is failed with it. */
export const MAX_FAILED_RUNS = 3;

export interface ProductAdmin {
  getProduct(req: { account_id: string; id: string }): Promise<Product>;
  listProducts(req: ListProductsRequest): Promise<ListProductsResponse>;
  createProduct(req: CreateProductRequest): Promise<Product>;
}

/** What an import asks of the webhook service: an export's endpoints are created in the account. */
export interface WebhookAdmin {
  listEndpoints(req: ListWebhookEndpointsRequest): Promise<ListWebhookEndpointsResponse>;
  createEndpoint(req: CreateWebhookEndpointRequest): Promise<WebhookEndpointWithSecret>;
}

export interface ImportDeps {
  /** The licence core's table (use-cases/license-core.ts): every licence is written through it. */
  licenses: LicenseCore;
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
  // The audit log's import.created, in the insert that stores the import: never lost, and never what
  // refuses it. Its origin (who asked, from where) is the request's, put on it by newEnvelope.
  const created: TransferActionEvent = newEnvelope('import.created', accountId, { import: { id, format } }, now);
  await deps.imports.create(doc, [created]);
  // Published at once, without holding the answer up; the relay publishes it if this fails.
  void deps.outbox.flush(deps.imports.models.Import, id, [created as unknown as DomainEvent]);
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
