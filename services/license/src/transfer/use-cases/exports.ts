import { AppError, isId, newEnvelope, newId, type Clock, type Outbox } from '@licensing/runtime';
import {
  MAX_FILE_PIECE_BYTES,
  accountLimits,
  policyFields,
  withPolicyDefaults,
  type DomainEvent,
  type Export,
  type TransferActionEvent,
} from '@licensing/proto';
import type { ExportDoc, ImportStore } from '../store/imports';
import type { LicenseCore, LicenseDoc } from '../../use-cases/license-core';
import { EXPORT_WRITER_STOPPED, exportWriterStopped, leaseUntil } from '../domain/job-leases';

// Export files (docs/api.md "Exports"): the gateway's export job gathers each service's data
// over gRPC and writes the file here a piece at a time; it is downloadable for 24 hours after it is done.
// The job holds its export by a lease that each piece and its heartbeat (RenewExport) renew; an export
// whose lease lapsed (its gateway died mid-way) is failed when next read, or by the job's sweep.

/** How long a finished export can be downloaded. */
export const EXPORT_KEEP_MS = 24 * 60 * 60 * 1000;
/** The default of EXPORT_LEASE_MS: how long a running export stays running without a word from its writer. */
export const EXPORT_LEASE_MS = 60_000;
/** The largest export file. */
export const MAX_EXPORT_BYTES = 2 * 1024 * 1024 * 1024;

export interface ExportDeps {
  /** The licence core's table: an export reads the account's licences through it. */
  licenses: Pick<LicenseCore, 'exportPage'>;
  imports: ImportStore;
  /** Publishes at once the export.created a new export was stored with (the relay retries what this misses). */
  outbox: Pick<Outbox, 'flush'>;
  clock: Clock;
  /** EXPORT_LEASE_MS (default 60 s). */
  exportLeaseMs?: number;
}

const leaseMsOf = (deps: Pick<ExportDeps, 'exportLeaseMs'>) => deps.exportLeaseMs ?? EXPORT_LEASE_MS;

export function presentExport(doc: ExportDoc, leaseMs: number = EXPORT_LEASE_MS): Export {
  return {
    id: doc._id,
    account_id: doc.account_id,
    status: doc.state,
    created_at: doc.created_at.toISOString(),
    finished_at: doc.finished_at?.toISOString() ?? '',
    expires_at: doc.expires_at?.toISOString() ?? '',
    bytes: doc.bytes,
    chunks: doc.chunks,
    counts: doc.counts ?? {},
    failure: doc.failure,
    lease_ms: leaseMs,
  };
}

/**
 * The export as it is now: a running one whose writer stopped is stored failed (and its pieces deleted)
 * first; a finished one past its 24 hours is expired (never served again; the job deletes its file).
 */
async function settle(deps: ExportDeps, doc: ExportDoc): Promise<ExportDoc> {
  const now = deps.clock.now();
  if (doc.state === 'done' && doc.expires_at && doc.expires_at <= now) return { ...doc, state: 'expired' };
  if (!exportWriterStopped(doc, now, leaseMsOf(deps))) return doc;
  const set = { state: 'failed' as const, failure: EXPORT_WRITER_STOPPED, finished_at: now, updated_at: now };
  if (!(await deps.imports.updateRunningExport(doc._id, set))) {
    // Finished (or failed) meanwhile: what was stored wins.
    return (await deps.imports.getExport(doc.account_id, doc._id)) ?? doc;
  }
  await deps.imports.deleteChunks(doc._id, true);
  return { ...doc, ...set, lease_until: null };
}

async function own(deps: ExportDeps, accountId: string, id: string): Promise<ExportDoc> {
  const doc = isId('exp', id) ? await deps.imports.getExport(accountId, id) : null;
  if (!doc) throw AppError.notFound('export');
  return settle(deps, doc);
}

const notRunning = (doc: ExportDoc) =>
  new AppError('conflict', `the export is ${doc.state}${doc.failure ? `: ${doc.failure}` : ''}`);

