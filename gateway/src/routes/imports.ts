import type { Request, Router } from 'express';
import { AppError, systemClock, type Clock, type Logger } from '@licensing/runtime';
import { MAX_FILE_PIECE_BYTES, MAX_IMPORT_BYTES, type Export, type Import } from '@licensing/proto';
import { principalOf } from '../auth/principal';
import type { Clients } from '../backends/clients';
import { importCreateQuery } from '../request-shapes/operations';
import { checkId } from '../request-shapes/shapes';
import { checkoutJson } from './checkout';
import { productJson } from './products';
import { route, withQuery } from './route';
import { subscriptionJson } from './subscriptions';
import type { ExportJobs } from './export-jobs';
import { endpointJson } from './webhooks';

// Imports and exports (issue 32; docs/api.md "Imports" and "Exports"). An import's body is the file
// itself, up to 100 MB: it is read a piece at a time (never whole) and each piece of 512 KiB goes to the
// licence service, which stores it and runs the import as a job once the file is complete. An export is
// a job of this gateway: it gathers the account's data from each service over gRPC, a page at a time,
// and writes the file into the licence service, which serves it for 24 hours. The export holds a lease
// there that every piece and a heartbeat renew: when this process dies mid-way, the export is failed once
// the lease lapses (export-jobs.ts stops them on a graceful shutdown).

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
  for await (const data of req as AsyncIterable<Buffer>) {
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

export function importRoutes(
  router: Router,
  clients: Clients,
  log: Logger,
  exportJobs: ExportJobs,
  opts: { maxBytes?: number; clock?: Clock } = {},
): void {
  const maxBytes = Math.min(opts.maxBytes ?? MAX_IMPORT_BYTES, MAX_IMPORT_BYTES);
  const clock = opts.clock ?? systemClock;
  const tooLarge = () =>
    new AppError(
      'payload_too_large',
      maxBytes % (1024 * 1024) === 0
        ? `an import file is at most ${maxBytes / 1024 / 1024} MB`
        : `an import file is at most ${maxBytes} bytes`,
    );
  route(router, '/imports', {
    post: withQuery(importCreateQuery, async (req, res, query) => {
      const accountId = principalOf(res).accountId;
      const format = query.format!;
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
        res.setHeader('Connection', 'close');
        throw tooLarge();
      }
      let imp = await clients.imports.createImport({ account_id: accountId, format }).catch((err: unknown) => {
        // Refused before the body is read (the account's import is still running): nothing more is read.
        if (!req.complete) res.setHeader('Connection', 'close');
        throw err;
      });
      let seq = 0;
      let received = 0;
      try {
        for await (const piece of pieces(req)) {
          received += piece.length;
          if (received > maxBytes) throw tooLarge();
          imp = await clients.imports.appendImportChunk({
            account_id: accountId,
            import_id: imp.id,
            seq: seq++,
            data: piece,
          });
        }
        if (seq === 0) throw AppError.invalid('body', 'the file is empty: send it as the request body');
        imp = await clients.imports.startImport({ account_id: accountId, id: imp.id });
      } catch (err) {
        // A refused or broken-off upload leaves nothing behind: the import is failed and its pieces deleted.
        await clients.imports.abandonImport({ account_id: accountId, id: imp.id }).catch((e: unknown) => {
          log.warn({ err: e, import_id: imp.id }, 'could not mark a broken-off import upload failed');
        });
        if (!req.complete) res.setHeader('Connection', 'close');
        throw err;
      }
      res.status(202).location(`/api/v1/imports/${imp.id}`).json(importJson(imp));
    }),
  });

  route(router, '/imports/:id', {
    get: async (req, res) => {
      const id = checkId('id', 'imp', String(req.params.id));
      res.json(importJson(await clients.imports.getImport({ account_id: principalOf(res).accountId, id })));
    },
  });

  route(router, '/exports', {
    post: async (_req, res) => {
      const accountId = principalOf(res).accountId;
      const exp = await clients.imports.createExport({ account_id: accountId });
      // The job runs on after the answer; its progress and outcome are read with GET.
      exportJobs.start(accountId, exp);
      res.status(202).location(`/api/v1/exports/${exp.id}`).json(exportJson(exp));
    },
  });

  route(router, '/exports/:id', {
    get: async (req, res) => {
      const id = checkId('id', 'exp', String(req.params.id));
      res.json(exportJson(await clients.imports.getExport({ account_id: principalOf(res).accountId, id })));
    },
  });

  route(router, '/exports/:id/download', {
    get: async (req, res) => {
      const accountId = principalOf(res).accountId;
      const id = checkId('id', 'exp', String(req.params.id));
      const exp = await clients.imports.getExport({ account_id: accountId, id });
      // Expired: its file is deleted (past its 24 hours, or by an erasure of a customer).
      const expired = exp.status === 'expired';
      if (exp.status !== 'done' && !expired)
        throw new AppError('conflict', `the export is ${exp.status}: download it once its status is done`);
      if (expired || !exp.expires_at || Date.parse(exp.expires_at) <= clock.now().getTime())
        throw AppError.notFound('export file (kept 24 hours after the export finished)');
      res.status(200);
      res.setHeader('Content-Type', 'application/x-ndjson');
      res.setHeader('Content-Length', String(Number(exp.bytes)));
      res.setHeader('Content-Disposition', `attachment; filename="${exp.id}.jsonl"`);
      res.setHeader('Cache-Control', 'no-store');
      for (let seq = 0; seq < exp.chunks; seq++) {
        const piece = await clients.imports.readExportChunk({ account_id: accountId, export_id: id, seq });
        if (!res.write(piece.data)) await new Promise((resolve) => res.once('drain', resolve));
      }
      res.end();
    },
  });
}

