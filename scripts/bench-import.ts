// `npm run bench:import`: 100,000 licences (BENCH_IMPORT_ROWS) imported from one jsonl file through
// POST /api/v1/imports, over the default store (FerretDB over PostgreSQL), as `npm start` runs the
// system. Each row carries a foreign key (a Lemon Squeezy-style UUID), a customer e-mail, metadata and,
// one row in ten, a machine. Measures the upload, the job from its start to `done` (rows per second),
// and then validation of imported keys beside native keys issued through the API, in the same run:
// first touch (serially, each reaching the licence service and the store), then cached throughput
// (autocannon, as `npm run bench` measures it), the two interleaved. Writes the "import" section of
// docs/benchmarks.md.
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { replaceSection, startBenchSystem, SystemCpu, mean, median } from './lib/bench-kit';
import { FERRETDB_VERSION } from './lib/ferretdb';
import { repoRoot } from './lib/paths';

const ROWS = Number(process.env.BENCH_IMPORT_ROWS ?? 100_000);
/** Keys of each kind validated for the first time, one at a time (and then the cached runs' keys). */
const SAMPLE = Number(process.env.BENCH_IMPORT_SAMPLE ?? 1000);
/** The cached runs: autocannon's connections, seconds per run (after a warm-up), runs of each kind. */
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const CACHED_S = Number(process.env.BENCH_DURATION ?? 5);
const WARM_UP_S = 3;
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

interface CachedRun {
  rps: number;
  requests: number;
  p50: number;
  p99: number;
  failed: number;
  /** What the failures were: connection errors, timeouts, and the status of each answer that was not 2xx. */
  why: string;
}

/**
 * Cached validations of these keys at full speed: each connection an app validating its own licence
 * (POST /api/v1/keys/validate, one key per connection), as `npm run bench` drives the gateway.
 */
async function cachedRun(url: string, headers: Record<string, string>, keys: string[], seconds: number) {
  let n = 0;
  const setupClient = (client: autocannon.Client) => {
    const key = keys[n++ % keys.length];
    client.setRequests([{ method: 'POST', path: '/api/v1/keys/validate', headers, body: JSON.stringify({ key }) }]);
  };
  const r = await autocannon({ url, connections: CONNECTIONS, duration: seconds, setupClient });
  const statuses = Object.entries(r.statusCodeStats ?? {})
    .filter(([code]) => !code.startsWith('2'))
    .map(([code, { count }]) => `${count} × ${code}`);
  return {
    rps: r.requests.average,
    requests: r.requests.total,
    p50: r.latency.p50,
    p99: r.latency.p99,
    failed: r.errors + r.timeouts + r.non2xx,
    why: [`${r.errors} errors`, `${r.timeouts} timeouts`, ...statuses].join(', '),
  };
}

type Bench = Awaited<ReturnType<typeof startBenchSystem>>;
type Api = (method: string, path: string, body?: unknown) => Promise<Record<string, any>>;
type Kind = 'imported' | 'native';

/** The jsonl file of ROWS licences of this product, and their keys in file order. */
function importFile(productId: string) {
  const keys: string[] = [];
  const lines: string[] = [];
  for (let i = 0; i < ROWS; i++) {
    const key = randomUUID();
    keys.push(key);
    lines.push(
      JSON.stringify({
        key,
        product_id: productId,
        customer_email: `buyer${i}@example.com`,
        metadata: { order: String(100000 + i) },
        ...(i % 10 === 0 ? { activations: [{ fingerprint: `machine-${i}`, name: 'Desktop' }] } : {}),
      }),
    );
  }
  return { keys, file: Buffer.from(`${lines.join('\n')}\n`) };
}