export async function createExport(deps: ExportDeps, accountId: string): Promise<ExportDoc> {
  const now = deps.clock.now();
  const id = newId('exp', now.getTime());
  const holder = await deps.imports.takeSlot('export', accountId, id, now);
  if (holder)
    throw new AppError(
      'conflict',
      `this account already has an export running (${holder}): an account runs ${accountLimits.exports_at_once} export at a time; start the next once it is done or failed`,
    );
  const doc: ExportDoc = {
    _id: id,
    account_id: accountId,
    state: 'running',
    chunks: 0,
    bytes: 0,
    counts: {},
    failure: '',
    lease_until: leaseUntil(now, leaseMsOf(deps)),
    created_at: now,
    updated_at: now,
    finished_at: null,
    expires_at: null,
  };
  // The audit log's export.created, in the insert that stores the export (as an import's import.created).
  const created: TransferActionEvent = newEnvelope('export.created', accountId, { export: { id } }, now);
  await deps.imports.createExport(doc, [created]);
  void deps.outbox.flush(deps.imports.models.Export, id, [created as unknown as DomainEvent]);
  return doc;
}

export async function appendExportChunk(
  deps: ExportDeps,
  accountId: string,
  id: string,
  seq: number,
  data: Uint8Array,
  counts: Record<string, number>,
): Promise<ExportDoc> {
  const doc = await own(deps, accountId, id);
  if (doc.state !== 'running') throw notRunning(doc);
  if (data.byteLength > MAX_FILE_PIECE_BYTES)
    throw AppError.invalid('data', `a piece is at most ${MAX_FILE_PIECE_BYTES} bytes`);
  if (seq !== doc.chunks) throw new AppError('conflict', `piece ${seq} out of order: piece ${doc.chunks} is next`);
  if (doc.bytes + data.byteLength > MAX_EXPORT_BYTES)
    throw new AppError('payload_too_large', 'the export is too large');
  await deps.imports.putChunk(doc._id, seq, data, true);
  const inc: Record<string, number> = {};
  for (const [type, n] of Object.entries(counts)) if (/^[a-z_]{1,40}$/.test(type)) inc[`counts.${type}`] = n;
  const now = deps.clock.now();
  const set = {
    chunks: doc.chunks + 1,
    bytes: doc.bytes + data.byteLength,
    updated_at: now,
    lease_until: leaseUntil(now, leaseMsOf(deps)),
  };
  if (!(await deps.imports.updateRunningExport(doc._id, set, inc))) throw notRunning(await own(deps, accountId, id));
  return { ...doc, ...set };
}

/** The writer's heartbeat: the running export's lease from now. 409 once it is not running. */
export async function renewExport(deps: ExportDeps, accountId: string, id: string): Promise<ExportDoc> {
  const doc = await own(deps, accountId, id);
  if (doc.state !== 'running') throw notRunning(doc);
  const now = deps.clock.now();
  const set = { lease_until: leaseUntil(now, leaseMsOf(deps)), updated_at: now };
  if (!(await deps.imports.updateRunningExport(doc._id, set))) throw notRunning(await own(deps, accountId, id));
  return { ...doc, ...set };
}

export async function finishExport(
  deps: ExportDeps,
  accountId: string,
  id: string,
  failure: string,
): Promise<ExportDoc> {
  const doc = await own(deps, accountId, id);
  if (doc.state !== 'running') return doc;
  const now = deps.clock.now();
  const set: Partial<ExportDoc> = failure
    ? { state: 'failed', failure: failure.slice(0, 500), finished_at: now, updated_at: now, lease_until: null }
    : {
        state: 'done',
        finished_at: now,
        updated_at: now,
        lease_until: null,
        expires_at: new Date(now.getTime() + EXPORT_KEEP_MS),
      };
  // Failed meanwhile (its lease lapsed): that stays.
  if (!(await deps.imports.updateRunningExport(doc._id, set))) return own(deps, accountId, id);
  if (failure) await deps.imports.deleteChunks(doc._id, true);
  return { ...doc, ...set };
}

export const getExport = own;

