import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { credentialOf } from '../../scripts/lib/topology';
import { eventually } from '../support/eventually';
import { client, startStack, type Stack } from '../support/stack';

// Exports (issue 32): an account's products, licences with their machines, checkout sessions and webhook
// endpoints as JSON lines, never a secret; the file imports into an account of another installation and
// nothing is lost (the round trip below); the operator CLI runs both.

const exec = promisify(execFile);
const admin = join(__dirname, '..', '..', 'scripts', 'dist', 'admin.js');
type Api = ReturnType<typeof client>;

jest.setTimeout(120_000);

let a: Stack;
let b: Stack;
let work: string;

beforeAll(async () => {
  [a, b] = await Promise.all([startStack(), startStack()]);
  work = mkdtempSync(join(tmpdir(), 'exports-test-'));
});

afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  rmSync(work, { recursive: true, force: true });
});

async function exportOf(api: Api): Promise<{ job: Record<string, any>; lines: Record<string, any>[]; text: string }> {
  const started = await api('POST', '/api/v1/exports');
  expect(started.status).toBe(202);
  expect(started.body).toMatchObject({ id: expect.stringMatching(/^exp_/), status: 'running', download_url: null });
  expect(started.headers.get('location')).toBe(`/api/v1/exports/${started.body.id}`);
  const job = await eventually(
    async () => {
      const r = await api('GET', `/api/v1/exports/${started.body.id}`);
      expect(r.body.status).toBe('done');
      return r.body;
    },
    { timeoutMs: 30_000, intervalMs: 100 },
  );
  expect(job.download_url).toBe(`/api/v1/exports/${job.id}/download`);
  const file = await api('GET', job.download_url);
  expect(file.status).toBe(200);
  expect(file.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
  const text = typeof file.body === 'string' ? file.body : `${JSON.stringify(file.body)}\n`;
  const lines = text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, any>);
  return { job, lines, text };
}

async function importInto(api: Api, text: string) {
  const started = await api('POST', '/api/v1/imports?format=jsonl', text, { 'content-type': 'application/x-ndjson' });
  expect(started.status).toBe(202);
  return eventually(
    async () => {
      const r = await api('GET', `/api/v1/imports/${started.body.id}`);
      expect(r.body.status).toBe('done');
      return r.body;
    },
    { timeoutMs: 30_000, intervalMs: 100 },
  );
}

/** What must survive a round trip: everything but the ids and times another account gives anew. */
function essence(lines: Record<string, any>[]) {
  const products = lines
    .filter((l) => l.type === 'product')
    .map(({ id: _id, created_at: _c, ...p }) => p)
    .sort((x, y) => (x.name < y.name ? -1 : 1));
  const licenses = lines
    .filter((l) => l.type === 'license')
    .map(({ product_id: _p, ...l }) => l)
    .sort((x, y) => (x.key < y.key ? -1 : 1));
  return { products, licenses };
}

