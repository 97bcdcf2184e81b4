import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateLicenseKey } from '@licensing/proto';
import { preparePostgres, startFerretDB, type FerretDB, type PostgresDatabase } from '../../scripts/lib/ferretdb';
import { freePort } from '../../scripts/lib/net';
import { HoldingProxy } from '../support/holding-proxy';
import { client, startStack, type Stack } from '../support/stack';

// The store going away under a steady load, as a new user would meet it: licences and
// validations keep coming while the store's backend (FerretDB's PostgreSQL) is away for 5 s.
// Nothing may answer 500; what cannot be done answers 503 with Retry-After; a client that
// retries (same Idempotency-Key, after Retry-After) gets every licence, once; validations
// answered from memory stay 200.
//
// The stack runs over a FerretDB of its own whose PostgreSQL link can be cut without stopping
// anything shared: services ─▶ FerretDB ─▶ backendLink ─▶ PostgreSQL (the machine's, a
// database of this test's own). Over SQLite (TEST_STORE=sqlite, or no PostgreSQL) FerretDB's
// backend is a local file and there is nothing to cut: the test has nothing to run there.
// Own stack: it runs over a FerretDB of its own whose PostgreSQL is cut away mid-run.

let pg: PostgresDatabase | null = null;
let backendLink: HoldingProxy | undefined;
let ferret: FerretDB | undefined;
let dataDir: string;
let stack: Stack | undefined;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'licensing-outage-'));
  if (process.env.TEST_STORE === 'sqlite') return;
  pg = await preparePostgres(`licensing_test_${process.env.TEST_RUN_ID ?? 'local'}_outage`, { fresh: true });
  if (!pg) return;
  const real = new URL(pg.url);
  backendLink = await HoldingProxy.start({ host: real.hostname, port: Number(real.port || 5432) });
  const proxied = new URL(pg.url);
  proxied.port = backendLink.address.split(':')[1];
  ferret = await startFerretDB({ port: await freePort(), dataDir, postgres: { ...pg, url: proxied.toString() } });
  stack = await startStack({ mongoUrl: ferret.url, ferretdbPostgresUrl: proxied.toString() });
  const acct = await stack.newAccount();
  await stack.admin.updateAccount({ id: acct.accountId, per_minute_limit: 100_000 });
  api = client(stack.url, acct.apiKey);
});

afterAll(async () => {
  await stack?.stop();
  await ferret?.stop();
  await backendLink?.stop();
  await pg?.drop();
  rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

class Tally {
  readonly seen = new Map<number, number>();
  add(status: number): void {
    this.seen.set(status, (this.seen.get(status) ?? 0) + 1);
  }
  get(status: number): number {
    return this.seen.get(status) ?? 0;
  }
  statuses(): number[] {
    return [...this.seen.keys()].sort();
  }
}

/** A client issuing one licence: retries 503 after Retry-After and 409 after a second, with the same key. */
async function issueOne(
  productId: string,
  key: string,
  tally: Tally,
): Promise<{ status: number; licenseKey?: string }> {
  const giveUp = Date.now() + 60_000;
  for (;;) {
    const res = await api(
      'POST',
      '/api/v1/licenses',
      { product_id: productId, customer_email: 'buyer@example.com' },
      { 'idempotency-key': key },
    );
    tally.add(res.status);
    if (res.status === 201) return { status: 201, licenseKey: res.body.license_key };
    if ((res.status !== 503 && res.status !== 409) || Date.now() > giveUp) return { status: res.status };
    if (res.status === 503) expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    await sleep(res.status === 503 ? Number(res.headers.get('retry-after')) * 1000 : 1000);
  }
}

async function countLicences(productId: string): Promise<number> {
  let n = 0;
  let after = '';
  for (;;) {
    const page = (
      await api('GET', `/api/v1/licenses?product_id=${productId}&limit=100${after ? `&starting_after=${after}` : ''}`)
    ).body as { data: { id: string }[]; has_more: boolean; next_cursor: string | null };
    n += page.data.length;
    if (!page.has_more) return n;
    after = page.next_cursor!;
  }
}

/**
 * 20 licences/s and 10 validations/s (of a licence validated before, so answered from memory) plus 2/s
 * of keys never seen (which need the store), for 7 s; the link is cut from the 1st second to the 6th.
 */
async function underLoad(link: HoldingProxy, name: string) {
  const productId = (await api('POST', '/api/v1/products', { name: `Outage ${name}` })).body.id as string;
  const known = (await api('POST', '/api/v1/licenses', { product_id: productId, customer_email: 'a@example.com' })).body
    .license_key as string;
  expect((await api('GET', `/api/v1/licenses/validate?license_key=${known}`)).status).toBe(200);
  const licences = new Tally();
  const cached = new Tally();
  const uncached = new Tally();
  const jobs: Promise<{ status: number; licenseKey?: string }>[] = [];
  const probes: Promise<void>[] = [];
  const started = Date.now();
  const outage = (async () => {
    await sleep(1000);
    link.cut();
    await sleep(5000);
    link.restore();
  })();
  for (let tick = 0; Date.now() - started < 7000; tick++) {
    jobs.push(issueOne(productId, `${name}-${tick}`, licences));
    if (tick % 2 === 0)
      probes.push(api('GET', `/api/v1/licenses/validate?license_key=${known}`).then((r) => cached.add(r.status)));
    if (tick % 10 === 0)
      probes.push(
        api('POST', '/api/v1/keys/validate', { key: generateLicenseKey() }).then((r) => uncached.add(r.status)),
      );
    await sleep(50);
  }
  await outage;
  const outcomes = await Promise.all(jobs);
  await Promise.all(probes);
  return { productId, known, outcomes, licences, cached, uncached };
}

async function expectOutageAnsweredWell(link: HoldingProxy, name: string) {
  const { productId, outcomes, licences, cached, uncached } = await underLoad(link, name);
  // The outage was felt, and told as "retry later", never as a bug.
  expect(licences.get(503)).toBeGreaterThan(0);
  expect(licences.statuses().filter((s) => s !== 201 && s !== 503 && s !== 409)).toEqual([]);
  expect(uncached.statuses().filter((s) => s !== 200 && s !== 503)).toEqual([]);
  // Validations answered from memory did not notice.
  expect(cached.statuses()).toEqual([200]);
  // Every licence a client asked for was issued, once.
  expect(outcomes.filter((o) => o.status !== 201)).toEqual([]);
  expect(new Set(outcomes.map((o) => o.licenseKey)).size).toBe(outcomes.length);
  expect(await countLicences(productId)).toBe(outcomes.length + 1);
}

it('the store’s backend (FerretDB’s PostgreSQL) away for 5 s: 503 with Retry-After, no 500, every retried licence issued once', async () => {
  if (!backendLink) return; // over SQLite: see above
  await expectOutageAnsweredWell(backendLink, 'backend');
}, 120_000);