export async function readExportChunk(deps: ExportDeps, accountId: string, id: string, seq: number): Promise<Buffer> {
  const doc = await own(deps, accountId, id);
  if (doc.state === 'running' || doc.state === 'failed')
    throw new AppError('conflict', `the export is ${doc.state}: nothing to download yet`);
  // Its file is deleted (expired) or about to be (past its 24 hours).
  if (doc.state === 'expired' || !doc.expires_at || doc.expires_at <= deps.clock.now())
    throw AppError.notFound('export file (kept 24 hours after the export finished)');
  if (!Number.isInteger(seq) || seq < 0 || seq >= doc.chunks)
    throw AppError.invalid('seq', `seq must be 0 to ${doc.chunks - 1}`);
  const data = await deps.imports.chunk(doc._id, seq, true);
  if (!data) throw AppError.notFound('export file (kept 24 hours after the export finished)');
  return data;
}

/** Fails the running exports whose writer stopped, deleting their pieces (the job, every minute). */
export async function failStoppedExports(deps: ExportDeps): Promise<number> {
  let failed = 0;
  for (const doc of await deps.imports.runningExports()) if ((await settle(deps, doc)).state === 'failed') failed++;
  return failed;
}

/** Exports whose files one pass of the job deletes at most. */
export const EXPIRED_EXPORTS_PER_PASS = 200;

/** What deleting an export's file needs of the store. */
export type ExportFiles = Pick<ImportStore, 'deleteChunks' | 'markExportExpired'>;

/**
 * Deletes a finished export's file and stores it `expired`, in that order: a crash between the two leaves
 * it `done`, and the next pass deletes (nothing more) and marks it.
 */
export async function deleteExportFile(imports: ExportFiles, doc: ExportDoc, now: Date): Promise<void> {
  await imports.deleteChunks(doc._id, true);
  await imports.markExportExpired(doc._id, now);
}

/**
 * Deletes the files of exports past their 24 hours (the job, every minute), at most
 * EXPIRED_EXPORTS_PER_PASS a pass: each leaves `done`, so the next pass reads the ones after them.
 */
export async function dropExpiredExports(deps: ExportDeps): Promise<number> {
  const now = deps.clock.now();
  const expired = await deps.imports.expiredExports(now, EXPIRED_EXPORTS_PER_PASS);
  for (const doc of expired) await deleteExportFile(deps.imports, doc, now);
  return expired.length;
}

/**
 * A licence's own policy as an export line holds it (every field, null for no limit): the one it was
 * issued under, which its product's may no longer be. Its entitlements are the product's, live, so not these.
 */
function ownPolicy(stored: LicenseDoc['policy']): Record<string, unknown> {
  const full = withPolicyDefaults(stored);
  return Object.fromEntries(policyFields.filter((f) => f !== 'entitlements').map((f) => [f, full[f]]));
}

/** A page of the account's licences (newest first) as export lines: the jsonl import's fields (product by id; the gateway names it). */
export async function exportLicenses(
  deps: ExportDeps,
  accountId: string,
  after: string,
  limit: number,
): Promise<{ lines: string[]; next_after: string }> {
  if (after && !isId('lic', after)) throw AppError.invalid('after', 'after must be a licence id');
  const n = Math.min(Math.max(limit || 100, 1), 100);
  const { docs, machines, next } = await deps.licenses.exportPage(accountId, after, n);
  const byLicense = new Map<string, { fingerprint: string; name?: string }[]>();
  for (const m of machines)
    byLicense.set(m.license_id, [
      ...(byLicense.get(m.license_id) ?? []),
      m.name ? { fingerprint: m.fingerprint, name: m.name } : { fingerprint: m.fingerprint },
    ]);
  const lines = docs.map((d) =>
    JSON.stringify({
      type: 'license',
      key: d.key,
      product_id: d.product_id,
      customer_email: d.customer_email,
      status: d.status,
      expires_at: d.expires_at ? d.expires_at.toISOString() : null,
      max_activations: d.policy.max_activations,
      policy: ownPolicy(d.policy),
      activations: (byLicense.get(d._id) ?? []).sort((a, b) => (a.fingerprint < b.fingerprint ? -1 : 1)),
      metadata: d.metadata ?? {},
      entitlements: d.extra_entitlements ?? [],
    }),
  );
  return { lines, next_after: next };
}