/** The file uploaded and its job polled until it ends: the times, and the CPU and load meanwhile. */
async function runImport({ system, headers }: Bench, cpu: SystemCpu, api: Api, file: Buffer<ArrayBuffer>) {
  console.log(`importing ${ROWS} rows (${(file.length / 1024 / 1024).toFixed(1)} MB)`);
  const loadBefore = loadavg()[0];
  const cpuStart = cpu.now();
  const t0 = Date.now();
  const res = await fetch(`${system.gatewayUrl}/api/v1/imports?format=jsonl`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/x-ndjson' },
    body: file,
  });
  const started = (await res.json()) as Record<string, any>;
  if (res.status !== 202) throw new Error(`import refused: ${res.status} ${JSON.stringify(started)}`);
  const uploadS = (Date.now() - t0) / 1000;
  let job: Record<string, any> = started;
  while (job.status === 'running') {
    await new Promise((r) => setTimeout(r, 250));
    const next = await api('GET', `/api/v1/imports/${started.id}`);
    // A shared machine under load can make one poll time out (503): poll again.
    if (next.status === 503) continue;
    job = next;
  }
  const totalS = (Date.now() - t0) / 1000;
  const cpuS = cpu.since(cpuStart);
  const loadAfter = loadavg()[0];
  const cpuPerRowMs = (Object.values(cpuS).reduce((a, b) => a + b, 0) * 1000) / ROWS;
  if (job.status !== 'done' || job.imported !== ROWS)
    throw new Error(`import ended ${job.status}: ${JSON.stringify({ ...job, errors: job.errors?.slice(0, 5) })}`);
  const jobS = totalS - uploadS;
  const rate = ROWS / totalS;
  console.log(
    `upload ${uploadS.toFixed(1)} s, job ${jobS.toFixed(1)} s: ${Math.round(rate)} rows/s end to end (${Math.round(ROWS / jobS)} rows/s of the job)`,
  );
  return { uploadS, totalS, jobS, rate, cpuS, cpuPerRowMs, loadBefore, loadAfter };
}

/**
 * Validation of imported keys beside native ones, in this run. First touch: each key's first
 * validation reaches the licence service and the store (no cache has it yet), one at a time.
 */
async function firstTouch(api: Api, productId: string, keys: string[]) {
  const native: string[] = [];
  for (let i = 0; i < SAMPLE; i++)
    native.push(
      (await api('POST', '/api/v1/licenses', { product_id: productId, customer_email: `n${i}@example.com` }))
        .license_key,
    );
  const time = async (sample: string[]) => {
    const ms: number[] = [];
    for (const key of sample) {
      const s = performance.now();
      const r = await api('POST', '/api/v1/keys/validate', { key });
      ms.push(performance.now() - s);
      if (!r.valid) throw new Error(`${key} did not validate: ${JSON.stringify(r)}`);
    }
    return ms.sort((a, b) => a - b);
  };
  const pick = Array.from({ length: SAMPLE }, (_, i) => keys[Math.floor((i * ROWS) / SAMPLE)]);
  // Interleaved halves, so a drift of the machine's speed falls on both kinds alike.
  const half = Math.floor(SAMPLE / 2);
  const foreignMs: number[] = [];
  const nativeMs: number[] = [];
  foreignMs.push(...(await time(pick.slice(0, half))));
  nativeMs.push(...(await time(native.slice(0, half))));
  foreignMs.push(...(await time(pick.slice(half))));
  nativeMs.push(...(await time(native.slice(half))));
  foreignMs.sort((a, b) => a - b);
  nativeMs.sort((a, b) => a - b);
  console.log(`first-touch validation: imported ${fmt(foreignMs)}, native ${fmt(nativeMs)}`);
  return { native, pick, foreignMs, nativeMs };
}

const fmt = (ms: number[]) => `${pct(ms, 50).toFixed(1)} / ${pct(ms, 99).toFixed(1)} ms`;

/** A run that stalled (requests failed, or none answered within it) says nothing about either kind of key. */
const clean = (r: CachedRun) => r.failed === 0 && r.requests > 0;

/**
 * Cached: keys validated at first touch (now in the gateway's cache) at full speed, one per connection,
 * native and imported in turn; the runs in their order.
 */
async function cachedRuns(bench: Bench, keysOf: Record<Kind, string[]>) {
  const { system, headers } = bench;
  const runs: Record<Kind, CachedRun[]> = { imported: [], native: [] };
  const order: { kind: Kind; run: CachedRun }[] = [];
  await cachedRun(system.gatewayUrl, headers, keysOf.native, WARM_UP_S);
  await cachedRun(system.gatewayUrl, headers, keysOf.imported, WARM_UP_S);
  for (let round = 0; round < ROUNDS; round++)
    for (const kind of round % 2 ? (['imported', 'native'] as const) : (['native', 'imported'] as const)) {
      await bench.freshRateWindows();
      const run = await cachedRun(system.gatewayUrl, headers, keysOf[kind], CACHED_S);
      runs[kind].push(run);
      order.push({ kind, run });
      console.log(
        `cached ${kind}: ${Math.round(run.rps)} req/s, p50 ${run.p50} ms, p99 ${run.p99} ms${run.failed ? `; ${run.failed} failed (${run.why})` : ''}`,
      );
    }
  // A stalled run is listed, and the comparison is of the clean runs.
  const cached = (kind: Kind) => {
    const ok = runs[kind].filter(clean);
    return {
      runs: ok.length,
      rps: ok.length ? mean(ok.map((r) => r.rps)) : Number.NaN,
      p50: ok.length ? median(ok.map((r) => r.p50)) : Number.NaN,
      p99: ok.length ? median(ok.map((r) => r.p99)) : Number.NaN,
    };
  };
  return { ci: cached('imported'), cn: cached('native'), order };
}