/** Every item of a paginated gRPC list, 100 a call, in its order. */
async function* everyItem<T>(
  list: (page: { limit: number; starting_after: string }) => Promise<{
    data: T[];
    page?: { has_more: boolean; next_cursor: string };
  }>,
): AsyncGenerator<T> {
  let after = '';
  for (;;) {
    const out = await list({ limit: 100, starting_after: after });
    yield* out.data;
    if (!out.page?.has_more || !out.page.next_cursor) return;
    after = out.page.next_cursor;
  }
}

/**
 * Writes the account's data as JSON lines, one type after another: products, licences (with their
 * active machines), checkout sessions, webhook endpoints (never their secrets), subscriptions. Each service is asked
 * over gRPC, a page at a time; the file goes to the licence service in pieces of 512 KiB.
 *
 * To add a resource: one more section below, paging through its
 * service's list call and writing one `{"type": "<resource>", …}` line per item; the jsonl import skips
 * types it does not import (they count as skipped), so older files and newer ones stay readable.
 */
export async function runExport(
  clients: Clients,
  accountId: string,
  exportId: string,
  log: Logger,
  opts: { leaseMs?: number; signal?: AbortSignal } = {},
): Promise<void> {
  const { signal } = opts;
  // The heartbeat: a page can take long (a slow service), and no piece is written meanwhile. A refusal
  // (the export is no longer running: its lease lapsed) stops the job at its next line.
  let lost: unknown;
  const heartbeat = setInterval(
    () => {
      clients.imports.renewExport({ account_id: accountId, id: exportId }).catch((err: unknown) => {
        if (err instanceof AppError && err.code === 'conflict') lost = err;
        else log.warn({ err, export_id: exportId }, 'could not renew the lease of an export');
      });
    },
    Math.max(250, Math.floor((opts.leaseMs || 60_000) / 4)),
  );
  heartbeat.unref();
  const check = () => {
    if (signal?.aborted) throw signal.reason;
    if (lost) throw lost;
  };
  let held: Buffer[] = [];
  let size = 0;
  let seq = 0;
  let counts: Record<string, number> = {};
  const flush = async () => {
    check();
    if (!size) return;
    await clients.imports.appendExportChunk({
      account_id: accountId,
      export_id: exportId,
      seq: seq++,
      data: Buffer.concat(held),
      counts,
    });
    held = [];
    size = 0;
    counts = {};
  };
  const line = async (type: string, value: Record<string, unknown>) => {
    check();
    const bytes = Buffer.from(`${JSON.stringify({ type, ...value })}\n`);
    if (size + bytes.length > PIECE_BYTES) await flush();
    held.push(bytes);
    size += bytes.length;
    counts[type] = (counts[type] ?? 0) + 1;
  };
  try {
    // Products first: the licence lines name theirs, and an import creates products before their licences.
    const productNames = new Map<string, string>();
    const products: Record<string, unknown>[] = [];
    for await (const p of everyItem((page) => clients.products.listProducts({ account_id: accountId, page }))) {
      productNames.set(p.id, p.name);
      products.push(productJson(p));
    }
    // Oldest first, so that of two products of one name the older one is matched on import, as here.
    for (const p of products.reverse()) await line('product', p);

    let after = '';
    for (;;) {
      const page = await clients.imports.exportLicenses({ account_id: accountId, after, limit: 100 });
      for (const text of page.lines) {
        const l = JSON.parse(text) as Record<string, unknown>;
        const { type: _type, product_id, ...rest } = l;
        // The product by name, which another account matches or creates (its id means nothing there).
        await line('license', {
          key: rest.key,
          product_name: productNames.get(String(product_id)) ?? String(product_id),
          ...rest,
        });
      }
      if (!page.next_after) break;
      after = page.next_after;
    }

    // The hosted page's URL is the session's capability: left out.
    for await (const s of everyItem((page) =>
      clients.checkouts.listSessions({ account_id: accountId, page, status: '' }),
    )) {
      const { url: _url, ...session } = checkoutJson(s);
      await line('checkout_session', session);
    }
    // Never the signing secret (the list does not carry it).
    for await (const e of everyItem((page) => clients.webhooks.listEndpoints({ account_id: accountId, page })))
      await line('webhook_endpoint', endpointJson(e));
    // Subscriptions (the checkout service's): the record of what was billed. The import skips them
    // (counted as skipped): a subscription lives on with its payment provider.
    const subscriptions = everyItem((page) =>
      clients.subscriptions.listSubscriptions({
        account_id: accountId,
        page,
        status: '',
        customer_email: '',
        product_id: '',
      }),
    );
    for await (const s of subscriptions) await line('subscription', subscriptionJson(s));
    await flush();
    await clients.imports.finishExport({ account_id: accountId, export_id: exportId, failure: '' });
  } catch (err) {
    if (signal?.aborted) return; // stopped by the shutdown, which marked it failed (export-jobs.ts)
    log.error({ err, export_id: exportId, account_id: accountId }, 'export failed');
    const reason = err instanceof AppError ? `${err.code}: ${err.message}` : 'internal error';
    await clients.imports
      .finishExport({ account_id: accountId, export_id: exportId, failure: reason })
      .catch(() => undefined);
  } finally {
    clearInterval(heartbeat);
  }
}
