// `npm run bench:scale`: the system with N licences in one account, for N =
// 1,000, 10,000 and 100,000 (BENCH_SCALE_SIZES to change), over the default
// store. The licences are loaded in bulk straight into the licence service's
// collection, built by the same function the service uses (domain/new-license),
// as they are once their events went out. At each size it measures issuance
// through the API at 32 connections, first-touch validation of random keys
// (serially, so each one reaches the store), a list page deep in the list,
// and the idle CPU of every process. Writes the "scale" section of
// docs/benchmarks.md.
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import autocannon from 'autocannon';
import mongoose from 'mongoose';
import { Client } from 'pg';
import type * as NewLicense from '../services/license/src/domain/new-license';
import type * as LicenseModels from '../services/license/src/store/models';
import { bareRate, replaceSection, startBenchSystem, SystemCpu } from './lib/bench-kit';
import { FERRETDB_VERSION } from './lib/ferretdb';
import { repoRoot } from './lib/paths';

// The licence service's own code (built), so the loaded documents are exactly what it writes.
const { newLicense } = require(join(repoRoot(), 'services/license/dist/domain/new-license.js')) as typeof NewLicense;
const { licenseModels } = require(join(repoRoot(), 'services/license/dist/store/models.js')) as typeof LicenseModels;

const sizes = (process.env.BENCH_SCALE_SIZES ?? '1000,10000,100000').split(',').map(Number);
const ISSUE_S = Number(process.env.BENCH_SCALE_ISSUE_S ?? 10);
const VALIDATIONS = 200;
const LIST_PAGES = 10;
const IDLE_S = 10;
const BULK = 1000;

interface Row {
  n: number;
  issued: number;
  issueRps: number;
  issueFailed: number;
  validateP50: number;
  validateP99: number;
  listP50: number;
  listP99: number;
  /** Pages that failed, e.g. "10× 503 service_unavailable". */
  listErrors: string;
  idle: Record<string, number>;
  /** Seconds from the last licence issued through the API until the whole system is under 5 % of a core. */
  quietAfterS: number;
  /** CPU milliseconds per issued licence, by process. */
  issueCpuMs: Record<string, number>;
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

type Bench = Awaited<ReturnType<typeof startBenchSystem>>;

/** What every size's steps share: the system, its licence collection and the licences loaded so far. */
interface Scale {
  bench: Bench;
  cpu: SystemCpu;
  License: ReturnType<typeof licenseModels>['License'];
  productId: string;
  /** Loaded keys not validated yet, and the ids of every loaded licence. */
  keys: string[];
  ids: string[];
  loaded: number;
}

/** Load up to n (the licences issued through the API in earlier rounds count too), then VACUUM ANALYZE. */
async function loadUpTo(n: number, scale: Scale) {
  const { bench, License } = scale;
  const policy = {
    duration_days: 365,
    max_activations: null,
    grace_days: 7,
    require_activation: false,
    validate_keys_see_email: false,
  };
  const have = await License.countDocuments({ account_id: bench.accountId });
  const t0 = Date.now();
  for (let left = n - have; left > 0; left -= BULK) {
    const docs = Array.from({ length: Math.min(BULK, left) }, (_, i) =>
      newLicense(bench.accountId, scale.productId, `customer${scale.loaded + i}@example.com`, policy, new Date()),
    );
    await License.insertMany(docs, { ordered: false });
    for (const d of docs) {
      scale.keys.push(d.key);
      scale.ids.push(d._id);
    }
    scale.loaded += docs.length;
  }
  // After a bulk load, as after any import: fresh planner statistics, and GIN pending lists merged
  // (licences issued one by one over months get both from autovacuum on its own).
  if (bench.postgres) {
    const pg = new Client({ connectionString: bench.postgres.url });
    await pg.connect();
    await pg.query('VACUUM ANALYZE');
    await pg.end();
  }
  console.log(`${n}: loaded in ${((Date.now() - t0) / 1000).toFixed(1)} s (with VACUUM ANALYZE)`);
}

/** Issuance through the API, 32 connections, with the CPU each process spends per licence. */
async function issueThroughApi({ bench, cpu, productId }: Scale) {
  const issueCpu = cpu.now();
  const issue = await autocannon({
    url: bench.system.gatewayUrl,
    connections: 32,
    duration: ISSUE_S,
    requests: [
      {
        method: 'POST',
        path: '/api/v1/licenses',
        headers: bench.headers,
        body: JSON.stringify({ product_id: productId, customer_email: 'issued@example.com' }),
      },
    ],
  });
  const issuedAt = Date.now();
  const issueCpuMs = Object.fromEntries(
    Object.entries(cpu.since(issueCpu)).map(([k, seconds]) => [
      k,
      (1000 * seconds) / Math.max(1, issue.requests.total),
    ]),
  );
  return { issue, issuedAt, issueCpuMs };
}

/** First touch: random keys never validated before, one at a time; the latencies, sorted. */
async function firstTouchLatencies({ bench, keys }: Scale): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < VALIDATIONS; i++) {
    const key = keys.splice(Math.floor(Math.random() * keys.length), 1)[0];
    const started = performance.now();
    const res = await fetch(`${bench.system.gatewayUrl}/api/v1/keys/validate`, {
      method: 'POST',
      headers: bench.headers,
      body: JSON.stringify({ key }),
    });
    const body = (await res.json()) as { code: string };
    latencies.push(performance.now() - started);
    if (body.code !== 'valid') throw new Error(`validation of a loaded key said ${body.code}`);
  }
  return latencies.sort((a, b) => a - b);
}