/** Reads of the store that ran out of time, in every service's log (a stall's cause when there are any). */
function storeTimeoutsIn(logDir: string): number {
  return existsSync(logDir)
    ? readdirSync(logDir).reduce(
        (n, f) =>
          n +
          readFileSync(join(logDir, f), 'utf8')
            .split('\n')
            .filter((l) => l.includes('operation exceeded time limit')).length,
        0,
      )
    : 0;
}

type Measured = {
  file: Buffer<ArrayBuffer>;
  imported: Awaited<ReturnType<typeof runImport>>;
  settleS: number;
  touched: Awaited<ReturnType<typeof firstTouch>>;
  cached: Awaited<ReturnType<typeof cachedRuns>>;
  load: { idle: number; end: number };
  storeTimeouts: number;
};

/** The "import" section of docs/benchmarks.md. */
function writeImportSection({ file, imported, settleS, touched, cached, load, storeTimeouts }: Measured) {
  const { uploadS, totalS, jobS, rate, cpuS, cpuPerRowMs, loadBefore, loadAfter } = imported;
  const { foreignMs, nativeMs } = touched;
  const { ci, cn, order } = cached;
  const [loadIdle, loadEnd] = [load.idle, load.end];
  const stalled = order.filter((o) => !clean(o.run));
  const runRows = order
    .map(
      ({ kind, run }, i) =>
        `| ${i + 1} | ${kind} | ${Math.round(run.rps).toLocaleString('en')} | ${run.p50} / ${run.p99} ms | ${run.requests.toLocaleString('en')} | ${clean(run) ? '' : run.failed ? `stalled: ${run.why}` : 'stalled: no answer within the run'} |`,
    )
    .join('\n');
  const cores = cpus().length;
  // Said only as measured: the load before the bench started its system (other work on the machine),
  // and while it ran (its own processes and anything else).
  const perCore = (l: number) => (l / cores).toFixed(2);
  const loadText = `The machine's 1-minute load average was ${loadIdle.toFixed(1)} before the bench started its system (${perCore(loadIdle)} per core: ${loadIdle / cores >= 0.5 ? 'other work was running on the machine' : 'the machine was otherwise quiet'}), ${loadBefore.toFixed(1)} when the import started, ${loadAfter.toFixed(1)} when it ended and ${loadEnd.toFixed(1)} after the validation runs.`;
  const docPath = join(repoRoot(), 'docs', 'benchmarks.md');
  const doc = existsSync(docPath) ? readFileSync(docPath, 'utf8') : '# Benchmarks\n';
  const cpuLine = Object.entries(cpuS)
    .map(([name, s]) => `${name} ${s.toFixed(1)} s`)
    .join(', ');
  const body = `## Import (\`npm run bench:import\`)

${ROWS.toLocaleString('en')} licences imported with their keys from one jsonl file (${(file.length / 1024 / 1024).toFixed(1)} MB; a Lemon Squeezy-style UUID key, an e-mail and metadata on each row, a machine on one row in ten) through \`POST /api/v1/imports\`, on FerretDB ${FERRETDB_VERSION} over PostgreSQL, the system as \`npm start\` runs it (production mode), on a ${cpus().length}-core machine (the load generator on the same cores). Measured ${new Date().toISOString().slice(0, 10)}.

| rows | upload (202) | job done after | rows/s, from the first byte to \`done\` | rows/s of the job alone |
|---:|---:|---:|---:|---:|
| ${ROWS.toLocaleString('en')} | ${uploadS.toFixed(1)} s | ${totalS.toFixed(1)} s | **${Math.round(rate).toLocaleString('en')}** | ${Math.round(ROWS / jobS).toLocaleString('en')} |

CPU seconds spent meanwhile: ${cpuLine}: ${cpuPerRowMs.toFixed(2)} ms of CPU per row in all, so ${cores} otherwise idle cores would bound the rate near ${Math.round((cores * 1000) / cpuPerRowMs).toLocaleString('en')} rows/s (not measured). ${loadText}

### Validating imported keys and native ones

The ${SAMPLE.toLocaleString('en')} imported keys of the sample (spread over the file) and ${SAMPLE.toLocaleString('en')} native keys issued through the API after the import, of the same product, in the same run, once the system was quiet after the import (under 10 % of a core for 5 s, ${settleS.toFixed(0)} s after \`done\`: its license.created events had gone through every consumer): first touch one at a time (each validation reaches the licence service and the store; the two kinds in interleaved halves), then ${CONNECTIONS} of those keys of each kind again, from the gateway's cache, at full speed (autocannon, ${CONNECTIONS} connections, each an app validating its own licence, \`POST /api/v1/keys/validate\` with an API key; ${WARM_UP_S} s warm-up, then ${ROUNDS} runs of ${CACHED_S} s of each kind, interleaved: rates are means, latencies medians, of the runs that did not stall).

| validation | imported keys | native keys | imported / native |
|---|---:|---:|---:|
| first touch, p50 / p99 (${SAMPLE.toLocaleString('en')} each, serially) | ${fmt(foreignMs)} | ${fmt(nativeMs)} | ${(pct(foreignMs, 50) / pct(nativeMs, 50)).toFixed(2)} (p50) |
| cached, requests/s (${ci.runs} and ${cn.runs} runs) | ${Math.round(ci.rps).toLocaleString('en')} | ${Math.round(cn.rps).toLocaleString('en')} | ${(ci.rps / cn.rps).toFixed(2)} |
| cached, p50 / p99 | ${ci.p50} / ${ci.p99} ms | ${cn.p50} / ${cn.p99} ms | |

The cached runs in their order:

| run | keys | requests/s | p50 / p99 | requests | |
|---:|---|---:|---:|---:|---|
${runRows}
${stalled.length ? `\n${stalled.length} of ${order.length} runs stalled (listed, left out of the comparison above: a stall says nothing of the keys). The gateway answers a cached validation from memory, but rechecks its API key and refreshes its entries through the services, which read the store; ${storeTimeouts ? `the services' logs hold ${storeTimeouts} store reads that ran out of time ("operation exceeded time limit") during the bench: a store that stops answering for a while stalls such a run` : "the services' logs name no store timeout: the cause is not known"}.` : ''}

An imported key is stored, hashed for the caches and looked up exactly as a native one (a foreign key is read by \`parseLicenseKey\` as its exact text, a native one by its check characters); what differs is only the key's text.`;
  writeFileSync(docPath, replaceSection(doc, 'import', body));
}

