import { AppError, type Logger } from '@licensing/runtime';
import type { Export } from '@licensing/proto';
import type { Clients } from '../backends/clients';
import { checkoutJson } from './checkout';
import { productJson } from './products';
import { subscriptionJson } from './subscriptions';
import { endpointJson } from './webhooks';

// The export job (docs/api.md "Exports"): it gathers the account's data from each service over gRPC, a
// page at a time, and writes the file into the licence service's transfer module, which serves it for
// 24 hours. The export holds a lease there that every piece and a heartbeat renew: when this process
// dies mid-way, the export is failed once the lease lapses; a graceful stop fails at once those it
// could not finish (ExportJobs.stop).

/** What a user reads of an export its gateway gave up on while shutting down (docs/api.md, "Exports"). */
export const EXPORT_GATEWAY_SHUT_DOWN =
  'the process running this export stopped before it finished (its gateway shut down): start a new export';

/** The pieces a file travels in. */
export const EXPORT_PIECE_BYTES = 512 * 1024;

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
 * The file being written: lines held until a piece is full, then sent to the licence service with the
 * count of each type's lines in it. `check` runs before every line and piece (the job stopped, or its
 * export was failed meanwhile: it throws).
 */
class ExportFile {
  private held: Buffer[] = [];
  private size = 0;
  private seq = 0;
  private counts: Record<string, number> = {};

  constructor(
    private readonly clients: Clients,
    private readonly accountId: string,
    private readonly exportId: string,
    private readonly check: () => void,
  ) {}

  async line(type: string, value: Record<string, unknown>): Promise<void> {
    this.check();
    const bytes = Buffer.from(`${JSON.stringify({ type, ...value })}\n`);
    if (this.size + bytes.length > EXPORT_PIECE_BYTES) await this.flush();
    this.held.push(bytes);
    this.size += bytes.length;
    this.counts[type] = (this.counts[type] ?? 0) + 1;
  }

  async flush(): Promise<void> {
    this.check();
    if (!this.size) return;
    await this.clients.imports.appendExportChunk({
      account_id: this.accountId,
      export_id: this.exportId,
      seq: this.seq++,
      data: Buffer.concat(this.held),
      counts: this.counts,
    });
    this.held = [];
    this.size = 0;
    this.counts = {};
  }
}

/**
 * The heartbeat: a page can take long (a slow service), and no piece is written meanwhile. A refusal
 * (the export is no longer running: its lease lapsed) is kept for the job to stop on at its next line.
 */
function heartbeat(clients: Clients, accountId: string, exportId: string, log: Logger, leaseMs?: number) {
  let lost: unknown;
  const timer = setInterval(
    () => {
      clients.imports.renewExport({ account_id: accountId, id: exportId }).catch((err: unknown) => {
        if (err instanceof AppError && err.code === 'conflict') lost = err;
        else log.warn({ err, export_id: exportId }, 'could not renew the lease of an export');
      });
    },
    Math.max(250, Math.floor((leaseMs || 60_000) / 4)),
  );
  timer.unref();
  return { lost: () => lost, stop: () => clearInterval(timer) };
}

/** Products first: the licence lines name theirs, and an import creates products before their licences. */
async function writeProducts(clients: Clients, accountId: string, file: ExportFile): Promise<Map<string, string>> {
  const productNames = new Map<string, string>();
  const products: Record<string, unknown>[] = [];
  for await (const p of everyItem((page) => clients.products.listProducts({ account_id: accountId, page }))) {
    productNames.set(p.id, p.name);
    products.push(productJson(p));
  }
  // Oldest first, so that of two products of one name the older one is matched on import, as here.
  for (const p of products.reverse()) await file.line('product', p);
  return productNames;
}

/** The licences, with their product by name, which another account matches or creates (its id means nothing there). */
async function writeLicenses(clients: Clients, accountId: string, file: ExportFile, productNames: Map<string, string>) {
  let after = '';
  for (;;) {
    const page = await clients.imports.exportLicenses({ account_id: accountId, after, limit: 100 });
    for (const text of page.lines) {
      const l = JSON.parse(text) as Record<string, unknown>;
      const { type: _type, product_id, ...rest } = l;
      await file.line('license', {
        key: rest.key,
        product_name: productNames.get(String(product_id)) ?? String(product_id),
        ...rest,
      });
    }
    if (!page.next_after) return;
    after = page.next_after;
  }
}