/** A page deep in the list: after a licence in the middle of the loaded ones; its times, sorted, and its failures. */
async function deepListPages({ bench, ids }: Scale) {
  const { system, headers } = bench;
  const deep = [...ids].sort()[Math.floor(ids.length / 2)];
  const pages: number[] = [];
  const listErrors = new Map<string, number>();
  for (let i = 0; i < LIST_PAGES; i++) {
    const started = performance.now();
    const res = await fetch(`${system.gatewayUrl}/api/v1/licenses?limit=20&starting_after=${deep}`, { headers });
    const body = (await res.json()) as { data?: unknown[]; code?: string };
    pages.push(performance.now() - started);
    // A page that did not come back (e.g. the 5 s deadline passed) is reported, not hidden.
    if (body.data?.length !== 20)
      listErrors.set(
        `${res.status} ${body.code ?? ''}`.trim(),
        (listErrors.get(`${res.status} ${body.code ?? ''}`.trim()) ?? 0) + 1,
      );
  }
  return { pages: pages.sort((a, b) => a - b), listErrors };
}

/**
 * Quiet: how long after the last licence the whole system is under 5 % of a core (the reads before
 * ran meanwhile, right after issuance); then its idle CPU, process by process.
 */
async function quietThenIdle(cpu: SystemCpu, issuedAt: number) {
  const quietAfterS = (Date.now() - issuedAt) / 1000 + (await cpu.untilQuiet(5, 5, 300));
  const before = cpu.now();
  await new Promise((r) => setTimeout(r, IDLE_S * 1000));
  const idle = Object.fromEntries(
    Object.entries(cpu.since(before)).map(([k, seconds]) => [k, (100 * seconds) / IDLE_S]),
  );
  return { quietAfterS, idle };
}

/** One size: loaded, then every measurement in turn. */
async function measureSize(n: number, scale: Scale): Promise<Row> {
  await loadUpTo(n, scale);
  const { issue, issuedAt, issueCpuMs } = await issueThroughApi(scale);
  const latencies = await firstTouchLatencies(scale);
  const { pages, listErrors } = await deepListPages(scale);
  const { quietAfterS, idle } = await quietThenIdle(scale.cpu, issuedAt);
  return {
    n,
    issued: issue.requests.total,
    issueRps: issue.requests.average,
    issueFailed: issue.errors + issue.timeouts + issue.non2xx,
    validateP50: pct(latencies, 50),
    validateP99: pct(latencies, 99),
    listP50: pct(pages, 50),
    listP99: pct(pages, 99),
    listErrors: [...listErrors].map(([k, n]) => `${n}× ${k}`).join(', '),
    idle,
    quietAfterS,
    issueCpuMs,
  };
}

