import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { credentialOf } from '../../scripts/lib/topology';
import { eventually } from '../support/eventually';
import { connectMongo } from '@licensing/runtime';
import { client, startStack, TestClock, type Stack } from '../support/stack';
import { WebClient } from '../support/web-client';

// Own stack: its clock is moved by hand (TestClock), and the round trip needs a second installation.

// Exports: an account's products, licences with their machines, checkout sessions and webhook
// endpoints as JSON lines, never a secret; the file imports into an account of another installation and
// nothing is lost (the round trip below); the operator CLI runs both; the audit log names who started each.

const exec = promisify(execFile);
const admin = join(__dirname, '..', '..', 'scripts', 'dist', 'admin.js');
type Api = ReturnType<typeof client>;

jest.setTimeout(120_000);

let a: Stack;
let b: Stack;
let work: string;
/** Stack a's clock: the last test moves it past an export's 24 hours. */
const clockA = new TestClock();
const HOUR = 3_600_000;

beforeAll(async () => {
  [a, b] = await Promise.all([startStack({}, {}, clockA), startStack()]);
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

/**
 * Every line type an export writes, and what a round trip does with it. Imported: the line comes back in
 * the other account's export equal but for what the import must give anew there (ids, creation times,
 * and a webhook endpoint's signing secret, which no file holds). Not imported by design, each row
 * reported in the import's notices with why: checkout sessions (the history of payments the exporting
 * installation took) and subscriptions (billed by its payment provider; their licences are licence lines).
 */
const IMPORTED: Record<string, (line: Record<string, any>) => Record<string, any>> = {
  product: ({ id: _id, created_at: _c, ...p }) => p,
  license: (l) => l,
  webhook_endpoint: ({ id: _id, created_at: _c, ...e }) => e,
};
const NOT_IMPORTED: Record<string, RegExp> = {
  checkout_session: /^checkout_session: not imported: a checkout session is the history of a payment/,
  subscription: /^subscription: not imported: a subscription is billed by the payment provider/,
};

/** The imported lines of one type, without what the import gives anew, in a stable order. */
function essence(lines: Record<string, any>[], type: string) {
  return lines
    .filter((l) => l.type === type)
    .map(IMPORTED[type])
    .map((l) => JSON.stringify(l))
    .sort();
}

/** Buys a monthly product on the hosted page in test mode: the completed session (with its subscription). */
async function subscribe(stack: Stack, api: Api, productId: string, email: string) {
  const session = (
    await api('POST', '/api/v1/checkout', { product_id: productId, success_url: 'https://vendor.example/thanks' })
  ).body;
  const web = new WebClient(stack.url, stack.topology);
  const page = await web.get(`/checkout/${session.id}`);
  await web.post(`/checkout/${session.id}/pay`, { _csrf: WebClient.csrf(page.html), email, card: '4242424242424242' });
  return eventually(async () => {
    const s = (await api('GET', `/api/v1/checkout/${session.id}`)).body;
    expect(s).toMatchObject({
      status: 'complete',
      subscription_id: expect.stringMatching(/^sub_/),
      license_key: expect.any(String),
    });
    return s;
  });
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
    const monthly = await api('POST', '/api/v1/products', {
      name: 'Round Trip Monthly',
      price: { amount: 900, currency: 'eur', interval: 'month', trial_days: 7 },
    });
    expect(monthly.status).toBe(201);
    // Native licences, one with machines, metadata and its own entitlements, one suspended.
    const one = await api('POST', '/api/v1/licenses', { product_id: app.body.id, customer_email: 'ada@example.com' });
    const patched = await api('PATCH', `/api/v1/licenses/${one.body.license_key}`, {
      metadata: { seat: 'lead' },
      entitlements: ['pro'],
    });
    expect(patched.status).toBe(200);
    await api('POST', `/api/v1/licenses/${one.body.license_key}/activations`, { fingerprint: 'fp-1', name: 'Laptop' });
    await api('POST', `/api/v1/licenses/${one.body.license_key}/activations`, { fingerprint: 'fp-2' });
    // The product's policy changes after: the licence keeps the one it was issued under, and so does
    // its copy in the other installation (its line carries it).
    const changed = await api('PATCH', `/api/v1/products/${app.body.id}`, {
      policy: {
        duration_days: 30,
        max_activations: 10,
        grace_days: 1,
        require_activation: true,
        entitlements: ['base'],
      },
    });
    expect(changed.status).toBe(200);
    const two = await api('POST', '/api/v1/licenses', { product_id: other.body.id, customer_email: 'bob@example.com' });
    await api('POST', `/api/v1/licenses/${two.body.license_key}/suspend`);
    // A foreign key, imported.
    await importInto(
      api,
      `${JSON.stringify({ key: 'abcdef0123456789abcdef0123456789', product_id: app.body.id, customer_email: 'cy@example.com', expires_at: '2099-01-01T00:00:00Z' })}\n`,
    );
    // A checkout session left open, and a subscription (its session complete, its licence issued).
    const session = await api('POST', '/api/v1/checkout', {
      product_id: app.body.id,
      success_url: 'https://vendor.example/thanks',
    });
    expect(session).toMatchObject({ status: 201, body: { status: 'open' } });
    const bought = await subscribe(a, api, monthly.body.id, 'sub@example.com');
    // Two webhook endpoints, one disabled.
    const hook = await api('POST', '/api/v1/webhooks', {
      url: 'http://127.0.0.1:9/hooks',
      events: ['license.created'],
      description: 'CRM sync',
    });
    expect(hook.status).toBe(201);
    const quiet = await api('POST', '/api/v1/webhooks', { url: 'http://127.0.0.1:9/quiet', events: ['*'] });
    expect((await api('PATCH', `/api/v1/webhooks/${quiet.body.id}`, { enabled: false })).status).toBe(200);

    const { job, lines, text } = await exportOf(api);
    expect(job.counts).toEqual({ product: 3, license: 4, checkout_session: 2, webhook_endpoint: 2, subscription: 1 });
    expect(lines.map((l) => l.type)).toEqual([
      ...Array(3).fill('product'),
      ...Array(4).fill('license'),
      ...Array(2).fill('checkout_session'),
      ...Array(2).fill('webhook_endpoint'),
      'subscription',
    ]);
    // Never a secret: no webhook secret, no API key, no checkout page URL (the session's capability).
    expect(text).not.toContain(hook.body.secret);
    expect(text).not.toContain(quiet.body.secret);
    expect(text).not.toContain('whsec_');
    expect(text).not.toContain('lk_');
    expect(text).not.toContain(session.body.url);
    expect(lines.find((l) => l.type === 'webhook_endpoint' && l.id === hook.body.id)).toMatchObject({
      url: 'http://127.0.0.1:9/hooks',
      events: ['license.created'],
      description: 'CRM sync',
      enabled: true,
    });
    expect(lines.find((l) => l.type === 'webhook_endpoint' && l.id === quiet.body.id)).toMatchObject({
      enabled: false,
    });
    // The subscription is in the file, as the API lists it, and so is its licence.
    const listed = (await api('GET', '/api/v1/subscriptions')).body.data as Record<string, any>[];
    const subscription = listed.find((x) => x.id === bought.subscription_id);
    expect(subscription).toMatchObject({ license_key: bought.license_key, customer_email: 'sub@example.com' });
    expect(lines.find((l) => l.type === 'subscription')).toEqual({ type: 'subscription', ...subscription });
    expect(lines.filter((l) => l.type === 'license').map((l) => l.key)).toContain(bought.license_key);
    expect(lines.find((l) => l.key === one.body.license_key)).toEqual({
      type: 'license',
      key: one.body.license_key,
      product_name: 'Round Trip App',
      customer_email: 'ada@example.com',
      status: 'active',
      expires_at: one.body.license.expires_at,
      max_activations: 3,
      policy: {
        duration_days: 365,
        max_activations: 3,
        grace_days: 5,
        require_activation: false,
        validate_keys_see_email: false,
        refund_action: 'revoke',
        lease_seconds: null,
        customer_deactivations_per_30_days: 3,
        payment_grace_days: 7,
        max_file_ttl_days: 30,
        expiration_strategy: 'restrict',
      },
      activations: [{ fingerprint: 'fp-1', name: 'Laptop' }, { fingerprint: 'fp-2' }],
      metadata: { seat: 'lead' },
      entitlements: ['pro'],
    });
    // Every type the export writes is either imported or reported: none is left unaccounted for.
    expect([...new Set(lines.map((l) => l.type))].sort()).toEqual(
      [...Object.keys(IMPORTED), ...Object.keys(NOT_IMPORTED)].sort(),
    );

    // Into another account of this installation: every key is taken (keys are unique system-wide).
    const sibling = await a.newAccount();
    const taken = await importInto(client(a.url, sibling.apiKey), text);
    expect(taken).toMatchObject({ imported: 5, skipped: 3, rejected: 4 });
    expect(taken.errors.map((e: { message: string }) => e.message)).toEqual(
      Array(4).fill(
        'key refused: keys are unique across the whole system, and this one cannot be given to this account',
      ),
    );

    // Into an account of another installation: products, licences and webhook endpoints come across;
    // checkout sessions and the subscription are skipped, each row reported with why.
    const moved = await b.newAccount();
    const apiB = client(b.url, moved.apiKey);
    const imported = await importInto(apiB, text);
    expect(imported).toMatchObject({ status: 'done', total: 12, imported: 9, skipped: 3, rejected: 0, errors: [] });
    const rowOf = (l: Record<string, any>) => lines.indexOf(l) + 1;
    for (const [type, reason] of Object.entries(NOT_IMPORTED))
      for (const l of lines.filter((x) => x.type === type))
        expect(imported.notices).toContainEqual({ row: rowOf(l), message: expect.stringMatching(reason) });
    // Each endpoint is made anew, with a new signing secret, which the notices say.
    const endpointsB = (await apiB('GET', '/api/v1/webhooks')).body.data as { id: string; url: string }[];
    expect(endpointsB).toHaveLength(2);
    for (const l of lines.filter((x) => x.type === 'webhook_endpoint')) {
      const made = endpointsB.find((e) => e.url === l.url)!;
      expect(made.id).not.toBe(l.id);
      expect(imported.notices).toContainEqual({
        row: rowOf(l),
        message: `webhook_endpoint: created as ${made.id} with a new signing secret (an export never holds one): POST /api/v1/webhooks/${made.id}/rotate-secret shows a secret to verify its deliveries with`,
      });
    }
    expect(imported.notices).toHaveLength(5);
    const rotated = await apiB('POST', `/api/v1/webhooks/${endpointsB[0].id}/rotate-secret`);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect([hook.body.secret, quiet.body.secret]).not.toContain(rotated.body.secret);

    // The same file again adds nothing (the records are reported again, the endpoints are there).
    const twice = await importInto(apiB, text);
    expect(twice).toMatchObject({ imported: 0, skipped: 12, rejected: 0 });
    expect(twice.notices.map((n: { row: number }) => n.row)).toEqual(
      lines.filter((l) => l.type in NOT_IMPORTED).map(rowOf),
    );

    // Nothing lost: every imported type comes back equal; no record that is not imported appears.
    const again = await exportOf(apiB);
    for (const type of Object.keys(IMPORTED))
      expect([type, essence(again.lines, type)]).toEqual([type, essence(lines, type)]);
    for (const type of Object.keys(NOT_IMPORTED)) expect(again.lines.filter((l) => l.type === type)).toEqual([]);
    // And the keys work there, each under its own policy (not the product's new one).
    const kept = (await apiB('GET', `/api/v1/licenses/${one.body.license_key}`)).body;
    expect(kept.policy).toMatchObject({
      duration_days: 365,
      max_activations: 3,
      grace_days: 5,
      require_activation: false,
    });
    const v = await apiB('POST', '/api/v1/keys/validate', { key: one.body.license_key });
    expect(v.body).toMatchObject({ valid: true, license: { entitlements: ['base', 'pro'] } });
    expect((await apiB('POST', '/api/v1/keys/validate', { key: two.body.license_key })).body.code).toBe('suspended');
    expect((await apiB('POST', '/api/v1/keys/validate', { key: bought.license_key })).body.valid).toBe(true);
  });

  it("the audit log has an import's import.created and an export's export.created, each the key's that asked", async () => {
    const acct = await b.newAccount();
    const api = client(b.url, acct.apiKey);
    const key = (await api('GET', '/api/v1/api-keys')).body.data[0];
    const imported = await importInto(api, `${JSON.stringify({ type: 'product', name: 'Audited Import' })}\n`);
    const started = await api('POST', '/api/v1/exports', undefined, { 'user-agent': 'vendor-backend/4.2' });
    expect(started.status).toBe(202);
    const entryOf = (action: string) =>
      eventually(
        async () => {
          const r = await api('GET', `/api/v1/audit-events?action=${action}`);
          expect(r.status).toBe(200);
          expect(r.body.data).toHaveLength(1);
          return r.body.data[0];
        },
        { timeoutMs: 20_000, intervalMs: 250 },
      );
    expect(await entryOf('import.created')).toMatchObject({
      action: 'import.created',
      actor: { type: 'api_key', id: key.id },
      target: { type: 'import', id: imported.id },
      request_id: expect.any(String),
      ip: expect.any(String),
    });
    expect(await entryOf('export.created')).toMatchObject({
      action: 'export.created',
      actor: { type: 'api_key', id: key.id },
      target: { type: 'export', id: started.body.id },
      user_agent: 'vendor-backend/4.2',
    });
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

  it('npm run admin -- import on a terminal draws a progress bar (a real pty), then prints its JSON line', async () => {
    const acct = await a.newAccount();
    const rows = 3000;
    const file = join(work, 'progress.jsonl');
    writeFileSync(
      file,
      Array.from({ length: rows }, (_, i) =>
        JSON.stringify({
          key: `pty-key-${String(i).padStart(6, '0')}`,
          product_name: 'On a tty',
          customer_email: `t${i}@example.com`,
        }),
      ).join('\n'),
    );
    const env = {
      ...process.env,
      ACCOUNT_GRPC_ADDR: a.addrs.account,
      INTERNAL_TOKEN: credentialOf(a.topology, 'operator').token,
      GATEWAY_URL: a.url,
    };
    // util-linux's script(1) runs the CLI with a pseudo-terminal as its stdin, stdout and stderr, and copies
    // what it writes there (bar frames and the JSON line, in order) to its own stdout.
    const quote = (x: string) => `'${x.replace(/'/g, `'\\''`)}'`;
    const command = [process.execPath, admin, 'import', '--account', acct.accountId, '--format', 'jsonl', file]
      .map(quote)
      .join(' ');
    const run = await exec('script', ['-qfec', command, '/dev/null'], { env, maxBuffer: 16 * 1024 * 1024 });
    const screen = run.stdout;
    // The bar redraws one line in place (carriage return, then erase to its end): frames of the upload
    // (bytes), then of the job (rows), the last one full.
    const esc = String.fromCharCode(27);
    const frame = new RegExp(
      `\\r\\[([#.]{30})\\] (\\d+)% ([\\d,]+)/([\\d,?]+) (bytes uploaded|rows[^\\r\\n${esc}]*)${esc}\\[K`,
      'g',
    );
    const frames = [...screen.matchAll(frame)];
    expect(frames.length).toBeGreaterThanOrEqual(3);
    expect(frames.some((f) => f[5] === 'bytes uploaded')).toBe(true);
    const last = frames[frames.length - 1];
    expect(last.slice(1, 6)).toEqual([
      '#'.repeat(30),
      '100',
      rows.toLocaleString('en'),
      rows.toLocaleString('en'),
      `rows (imported ${rows}, skipped 0, rejected 0)`,
    ]);
    // Each frame's bar is as long as its share (within a mark: the percentage is rounded down).
    for (const f of frames)
      expect(Math.abs(f[1].replace(/\./g, '').length - (Number(f[2]) / 100) * 30)).toBeLessThanOrEqual(1);
    // After the bar, its line ends, and the outcome is one JSON line.
    const after = screen.slice(screen.lastIndexOf(`${esc}[K`) + 3).trim();
    expect(JSON.parse(after)).toMatchObject({ status: 'done', total: rows, imported: rows, rejected: 0 });
  });

  // Last in the file: it moves stack a's clock a day on.
  it('serves the file for 24 hours after it finished, then 404; the expired file is deleted', async () => {
    const api = client(a.url, (await a.newAccount()).apiKey);
    // Two lines (a file of one line would read as one JSON document).
    await api('POST', '/api/v1/products', { name: 'Kept a day' });
    await api('POST', '/api/v1/products', { name: 'Kept a day too' });
    const { job, text } = await exportOf(api);
    expect(Date.parse(job.expires_at) - Date.parse(job.finished_at)).toBe(24 * HOUR);
    const db = await connectMongo(a.topology.mongoUrl, `${a.topology.dbPrefix}_license`);
    try {
      const pieces = () => db.collection('export_chunks').countDocuments({ owner_id: job.id });
      expect(await pieces()).toBeGreaterThan(0);

      // A minute before the end: still there, whole.
      clockA.advance(Date.parse(job.expires_at) - clockA.now().getTime() - 60_000);
      const late = await api('GET', job.download_url);
      expect(late.status).toBe(200);
      expect(late.body).toBe(text);

      // Past it: the export is expired, still with what it held, and its file is gone (404), then deleted.
      clockA.advance(2 * 60_000);
      const after = await api('GET', `/api/v1/exports/${job.id}`);
      expect(after.body).toMatchObject({
        id: job.id,
        status: 'expired',
        expires_at: job.expires_at,
        counts: job.counts,
        download_url: null,
      });
      const gone = await api('GET', job.download_url);
      expect(gone.status).toBe(404);
      expect(gone.body).toMatchObject({
        code: 'not_found',
        detail: 'export file (kept 24 hours after the export finished) not found',
      });
      // The licence service's import job drops expired files on its next pass (at most a minute apart).
      clockA.advance(60_000);
      // The pieces go first, then the export's record says so: both polled (the second write may follow).
      await eventually(
        async () => {
          expect(await pieces()).toBe(0);
          expect(await db.collection('exports').findOne({ _id: job.id } as never)).toMatchObject({
            state: 'expired',
            chunks: 0,
          });
        },
        { timeoutMs: 30_000, intervalMs: 200 },
      );
      expect((await api('GET', job.download_url)).status).toBe(404);
    } finally {
      await db.close();
    }
  });
});