describe('exports', () => {
  it('writes every resource as JSON lines (never a secret); imports into another installation with nothing lost', async () => {
    const acct = await a.newAccount();
    const api = client(a.url, acct.apiKey);
    const app = await api('POST', '/api/v1/products', {
      name: 'Round Trip App',
      description: 'Exported and back',
      policy: { duration_days: 365, max_activations: 3, grace_days: 5, entitlements: ['base'] },
      price: { amount: 4900, currency: 'eur' },
    });
    expect(app.body).toMatchObject({ name: 'Round Trip App' });
    const other = await api('POST', '/api/v1/products', { name: 'Second Product', email_on_purchase: false });
    // Native licences, one with machines, metadata and its own entitlements, one suspended.
    const one = await api('POST', '/api/v1/licenses', { product_id: app.body.id, customer_email: 'ada@example.com' });
    const patched = await api('PATCH', `/api/v1/licenses/${one.body.license_key}`, {
      metadata: { seat: 'lead' },
      entitlements: ['pro'],
    });
    expect(patched.status).toBe(200);
    await api('POST', `/api/v1/licenses/${one.body.license_key}/activations`, { fingerprint: 'fp-1', name: 'Laptop' });
    await api('POST', `/api/v1/licenses/${one.body.license_key}/activations`, { fingerprint: 'fp-2' });
    const two = await api('POST', '/api/v1/licenses', { product_id: other.body.id, customer_email: 'bob@example.com' });
    await api('POST', `/api/v1/licenses/${two.body.license_key}/suspend`);
    // A foreign key, imported.
    await importInto(
      api,
      `${JSON.stringify({ key: 'abcdef0123456789abcdef0123456789', product_id: app.body.id, customer_email: 'cy@example.com', expires_at: '2099-01-01T00:00:00Z' })}\n`,
    );
    const session = await api('POST', '/api/v1/checkout', {
      product_id: app.body.id,
      success_url: 'https://vendor.example/thanks',
    });
    expect(session).toMatchObject({ status: 201, body: { status: 'open' } });
    const hook = await api('POST', '/api/v1/webhooks', {
      url: 'http://127.0.0.1:9/hooks',
      events: ['license.created'],
    });
    expect(hook.status).toBe(201);

    const { job, lines, text } = await exportOf(api);
    expect(job.counts).toEqual({ product: 2, license: 3, checkout_session: 1, webhook_endpoint: 1 });
    expect(lines.map((l) => l.type)).toEqual([
      'product',
      'product',
      'license',
      'license',
      'license',
      'checkout_session',
      'webhook_endpoint',
    ]);
    // Never a secret: no webhook secret, no API key, no checkout page URL (the session's capability).
    expect(text).not.toContain(hook.body.secret);
    expect(text).not.toContain('whsec_');
    expect(text).not.toContain('lk_');
    expect(text).not.toContain(session.body.url);
    expect(lines.find((l) => l.type === 'webhook_endpoint')).toMatchObject({
      id: hook.body.id,
      url: 'http://127.0.0.1:9/hooks',
      events: ['license.created'],
    });
    expect(lines.find((l) => l.key === one.body.license_key)).toEqual({
      type: 'license',
      key: one.body.license_key,
      product_name: 'Round Trip App',
      customer_email: 'ada@example.com',
      status: 'active',
      expires_at: one.body.license.expires_at,
      max_activations: 3,
      activations: [{ fingerprint: 'fp-1', name: 'Laptop' }, { fingerprint: 'fp-2' }],
      metadata: { seat: 'lead' },
      entitlements: ['pro'],
    });

    // Into another account of this installation: every key is taken (keys are unique system-wide).
    const sibling = await a.newAccount();
    const taken = await importInto(client(a.url, sibling.apiKey), text);
    expect(taken).toMatchObject({ imported: 2, rejected: 3 });
    expect(taken.errors.map((e: { message: string }) => e.message)).toEqual([
      'key is already taken: keys are unique across the whole system',
      'key is already taken: keys are unique across the whole system',
      'key is already taken: keys are unique across the whole system',
    ]);

    // Into an account of another installation: products and licences come across; records are skipped.
    const moved = await b.newAccount();
    const apiB = client(b.url, moved.apiKey);
    const imported = await importInto(apiB, text);
    expect(imported).toMatchObject({ status: 'done', total: 7, imported: 5, skipped: 2, rejected: 0 });
    // The same file again adds nothing.
    expect(await importInto(apiB, text)).toMatchObject({ imported: 0, skipped: 7, rejected: 0 });
    const again = await exportOf(apiB);
    expect(essence(again.lines)).toEqual(essence(lines));
    // And the keys work there.
    const v = await apiB('POST', '/api/v1/keys/validate', { key: one.body.license_key });
    expect(v.body).toMatchObject({ valid: true, license: { entitlements: ['base', 'pro'] } });
    expect((await apiB('POST', '/api/v1/keys/validate', { key: two.body.license_key })).body.code).toBe('suspended');
  });

  it("another account's export is not found, and neither is its file", async () => {
    const mine = client(a.url, (await a.newAccount()).apiKey);
    const theirs = client(a.url, (await a.newAccount()).apiKey);
    const { job } = await exportOf(mine);
    expect((await theirs('GET', `/api/v1/exports/${job.id}`)).status).toBe(404);
    expect((await theirs('GET', `/api/v1/exports/${job.id}/download`)).status).toBe(404);
    expect((await mine('GET', '/api/v1/exports/exp_01JD8Z3K6Q2W4E5R6T7Y8V9X0P')).status).toBe(404);
    expect((await mine('GET', '/api/v1/exports/nope')).status).toBe(400);
  });

  it('npm run admin -- import and export run them for an account, printing one JSON line', async () => {
    const acct = await a.newAccount();
    const api = client(a.url, acct.apiKey);
    await api('POST', '/api/v1/products', { name: 'CLI Product' });
    const file = join(work, 'gumroad.csv');
    writeFileSync(
      file,
      'Purchase ID,Item Name,Purchase Email,License Key\nsale-1,CLI Product,cli@example.com,AAAA1111-BBBB2222-CCCC3333-DDDD4444\n',
    );
    const env = {
      ...process.env,
      ACCOUNT_GRPC_ADDR: a.addrs.account,
      INTERNAL_TOKEN: credentialOf(a.topology, 'operator').token,
      GATEWAY_URL: a.url,
    };
    const run = await exec(
      process.execPath,
      [admin, 'import', '--account', acct.accountId, '--format', 'gumroad', file],
      {
        env,
      },
    );
    const out = JSON.parse(run.stdout.trim());
    expect(out).toMatchObject({ status: 'done', total: 1, imported: 1, rejected: 0 });
    expect(
      (await api('POST', '/api/v1/keys/validate', { key: 'AAAA1111-BBBB2222-CCCC3333-DDDD4444' })).body.valid,
    ).toBe(true);

    const target = join(work, 'export.jsonl');
    const exported = JSON.parse(
      (await exec(process.execPath, [admin, 'export', '--account', acct.accountId, '--out', target], { env })).stdout,
    );
    expect(exported).toMatchObject({ status: 'done', file: target, counts: { product: 1, license: 1 } });
    expect(readFileSync(target, 'utf8')).toContain('AAAA1111-BBBB2222-CCCC3333-DDDD4444');

    // The temporary keys are revoked: the account has only the key it started with.
    const keys = await a.admin.listApiKeys({
      account_id: acct.accountId,
      page: { limit: 100, starting_after: '' },
      revoked: false,
    });
    expect(keys.data).toHaveLength(1);

    // A bad format is a usage error (exit 2), before anything is sent.
    const bad = await exec(
      process.execPath,
      [admin, 'import', '--account', acct.accountId, '--format', 'polar', file],
      {
        env,
      },
    ).catch((e: { code: number; stderr: string }) => e);
    expect(bad).toMatchObject({ code: 2 });
  });
});
