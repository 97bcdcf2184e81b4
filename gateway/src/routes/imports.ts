import type { Request, Response, Router } from 'express';
import { AppError, systemClock, type Clock, type Logger } from '@licensing/runtime';
import { MAX_FILE_PIECE_BYTES, MAX_IMPORT_BYTES, type Export, type Import } from '@licensing/proto';
import { principalOf } from '../auth/principal';
import { closeAfterAnswer } from '../http/refused-upload';
import type { Clients } from '../backends/clients';
import { importCreateQuery } from '../request-shapes/operations';
import { checkId } from '../request-shapes/shapes';
import { registerRouteTable, withQuery, type RouteRow } from './route';
import type { ExportJobs } from './export-jobs';

// Imports and exports (docs/api.md "Imports" and "Exports"). An import's body is the file itself, up to
// 100 MB: it is read a piece at a time (never whole) and each piece of 512 KiB goes to the licence
// service's transfer module, which stores it and runs the import as a job once the file is complete. An
// export is started here and run by this gateway's export job (export-jobs.ts), which writes the file
// into the transfer module; both are read back (progress, the file) from there. One handler per route,
// registered in one list (importRoutes).

/**
 * The pieces a file travels in: half the most one call may carry, so a piece and the rest of its call
 * stay well inside the gRPC server's 1 MiB message.
 */
const PIECE_BYTES = MAX_FILE_PIECE_BYTES / 2;

export const importJson = (i: Import) => ({
  id: i.id,
  status: i.status,
  format: i.format,
  total: i.total,
  imported: i.imported,
  skipped: i.skipped,
  rejected: i.rejected,
  errors: i.errors.map((e) => ({ row: e.row, message: e.message })),
  notices: i.notices.map((n) => ({ row: n.row, message: n.message })),
  failure: i.failure || null,
  created_at: i.created_at,
  finished_at: i.finished_at || null,
});

export const exportJson = (e: Export) => ({
  id: e.id,
  status: e.status,
  counts: e.counts,
  bytes: Number(e.bytes),
  failure: e.failure || null,
  created_at: e.created_at,
  finished_at: e.finished_at || null,
  expires_at: e.expires_at || null,
  download_url: e.status === 'done' ? `/api/v1/exports/${e.id}/download` : null,
});

const contentTypeOf = (format: string) => (format === 'jsonl' ? 'application/x-ndjson' : 'text/csv');

/** The request body in pieces of PIECE_BYTES (the last may be shorter), read as they are sent. */
async function* pieces(req: Request): AsyncGenerator<Buffer> {
  let held: Buffer[] = [];
  let size = 0;
  // Not destroyed when the caller stops early (a refusal mid-file): destroying the request would reset
  // the connection before the refusal is answered (closeAfterAnswer ends it once the answer is out).
  for await (const data of req.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
    let rest = data;
    while (size + rest.length >= PIECE_BYTES) {
      const take = PIECE_BYTES - size;
      held.push(rest.subarray(0, take));
      yield Buffer.concat(held);
      held = [];
      size = 0;
      rest = rest.subarray(take);
    }
    if (rest.length) {
      held.push(rest);
      size += rest.length;
    }
  }
  if (size) yield Buffer.concat(held);
}

/** What the handlers work with. */
interface ImportRouteDeps {
  clients: Clients;
  log: Logger;
  exportJobs: ExportJobs;
  /** The largest import file (IMPORT_MAX_BYTES, at most MAX_IMPORT_BYTES). */
  maxBytes: number;
  clock: Clock;
}

const tooLargeFor = (maxBytes: number) =>
  new AppError(
    'payload_too_large',
    maxBytes % (1024 * 1024) === 0
      ? `an import file is at most ${maxBytes / 1024 / 1024} MB`
      : `an import file is at most ${maxBytes} bytes`,
  );

/** Refuses, before a byte of the body is read, a body of another type, compressed, or declared too large. */
function checkUploadHead(req: Request, res: Response, format: string, maxBytes: number): void {
  const want = contentTypeOf(format);
  if (!req.is(want))
    throw new AppError(
      'unsupported_media_type',
      `format=${format} takes the file as the body with Content-Type: ${want}`,
    );
  const encoding = req.get('content-encoding');
  if (encoding && encoding !== 'identity')
    throw new AppError('unsupported_media_type', 'send the file uncompressed (no Content-Encoding)');
  const declared = Number(req.get('content-length') ?? 0);
  if (declared > maxBytes) {
    closeAfterAnswer(req, res);
    throw tooLargeFor(maxBytes);
  }
}

