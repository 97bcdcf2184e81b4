// The operator CLI's `import` and `export`: they go through the gateway's public API, as a
// vendor would, with a full-scope API key made for the account for this run and revoked after it (the
// operator's credential reaches only the account service; the licence service and the data stay behind
// the gateway). Progress goes to stderr (a bar on a terminal); the outcome is one JSON line on stdout.
import { createReadStream, createWriteStream, statSync } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export interface TransferApi {
  createApiKey(req: {
    account_id: string;
    scope: string;
    name: string;
  }): Promise<{ api_key?: { id: string }; secret: string }>;
  revokeApiKey(req: { account_id: string; key_id: string }): Promise<unknown>;
}

export const importCliFormats = ['jsonl', 'csv', 'keygen', 'lemonsqueezy', 'gumroad'];

/** A full key of the account for this run only; revoked whatever happens. */
async function withTemporaryKey<T>(
  accounts: TransferApi,
  accountId: string,
  run: (key: string) => Promise<T>,
): Promise<T> {
  const made = await accounts.createApiKey({ account_id: accountId, scope: 'full', name: 'npm run admin (temporary)' });
  try {
    return await run(made.secret);
  } finally {
    await accounts.revokeApiKey({ account_id: accountId, key_id: made.api_key!.id }).catch(() => undefined);
  }
}

class Progress {
  private last = '';
  constructor(private readonly tty: boolean) {}

  show(done: number, total: number, extra: string): void {
    const width = 30;
    const share = total > 0 ? Math.min(1, done / total) : 0;
    const bar = `[${'#'.repeat(Math.round(share * width)).padEnd(width, '.')}] ${Math.floor(share * 100)}% ${done.toLocaleString('en')}/${total > 0 ? total.toLocaleString('en') : '?'} ${extra}`;
    if (this.tty) process.stderr.write(`\r${bar}\x1b[K`);
    else if (bar !== this.last && share === 1) process.stderr.write(`${bar}\n`);
    this.last = bar;
  }

  end(): void {
    if (this.tty && this.last) process.stderr.write('\n');
  }
}

async function call(url: string, key: string, method: string, path: string, init: RequestInit = {}) {
  const res = await fetch(`${url}${path}`, {
    ...init,
    method,
    headers: { authorization: `Bearer ${key}`, ...(init.headers as Record<string, string>) },
  });
  const text = await res.text();
  let body: Record<string, any>;
  try {
    body = JSON.parse(text);
  } catch {
    body = { detail: text };
  }
  if (res.status >= 400) {
    const err = new Error(body.detail ?? `HTTP ${res.status}`) as Error & { body?: unknown };
    err.body = body;
    throw err;
  }
  return body;
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `import --account ID --format F FILE`: uploads the file (streamed), then follows the job to its end. */
export async function runImport(
  accounts: TransferApi,
  gatewayUrl: string,
  accountId: string,
  format: string,
  file: string,
): Promise<Record<string, unknown>> {
  const size = statSync(file).size;
  return withTemporaryKey(accounts, accountId, async (key) => {
    const progress = new Progress(process.stderr.isTTY === true);
    let sent = 0;
    const stream = createReadStream(file);
    stream.on('data', (chunk) => {
      sent += chunk.length;
      progress.show(sent, size, 'bytes uploaded');
    });
    const job = await call(gatewayUrl, key, 'POST', `/api/v1/imports?format=${format}`, {
      body: Readable.toWeb(stream) as unknown as BodyInit,
      headers: {
        'content-type': format === 'jsonl' ? 'application/x-ndjson' : 'text/csv',
        'content-length': String(size),
      },
      duplex: 'half',
    } as RequestInit);
    let state = job;
    while (state.status === 'running') {
      progress.show(
        state.imported + state.skipped + state.rejected,
        state.total,
        `rows (imported ${state.imported}, skipped ${state.skipped}, rejected ${state.rejected})`,
      );
      await pause(500);
      state = await call(gatewayUrl, key, 'GET', `/api/v1/imports/${job.id}`);
    }
    progress.show(
      state.imported + state.skipped + state.rejected,
      state.total,
      `rows (imported ${state.imported}, skipped ${state.skipped}, rejected ${state.rejected})`,
    );
    progress.end();
    return state;
  });
}

/** `export --account ID [--out FILE]`: runs an export, then writes its file (or prints the job when no --out). */
export async function runExport(
  accounts: TransferApi,
  gatewayUrl: string,
  accountId: string,
  out: string | undefined,
): Promise<Record<string, unknown>> {
  return withTemporaryKey(accounts, accountId, async (key) => {
    const progress = new Progress(process.stderr.isTTY === true);
    let job = await call(gatewayUrl, key, 'POST', '/api/v1/exports');
    while (job.status === 'running') {
      const lines = Object.values(job.counts as Record<string, number>).reduce((a, b) => a + b, 0);
      progress.show(lines, 0, 'lines written');
      await pause(500);
      job = await call(gatewayUrl, key, 'GET', `/api/v1/exports/${job.id}`);
    }
    progress.end();
    if (job.status !== 'done' || !out) return job;
    const res = await fetch(`${gatewayUrl}/api/v1/exports/${job.id}/download`, {
      headers: { authorization: `Bearer ${key}` },
    });
    if (res.status !== 200 || !res.body) throw new Error(`download failed: HTTP ${res.status}`);
    await pipeline(Readable.fromWeb(res.body as never), createWriteStream(out));
    return { ...job, file: out };
  });
}