/** Checkout sessions, webhook endpoints and subscriptions: the records of the other services. */
async function writeRecords(clients: Clients, accountId: string, file: ExportFile): Promise<void> {
  // The hosted page's URL is the session's capability: left out.
  for await (const s of everyItem((page) =>
    clients.checkouts.listSessions({ account_id: accountId, page, status: '' }),
  )) {
    const { url: _url, ...session } = checkoutJson(s);
    await file.line('checkout_session', session);
  }
  // Never the signing secret (the list does not carry it).
  for await (const e of everyItem((page) => clients.webhooks.listEndpoints({ account_id: accountId, page })))
    await file.line('webhook_endpoint', endpointJson(e));
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
  for await (const s of subscriptions) await file.line('subscription', subscriptionJson(s));
}

/**
 * Writes the account's data as JSON lines, one type after another: products, licences (with their
 * active machines), checkout sessions, webhook endpoints (never their secrets), subscriptions.
 *
 * To add a resource: one more section, paging through its service's list call and writing one
 * `{"type": "<resource>", …}` line per item; the jsonl import skips types it does not import (they
 * count as skipped), so older files and newer ones stay readable.
 */
export async function runExport(
  clients: Clients,
  accountId: string,
  exportId: string,
  log: Logger,
  opts: { leaseMs?: number; signal?: AbortSignal } = {},
): Promise<void> {
  const { signal } = opts;
  const beat = heartbeat(clients, accountId, exportId, log, opts.leaseMs);
  const file = new ExportFile(clients, accountId, exportId, () => {
    if (signal?.aborted) throw signal.reason;
    if (beat.lost()) throw beat.lost();
  });
  try {
    const productNames = await writeProducts(clients, accountId, file);
    await writeLicenses(clients, accountId, file, productNames);
    await writeRecords(clients, accountId, file);
    await file.flush();
    await clients.imports.finishExport({ account_id: accountId, export_id: exportId, failure: '' });
  } catch (err) {
    if (signal?.aborted) return; // stopped by the shutdown, which marked it failed (ExportJobs.stop)
    log.error({ err, export_id: exportId, account_id: accountId }, 'export failed');
    const reason = err instanceof AppError ? `${err.code}: ${err.message}` : 'internal error';
    await clients.imports
      .finishExport({ account_id: accountId, export_id: exportId, failure: reason })
      .catch(() => undefined);
  } finally {
    beat.stop();
  }
}

/**
 * The exports this gateway process is writing (each runs on after its POST was answered). On a graceful
 * stop (SIGTERM) they get the shutdown timeout to finish, alongside the HTTP drain; those still running
 * then are marked failed at once, saying to start a new export, so nobody waits for a lease to lapse.
 * A gateway that dies without stopping leaves its exports to their lease (the licence service's
 * EXPORT_LEASE_MS), which this process renews while it works (runExport's heartbeat).
 */
export class ExportJobs {
  private readonly running = new Map<string, { accountId: string; done: Promise<void>; stop: AbortController }>();

  constructor(
    private readonly clients: Clients,
    private readonly log: Logger,
  ) {}

  /** Runs the export on after the answer; its progress and outcome are read with GET. */
  start(accountId: string, exp: Export): void {
    const stop = new AbortController();
    const done = runExport(this.clients, accountId, exp.id, this.log, { leaseMs: exp.lease_ms, signal: stop.signal });
    this.running.set(exp.id, { accountId, done, stop });
    void done.finally(() => this.running.delete(exp.id));
  }

  /** Exports in progress in this process. */
  get size(): number {
    return this.running.size;
  }

  /** Waits up to timeoutMs for the running exports (and any started meanwhile), then fails those left. */
  async stop(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.running.size && Date.now() < deadline) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled([...this.running.values()].map((j) => j.done)),
        new Promise((r) => {
          timer = setTimeout(r, deadline - Date.now());
        }),
      ]);
      clearTimeout(timer);
    }
    const left = [...this.running];
    if (!left.length) return;
    this.log.warn({ exports: left.map(([id]) => id) }, 'shutting down: exports still running are failed');
    await Promise.all(
      left.map(async ([id, job]) => {
        job.stop.abort(new AppError('service_unavailable', EXPORT_GATEWAY_SHUT_DOWN));
        await this.clients.imports
          .finishExport({ account_id: job.accountId, export_id: id, failure: EXPORT_GATEWAY_SHUT_DOWN })
          .catch((err: unknown) => this.log.warn({ err, export_id: id }, 'could not mark an export failed'));
      }),
    );
  }
}