/** The "scale" section of docs/benchmarks.md. */
function writeScaleSection(rows: Row[], overPostgres: boolean, bareBefore: number, bareAfter: number) {
  const procs = Object.keys(rows[0]?.idle ?? {});
  const ms = (x: number) => x.toFixed(1);
  const table = [
    '| licences | issuance, 32 connections | failed | first-touch validation p50 / p99 (serial) | deep list page p50 / p99 (limit 20) | under 5 % of a core after the last licence | idle CPU, whole system |',
    '|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.n.toLocaleString('en')} | ${Math.round(r.issueRps)}/s | ${r.issueFailed} | ${ms(r.validateP50)} / ${ms(r.validateP99)} ms | ${ms(r.listP50)} / ${ms(r.listP99)} ms${r.listErrors ? ` (failed: ${r.listErrors})` : ''} | ${Number.isFinite(r.quietAfterS) ? `${r.quietAfterS.toFixed(0)} s` : 'not within 300 s'} | ${Object.values(
          r.idle,
        )
          .reduce((a, b) => a + b, 0)
          .toFixed(1)} % of a core |`,
    ),
  ].join('\n');
  const idleTable = [
    `| process | ${rows.map((r) => r.n.toLocaleString('en')).join(' | ')} |`,
    `|---|${rows.map(() => '---:').join('|')}|`,
    ...procs.map((p) => `| ${p} | ${rows.map((r) => `${r.idle[p].toFixed(1)} %`).join(' | ')} |`),
  ].join('\n');
  const issueTable = [
    `| process | ${rows.map((r) => r.n.toLocaleString('en')).join(' | ')} |`,
    `|---|${rows.map(() => '---:').join('|')}|`,
    ...procs.map((p) => `| ${p} | ${rows.map((r) => r.issueCpuMs[p].toFixed(2)).join(' | ')} |`),
    `| **all** | ${rows
      .map((r) =>
        Object.values(r.issueCpuMs)
          .reduce((a, b) => a + b, 0)
          .toFixed(2),
      )
      .join(' | ')} |`,
  ].join('\n');
  const section = `## At scale (\`npm run bench:scale\`)

- When: ${new Date().toISOString()}; FerretDB ${FERRETDB_VERSION} over ${overPostgres ? 'PostgreSQL' : 'SQLite'}; every licence in one account.
- PostgreSQL's CPU is that of every postgres process on the machine (other users of the server count too).
- The machine in this run: a bare node:http server answered ${Math.round(bareBefore).toLocaleString('en')}/s before it and ${Math.round(bareAfter).toLocaleString('en')}/s after it (autocannon, 50 connections, 5 s, as \`npm run bench\` measures its baseline): compare with that bench's bare row before comparing times.
- Licences loaded in bulk, built by the licence service's own \`newLicense()\`, then \`VACUUM ANALYZE\` as after any import; issuance through the API for ${ISSUE_S} s at each size; ${VALIDATIONS} first-touch validations of random loaded keys, one at a time (each reaches the store); right after it, ${LIST_PAGES} requests for the page after a licence in the middle of the list (while the issued licences' events still go out); the time from the last licence until the whole system is under 5 % of a core (a 5 s window), then idle CPU over ${IDLE_S} s with no traffic.

${table}

Idle CPU by process (% of one core):

${idleTable}

CPU milliseconds per licence issued through the API, by process (the load generator not counted):

${issueTable}
`;
  console.log(`\n${section}`);
  const file = join(repoRoot(), 'docs', 'benchmarks.md');
  writeFileSync(
    file,
    replaceSection(existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmarks\n', 'scale', section),
  );
  console.log('written to docs/benchmarks.md');
}

async function main() {
  // The machine's speed, before anything runs and after the last size: its figures are times and rates.
  const bareBefore = await bareRate();
  const bench = await startBenchSystem('bench-scale');
  const cpu = new SystemCpu(bench);
  const conn = await mongoose.createConnection(bench.t.mongoUrl, { dbName: `${bench.t.dbPrefix}_license` }).asPromise();
  const { License } = licenseModels(conn);
  const rows: Row[] = [];
  try {
    const post = async (path: string, body: unknown) =>
      (
        await fetch(`${bench.system.gatewayUrl}${path}`, {
          method: 'POST',
          headers: bench.headers,
          body: JSON.stringify(body),
        })
      ).json() as Promise<Record<string, any>>;
    const product = await post('/api/v1/products', { name: 'Scale', policy: { duration_days: 365, grace_days: 7 } });
    const scale: Scale = { bench, cpu, License, productId: product.id, keys: [], ids: [], loaded: 0 };
    for (const n of sizes) {
      const row = await measureSize(n, scale);
      rows.push(row);
      console.log(JSON.stringify(row));
    }
  } finally {
    await conn.close();
    await bench.stop();
  }
  writeScaleSection(rows, bench.postgres !== null, bareBefore, await bareRate());
}

void main().catch((err) => {
  console.error(err);
  process.exit(1);
});