/** POST /imports: the body streamed to the licence service a piece at a time, then the import started. */
const postImport = (d: ImportRouteDeps) =>
  withQuery(importCreateQuery, async (req, res, query) => {
    const accountId = principalOf(res).accountId;
    const format = query.format!;
    checkUploadHead(req, res, format, d.maxBytes);
    let imp = await d.clients.imports.createImport({ account_id: accountId, format }).catch((err: unknown) => {
      // Refused before the body is read (the account's import is still running): nothing more is read.
      closeAfterAnswer(req, res);
      throw err;
    });
    let seq = 0;
    let received = 0;
    try {
      for await (const piece of pieces(req)) {
        received += piece.length;
        if (received > d.maxBytes) throw tooLargeFor(d.maxBytes);
        imp = await d.clients.imports.appendImportChunk({
          account_id: accountId,
          import_id: imp.id,
          seq: seq++,
          data: piece,
        });
      }
      if (seq === 0) throw AppError.invalid('body', 'the file is empty: send it as the request body');
      imp = await d.clients.imports.startImport({ account_id: accountId, id: imp.id });
    } catch (err) {
      // A refused or broken-off upload leaves nothing behind: the import is failed and its pieces deleted.
      await d.clients.imports.abandonImport({ account_id: accountId, id: imp.id }).catch((e: unknown) => {
        d.log.warn({ err: e, import_id: imp.id }, 'could not mark a broken-off import upload failed');
      });
      closeAfterAnswer(req, res);
      throw err;
    }
    res.status(202).location(`/api/v1/imports/${imp.id}`).json(importJson(imp));
  });

const getImport = (d: ImportRouteDeps) => async (req: Request, res: Response) => {
  const id = checkId('id', 'imp', String(req.params.id));
  res.json(importJson(await d.clients.imports.getImport({ account_id: principalOf(res).accountId, id })));
};

const postExport = (d: ImportRouteDeps) => async (_req: Request, res: Response) => {
  const accountId = principalOf(res).accountId;
  const exp = await d.clients.imports.createExport({ account_id: accountId });
  // The job runs on after the answer; its progress and outcome are read with GET.
  d.exportJobs.start(accountId, exp);
  res.status(202).location(`/api/v1/exports/${exp.id}`).json(exportJson(exp));
};

const getExport = (d: ImportRouteDeps) => async (req: Request, res: Response) => {
  const id = checkId('id', 'exp', String(req.params.id));
  res.json(exportJson(await d.clients.imports.getExport({ account_id: principalOf(res).accountId, id })));
};

/** GET /exports/{id}/download: the finished file, streamed from its stored pieces. */
const downloadExport = (d: ImportRouteDeps) => async (req: Request, res: Response) => {
  const accountId = principalOf(res).accountId;
  const id = checkId('id', 'exp', String(req.params.id));
  const exp = await d.clients.imports.getExport({ account_id: accountId, id });
  // Expired: its file is deleted (past its 24 hours, or by an erasure of a customer).
  const expired = exp.status === 'expired';
  if (exp.status !== 'done' && !expired)
    throw new AppError('conflict', `the export is ${exp.status}: download it once its status is done`);
  if (expired || !exp.expires_at || Date.parse(exp.expires_at) <= d.clock.now().getTime())
    throw AppError.notFound('export file (kept 24 hours after the export finished)');
  res.status(200);
  res.setHeader('Content-Type', 'application/x-ndjson');
  res.setHeader('Content-Length', String(Number(exp.bytes)));
  res.setHeader('Content-Disposition', `attachment; filename="${exp.id}.jsonl"`);
  res.setHeader('Cache-Control', 'no-store');
  for (let seq = 0; seq < exp.chunks; seq++) {
    const piece = await d.clients.imports.readExportChunk({ account_id: accountId, export_id: id, seq });
    if (!res.write(piece.data)) await new Promise((resolve) => res.once('drain', resolve));
  }
  res.end();
};

/** Imports (the file streamed in) and exports (the file streamed out). */
export const importRouteTable: readonly RouteRow<ImportRouteDeps>[] = [
  { method: 'post', path: '/imports', role: 'developer', handler: postImport },
  { method: 'get', path: '/imports/:id', role: 'read_only', handler: getImport },
  { method: 'post', path: '/exports', role: 'developer', handler: postExport },
  { method: 'get', path: '/exports/:id', role: 'read_only', handler: getExport },
  { method: 'get', path: '/exports/:id/download', role: 'developer', handler: downloadExport },
];

export function importRoutes(
  router: Router,
  clients: Clients,
  log: Logger,
  exportJobs: ExportJobs,
  opts: { maxBytes?: number; clock?: Clock } = {},
): void {
  const maxBytes = Math.min(opts.maxBytes ?? MAX_IMPORT_BYTES, MAX_IMPORT_BYTES);
  const d: ImportRouteDeps = { clients, log, exportJobs, maxBytes, clock: opts.clock ?? systemClock };
  registerRouteTable(router, importRouteTable, d);
}