async function main() {
  // Before anything of the bench runs: what else keeps the machine's cores busy.
  const loadIdle = loadavg()[0];
  const bench = await startBenchSystem('bench-import');
  const { system, headers } = bench;
  const cpu = new SystemCpu(bench);
  try {
    const api: Api = async (method, path, body) => {
      const res = await fetch(`${system.gatewayUrl}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return (await res.json()) as Record<string, any>;
    };
    const product = await api('POST', '/api/v1/products', { name: 'Imported', policy: { max_activations: 5 } });
    const { keys, file } = importFile(product.id);
    const imported = await runImport(bench, cpu, api, file);

    // The import's aftermath first (its 100,000 license.created events through NATS to every consumer):
    // validation is measured on a quiet system, as it would run once an import is done.
    const settleS = await cpu.untilQuiet(10, 5, 300);
    console.log(`the system was quiet (under 10 % of a core for 5 s) ${settleS.toFixed(0)} s after the import`);

    const touched = await firstTouch(api, product.id, keys);
    const cached = await cachedRuns(bench, {
      native: touched.native.slice(0, CONNECTIONS),
      imported: touched.pick.slice(0, CONNECTIONS),
    });
    const load = { idle: loadIdle, end: loadavg()[0] };
    const storeTimeouts = storeTimeoutsIn(join(bench.work, 'logs'));
    writeImportSection({ file, imported, settleS, touched, cached, load, storeTimeouts });
  } finally {
    await bench.stop();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
