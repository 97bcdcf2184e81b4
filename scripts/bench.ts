// `npm run bench`: licence validation through the whole system, against a bare
// node:http server measured in the same run on the same machine: answered from
// the gateway's validation cache, uncached at the gateway (its cache off by a
// setting; the licence service answers from its own), with no cache anywhere, and the
// rate limiter's cost (off, local decisions, one Redis round trip per request), and a validation with
// a licence's own credential ("Authorization: License <key>") against one with an API key, on one gateway.
// Writes docs/benchmarks.md.
//   BENCH_DURATION (s, default 10), BENCH_CONNECTIONS (default 50), BENCH_ROUNDS (default 2),
//   BENCH_PROFILE=1 adds where the time goes: after the measured runs (which
//   are never profiled), two more gateways run under the same load, one
//   answering from its cache and one without it, each profiled during its
//   measured part only (lib/cpu-profile-on-signal.ts).
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { BARE_SERVER, redisPid, spawnNode, startBenchSystem, treeCpuSeconds, median } from './lib/bench-kit';
import { FERRETDB_VERSION } from './lib/ferretdb';
import { freePort, waitForPort } from './lib/net';
import { repoRoot } from './lib/paths';
import { envFor } from './lib/topology';
import { entry } from './lib/launch';
import { combined, connections, duration, hotspots, measure, type Run, WARM_UP_S } from './lib/bench-runs';

const profile = process.env.BENCH_PROFILE === '1';
/** Rounds: every configuration is measured this many times, interleaved with the others. */
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 2));
/** Each bare run between the others (the first and last too). */
const BARE_S = Math.max(2, Math.round(duration / 2));

/** The two runs of one gateway that compare the app's credentials (the same licences, the same settings). */
const APP_API_KEY =
  'cached validation, one licence per connection (an app each), with an API key (Bearer); LICENSE_PER_MINUTE raised';
const APP_LICENSE =
  'cached validation, one licence per connection (an app each), with the licence as credential (License <key>); LICENSE_PER_MINUTE raised';

/**
 * A bare node:http server sending one fixed answer given as JSON (status 200, its headers and body): the
 * gateway's own answer to a cached validation, so that row is what node:http costs for that response alone.
 */
const SHAPED_SERVER = `
  const { headers, body } = JSON.parse(process.argv[2]);
  const flat = Object.entries(headers).flat();
  require('node:http').createServer((req, res) => { res.writeHead(200, flat); res.end(body); }).listen(Number(process.argv[1]), '127.0.0.1');
`;

/** The row of the bare server sending the gateway's answer. */
const SHAPED = "bare node:http sending the gateway's own answer to a cached validation (its headers and body, fixed)";

/** An OTLP/HTTP collector that takes every export and keeps nothing: what tracing costs the gateway, not a collector. */
const OTLP_SINK = `
  require('node:http').createServer((req, res) => { req.resume(); req.on('end', () => { res.writeHead(200, { 'content-type': 'application/x-protobuf' }); res.end(); }); }).listen(Number(process.argv[1]), '127.0.0.1');
`;

/** The headline row: validation as `npm start` runs it. */
const SHIPPED = 'as shipped (npm start defaults: LOG_LEVEL=info, rate limits on): cached validation';
/** The same with OpenTelemetry on at its default sampling (every request traced), exporting to a local sink. */
const TRACED =
  'as shipped, with OpenTelemetry tracing on (OTEL_EXPORTER_OTLP_ENDPOINT set, default sampling: every request traced): cached validation';

type Bench = Awaited<ReturnType<typeof startBenchSystem>>;
type App = { path: string; headers: Record<string, string> };
const at = (port: number) => `http://127.0.0.1:${port}`;

/**
 * More gateways over the same services, each with one setting changed (the differences are the costs),
 * a licence service with its cache off for the gateway that must reach the store every time, the OTLP
 * sink tracing exports to and the bare server.
 */
async function startVariantGateways({ work, t, system }: Bench) {
  const sinkPort = await freePort();
  const sink = spawnNode(['-e', OTLP_SINK, String(sinkPort)]);
  const variants = {
    'limits off': { RATE_LIMITS_ENABLED: 'false' },
    'limits exact': { RATE_LIMIT_LOCAL_PERCENT: '0' },
    uncached: { VALIDATION_CACHE_SIZE: '0' },
    'access log on': { LOG_LEVEL: 'info' },
    'tracing on': { LOG_LEVEL: 'info', OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${sinkPort}` },
    'no cache': { VALIDATION_CACHE_SIZE: '0' } as Record<string, string>,
    workers: { GATEWAY_WORKERS: String(Math.min(2, cpus().length)) },
    // A licence's minute (60 by default) raised out of the way: the load sends hundreds a second per licence.
    'app credentials': { LICENSE_PER_MINUTE: '1000000000' },
  };
  const storeLicensePort = await freePort();
  const storeLicense = spawnNode(
    [join(repoRoot(), entry.license)],
    { ...envFor('license', t, { port: storeLicensePort, addrs: system.addrs }), LICENSE_CACHE_SIZE: '0' },
    join(work, 'license-no-cache.log'),
  );
  await waitForPort('127.0.0.1', storeLicensePort, 20_000);
  variants['no cache'].LICENSE_GRPC_ADDR = `127.0.0.1:${storeLicensePort}`;
  const gateways: Record<keyof typeof variants, { port: number; proc: ChildProcess }> = {} as never;
  for (const [name, env] of Object.entries(variants) as [keyof typeof variants, Record<string, string>][]) {
    const port = await freePort();
    gateways[name] = {
      port,
      proc: spawnNode(
        [join(repoRoot(), entry.gateway)],
        { ...envFor('gateway', t, { port, addrs: system.addrs }), ...env },
        join(work, `gateway-${name.replace(/\W+/g, '-')}.log`),
      ),
    };
  }
  const barePort = await freePort();
  const bare = spawnNode(['-e', BARE_SERVER, String(barePort)]);
  for (const g of Object.values(gateways)) await waitForPort('127.0.0.1', g.port, 60_000);
  await waitForPort('127.0.0.1', barePort, 5000);
  await waitForPort('127.0.0.1', sinkPort, 5000);
  const stop = () => {
    bare.kill();
    sink.kill();
    storeLicense.kill();
    for (const g of Object.values(gateways)) g.proc.kill();
  };
  return { gateways, sink, storeLicense, barePort, stop };
}

type Variants = Awaited<ReturnType<typeof startVariantGateways>>;

/**
 * 20 distinct licences, as 20 customers' apps starting up: their validation paths, and each as an app
 * validating its own licence with an API key or as itself. Every gateway must find the first one valid.
 */
async function createBenchLicenses({ system, headers }: Bench, gatewayPorts: number[]) {
  const post = async (path: string, body: unknown) =>
    (
      await fetch(`${system.gatewayUrl}${path}`, { method: 'POST', headers, body: JSON.stringify(body) })
    ).json() as Promise<Record<string, string>>;
  const product = await post('/api/v1/products', { name: 'Bench' });
  const paths: string[] = [];
  const withApiKey: App[] = [];
  const asLicenses: App[] = [];
  for (let i = 0; i < 20; i++) {
    const license = await post('/api/v1/licenses', {
      product_id: product.id,
      customer_email: `bench${i}@example.com`,
    });
    const path = `/api/v1/licenses/validate?license_key=${license.license_key}`;
    paths.push(path);
    withApiKey.push({ path, headers: {} });
    asLicenses.push({ path, headers: { authorization: `License ${license.license_key}` } });
  }
  for (const port of [Number(new URL(system.gatewayUrl).port), ...gatewayPorts]) {
    const check = (await (await fetch(`http://127.0.0.1:${port}${paths[0]}`, { headers })).json()) as {
      code: string;
    };
    if (check.code !== 'valid') throw new Error(`set-up failed: validation said ${check.code}`);
  }
  return { paths, withApiKey, asLicenses };
}

/** The shipped gateway's answer, replayed by a bare server: what node:http alone costs for that response. */
async function startAnswerReplay(url: string, headers: Record<string, string>) {
  const sample = await fetch(url, { headers });
  const answerHeaders: Record<string, string> = {};
  for (const [name, value] of sample.headers)
    if (!['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding'].includes(name))
      answerHeaders[name] = value;
  const port = await freePort();
  const proc = spawnNode([
    '-e',
    SHAPED_SERVER,
    String(port),
    JSON.stringify({ headers: answerHeaders, body: await sample.text() }),
  ]);
  await waitForPort('127.0.0.1', port, 5000);
  return { proc, port, answerHeaders };
}

/** The processes whose CPU each run counts. */
function watchedProcesses({ system, ferret }: Bench, { gateways, sink, storeLicense }: Variants) {
  return {
    gateway: system.pids.gateway,
    'gateway (limits off)': gateways['limits off'].proc.pid,
    'gateway (limits exact)': gateways['limits exact'].proc.pid,
    'gateway (uncached)': gateways.uncached.proc.pid,
    'gateway (access log on)': gateways['access log on'].proc.pid,
    'gateway (tracing on)': gateways['tracing on'].proc.pid,
    'otlp sink': sink.pid,
    'gateway (no cache)': gateways['no cache'].proc.pid,
    'gateway (workers)': () => treeCpuSeconds(gateways.workers.proc.pid),
    'gateway (app credentials)': gateways['app credentials'].proc.pid,
    license: system.pids.license,
    'license (cache off)': storeLicense.pid,
    ferretdb: ferret.process.pid,
    account: system.pids.account,
    redis: redisPid(),
    'load generator': process.pid,
  };
}

type Watch = ReturnType<typeof watchedProcesses>;
type Spec = [name: string, url: string, apps?: App[]];

/**
 * The machine's speed drifts during a run (shared cores): the bare server is measured before and after
 * every run, and each run is compared with the mean of the two around it. Every configuration runs once
 * per round (BENCH_ROUNDS); its figures are the means over the rounds, its p99 their median. The bare
 * baseline comes first, then the specs' rows in their order.
 */
async function measureRounds(bench: Bench, specs: Spec[], barePort: number, watch: Watch, paths: string[]) {
  const bareRun = () =>
    measure('bare node:http, fixed JSON', at(barePort), {}, { 'load generator': process.pid }, ['/'], BARE_S);
  const bares = [await bareRun()];
  const rounds: Run[][] = specs.map(() => []);
  for (let round = 0; round < ROUNDS; round++)
    for (const [i, [name, url, apps]] of specs.entries()) {
      await bench.freshRateWindows();
      const run = await measure(name, url, bench.headers, watch, paths, duration, undefined, apps);
      bares.push(await bareRun());
      rounds[i].push({ ...run, bareRps: (bares[bares.length - 2].rps + bares[bares.length - 1].rps) / 2 });
    }
  const runs: Run[] = rounds.map(combined);
  const bareRates = bares.map((b) => b.rps);
  const baseline: Run = {
    ...bares[0],
    name: `bare node:http, fixed JSON (mean of ${bares.length} runs, one before and after each other run: ${Math.round(Math.min(...bareRates))}–${Math.round(Math.max(...bareRates))}/s)`,
    rps: bareRates.reduce((a, b) => a + b, 0) / bares.length,
    bareRps: bareRates.reduce((a, b) => a + b, 0) / bares.length,
    p50: Math.max(...bares.map((b) => b.p50)),
    p99: Math.max(...bares.map((b) => b.p99)),
    failed: bares.reduce((n, b) => n + b.failed, 0),
  };
  return { runs: [baseline, ...runs], bares };
}

/** The results table, the CPU table, what each part costs, and the performance budget judged. */
function benchReport(runs: Run[], bares: Run[], watch: Watch, answerHeaders: Record<string, string>) {
  // In the order of `specs` (the bare baseline first).
  const [, logged, traced, cached, off, exact, uncached, noCache, workers, appApiKey, appLicense, replayed] = runs;
  const cpuPerRequestMs = (r: Run, proc: string) => (1000 * (r.cpu[proc] ?? 0)) / r.requests;
  const gatewayOf: Record<string, string> = {
    [cached.name]: 'gateway',
    [off.name]: 'gateway (limits off)',
    [exact.name]: 'gateway (limits exact)',
    [uncached.name]: 'gateway (uncached)',
    [noCache.name]: 'gateway (no cache)',
    [workers.name]: 'gateway (workers)',
    [logged.name]: 'gateway (access log on)',
    [traced.name]: 'gateway (tracing on)',
    [appApiKey.name]: 'gateway (app credentials)',
    [appLicense.name]: 'gateway (app credentials)',
  };
  const gatewayCpu = (r: Run) => cpuPerRequestMs(r, gatewayOf[r.name]);

  const table = [
    '| run | requests/s | vs bare | p50 ms | p99 ms | failed | gateway CPU ms/request |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...runs.map(
      (r) =>
        `| ${r.name} | ${Math.round(r.rps)} | ${((100 * r.rps) / r.bareRps).toFixed(1)} % | ${r.p50} | ${r.p99} | ${r.failed} | ${gatewayOf[r.name] ? gatewayCpu(r).toFixed(3) : '–'} |`,
    ),
  ].join('\n');
  const measured = runs.slice(1);
  const procs = Object.keys(watch).filter((p) => measured.some((r) => (r.cpu[p] ?? 0) > 0.05));
  const cpuTable = [
    `| process | ${measured.map((r) => r.name).join(' | ')} |`,
    `|---|${measured.map(() => '---:').join('|')}|`,
    ...procs.map((p) => `| ${p} | ${measured.map((r) => cpuPerRequestMs(r, p).toFixed(3)).join(' | ')} |`),
  ].join('\n');
  const limiterCost = [
    `Rate limiter, local decisions: ${(gatewayCpu(cached) - gatewayCpu(off)).toFixed(3)} ms of gateway CPU per request (${gatewayCpu(off).toFixed(3)} → ${gatewayCpu(cached).toFixed(3)} ms), throughput ${(((cached.rps - off.rps) / off.rps) * 100).toFixed(1)} %.`,
    `Rate limiter, exact (one Redis script per request): ${(gatewayCpu(exact) - gatewayCpu(off)).toFixed(3)} ms of gateway CPU per request plus ${cpuPerRequestMs(exact, 'redis').toFixed(3)} ms of Redis, throughput ${(((exact.rps - off.rps) / off.rps) * 100).toFixed(1)} %.`,
    `Caches: cached validation is ${(cached.rps / uncached.rps).toFixed(1)}× the rate uncached at the gateway, which is ${(uncached.rps / noCache.rps).toFixed(1)}× the rate with no cache anywhere (${Math.round(noCache.rps)}/s). Uncached at the gateway is ${(uncached.rps / 523).toFixed(1)}× the 523/s before the caches, with no cache anywhere ${(noCache.rps / 523).toFixed(1)}×.`,
    `Access log (one buffered line per request, packages/runtime/src/observability/access-log.ts, to a file): ${(gatewayCpu(logged) - gatewayCpu(cached)).toFixed(3)} ms of gateway CPU per request, throughput ${(((logged.rps - cached.rps) / cached.rps) * 100).toFixed(1)} %.`,
    `OpenTelemetry tracing on at its default sampling (every request a span, batched over OTLP/HTTP), against the same gateway as shipped (tracing off): ${(gatewayCpu(traced) - gatewayCpu(logged)).toFixed(3)} ms of gateway CPU per request (${gatewayCpu(logged).toFixed(3)} → ${gatewayCpu(traced).toFixed(3)} ms), throughput ${(((traced.rps - logged.rps) / logged.rps) * 100).toFixed(1)} %. Off, a request runs no tracing code but a test of \`undefined\`.`,
    `node:http alone: a bare server sending the gateway's own answer (its ${Object.keys(answerHeaders).length} headers and body) runs at ${((100 * replayed.rps) / replayed.bareRps).toFixed(1)} % of the bare server; validation as shipped is ${((100 * logged.rps) / replayed.rps).toFixed(1)} % of it. The gap between those two is the gateway's work; the rest of the gap to bare is node:http writing that response.`,
    `Licence credential vs API key (one gateway, the same 20 licences, each connection an app validating its own): gateway CPU per validation ${(gatewayCpu(appLicense) / gatewayCpu(appApiKey)).toFixed(2)}× the API key's (${gatewayCpu(appApiKey).toFixed(3)} → ${gatewayCpu(appLicense).toFixed(3)} ms), throughput ${(appLicense.rps / appApiKey.rps).toFixed(2)}×.`,
  ].join('\n');
  // The validation path's performance budget, judged in this run. The 523/s before the caches was 0.72 % of a bare server's 73,064/s in its
  // own run: on a machine that is slower or faster today, the share of bare is the comparable figure.
  const BEFORE_SHARE = 523 / 73_064;
  const share = (r: Run) => r.rps / r.bareRps;
  const mark = (ok: boolean) => (ok ? 'met' : '**not met**');
  const targets = [
    "Targets (the validation path's performance budget), judged in this run:",
    '',
    '| target | measured | |',
    '|---|---:|---|',
    `| as shipped: cached validation ≥ 50 % of bare node:http, p99 ≤ 10 ms, 0 errors | ${(100 * share(logged)).toFixed(1)} %, p99 ${logged.p99} ms, ${logged.failed} errors | ${mark(share(logged) >= 0.5 && logged.p99 <= 10 && logged.failed === 0)} |`,
    `| as shipped: the access log costs ≤ 10 % of throughput | ${((100 * (cached.rps - logged.rps)) / cached.rps).toFixed(1)} % | ${mark(logged.rps >= 0.9 * cached.rps)} |`,
    `| tuned: cached validation ≥ 30 % of bare node:http | ${(100 * share(cached)).toFixed(1)} % | ${mark(share(cached) >= 0.3)} |`,
    `| cached p99 ≤ 15 ms, 0 errors | ${cached.p99} ms, ${cached.failed} errors (the bare server's p99 in this run: median ${median(bares.map((b) => b.p99))} ms, at most ${Math.max(...bares.map((b) => b.p99))} ms) | ${mark(cached.p99 <= 15 && cached.failed === 0)} |`,
    `| the same, with ${workers.name.match(/\d+ gateway workers/)?.[0]} | ${(100 * share(workers)).toFixed(1)} %, p99 ${workers.p99} ms, ${workers.failed} errors | ${mark(share(workers) >= 0.3 && workers.p99 <= 15 && workers.failed === 0)} |`,
    `| gateway CPU ≤ 0.15 ms per cached validation | ${gatewayCpu(cached).toFixed(3)} ms | ${mark(gatewayCpu(cached) <= 0.15)} |`,
    `| uncached ≥ 3× before, as a share of bare (3 × 0.72 % = 2.15 %) | ${(100 * share(uncached)).toFixed(2)} % (${(share(uncached) / BEFORE_SHARE).toFixed(1)}×); no cache anywhere ${(100 * share(noCache)).toFixed(2)} % (${(share(noCache) / BEFORE_SHARE).toFixed(1)}×) | ${mark(share(uncached) >= 3 * BEFORE_SHARE)} |`,
    `| uncached ≥ 3 × 523/s = 1,569/s, absolute | ${Math.round(uncached.rps)}/s; no cache anywhere ${Math.round(noCache.rps)}/s | ${mark(uncached.rps >= 1569)} |`,
    // Noise between two runs of one configuration is a few per cent: within 5 % counts as no more.
    `| a validation with a licence credential costs no more gateway CPU than one with an API key | ${(gatewayCpu(appLicense) / gatewayCpu(appApiKey)).toFixed(2)}× (${gatewayCpu(appLicense).toFixed(3)} vs ${gatewayCpu(appApiKey).toFixed(3)} ms) | ${mark(gatewayCpu(appLicense) <= 1.05 * gatewayCpu(appApiKey))} |`,
  ].join('\n');
  return { table, cpuTable, limiterCost, targets };
}

/**
 * Two more gateways under the same load, one answering from its cache and one without it, each
 * profiled during its measured part only (scripts/lib/cpu-profile-on-signal.ts: SIGUSR2 after the
 * warm-up starts it, SIGUSR2 at the end writes it).
 */
async function profileGateways(bench: Bench, paths: string[]): Promise<string> {
  const { work, t, system, headers } = bench;
  const profiled = async (name: string, env: Record<string, string>) => {
    const dir = join(work, `prof-${name}`);
    mkdirSync(dir, { recursive: true });
    const port = await freePort();
    const proc = spawnNode(
      ['--require', join(__dirname, 'lib', 'cpu-profile-on-signal.js'), join(repoRoot(), entry.gateway)],
      {
        ...envFor('gateway', t, { port, addrs: system.addrs }),
        ...env,
        BENCH_CPU_PROFILE_DIR: dir,
      },
    );
    await waitForPort('127.0.0.1', port, 10_000);
    await bench.freshRateWindows();
    const signal = () => proc.kill('SIGUSR2');
    await measure(`profile ${name}`, at(port), headers, {}, paths, duration, { start: signal, end: signal });
    for (let waited = 0; !readdirSync(dir).some((f) => f.endsWith('.cpuprofile')) && waited < 10_000; waited += 100)
      await sleep(100);
    proc.kill('SIGTERM');
    return hotspots(dir).join('\n');
  };
  const cachedProfile = await profiled('cached', {});
  const uncachedProfile = await profiled('uncached', { VALIDATION_CACHE_SIZE: '0' });
  return `\n\n## Where the time goes (CPU profiles of the gateway, self time, taken after the measured runs under the same load, warm-up excluded)\n\nV8's profiler samples the thread whatever the CPU does: \`writev\` is the response's system call, including the time the kernel spends delivering it over loopback to the load generator and any time the gateway waits there for a core (a bare node:http server pays the same per response).\n\nGateway answering cached validations (rate limits on):\n\n\`\`\`\n${cachedProfile}\n\`\`\`\n\nGateway without the validation cache (every validation asks the licence service):\n\n\`\`\`\n${uncachedProfile}\n\`\`\``;
}

/** docs/benchmarks.md up to the first section another benchmark writes. */
function benchmarksDoc(
  { postgres }: Bench,
  { table, cpuTable, limiterCost, targets }: ReturnType<typeof benchReport>,
  profileText: string,
): string {
  return `# Benchmarks

Measured by \`npm run bench\`${profile ? ' with `BENCH_PROFILE=1` (the measured runs are not profiled)' : ''}: autocannon, ${connections} connections, ${WARM_UP_S} s warm-up then ${duration} s per run,
all runs in one invocation on the same machine. The machine is shared and noisy: read the ratios, not the absolute figures.
Its speed drifts during a run, so the bare server is measured (${BARE_S} s) before and after every other run, and each run's
"vs bare" is against the mean of the two bare runs around it. Each configuration ran ${ROUNDS} times, interleaved with the others
(\`BENCH_ROUNDS\`): rates and shares are means over the rounds, p50 and p99 medians, CPU per request the total over all.

- When: ${new Date().toISOString()}
- Machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}
- System: gateway, account, product and licence services as separate processes; FerretDB ${FERRETDB_VERSION} over ${postgres ? 'PostgreSQL' : 'SQLite'}; NATS; Redis. The load generator shares the same cores.

${table}

The first row is validation as \`npm start\`, compose and Kubernetes run it (\`LOG_LEVEL=info\`: one access-log line per
request; rate limits on), with tracing off as shipped. The second is the same gateway with OpenTelemetry tracing on
at its default sampling (\`parentbased_always_on\`: every request a span, batched to a local OTLP/HTTP sink that
keeps nothing; the sink's CPU is its own row below): the difference is what tracing costs the hot path. Off, tracing
runs nothing per request but one test of \`undefined\` (the SDK is not loaded). The rows after them are tuned
configurations, each with the access log off (\`LOG_LEVEL=warn\`) and one setting changed, to show what each part costs.

Each validation: Express routing, bearer auth (cached after the first call), the two rate-limit windows (decided in
memory far from the limits, else one Redis script), then the answer: from the gateway's validation cache (judged with
proto/rules at the current time), or, uncached at the gateway, one gRPC call to the licence service, which answers from
its own cache of licences (kept exact by the same events), or with no cache anywhere, one \`findOne\` by key on the store.

CPU per request by process (from /proc, during the measured part of each run):

${cpuTable}

${limiterCost}

${targets}${profileText}
`;
}

/**
 * Writes this bench's part of docs/benchmarks.md. Everything from the first section another benchmark
 * writes (bench-scale.ts, bench-heartbeat.ts, bench-events.ts, bench-import.ts: <!-- name --> …
 * <!-- /name -->) on is theirs, with the text written between them by hand: kept as it is.
 */
function writeBenchmarksDoc(doc: string): void {
  const file = join(repoRoot(), 'docs', 'benchmarks.md');
  const previous = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const tailAt = previous.search(/^<!-- [\w-]+ -->$/m);
  const kept = tailAt >= 0 ? previous.slice(tailAt).trimEnd() : '';
  writeFileSync(file, kept ? `${doc.trimEnd()}\n\n${kept}\n` : doc);
  console.log('\nwritten to docs/benchmarks.md');
}

async function main() {
  const bench = await startBenchSystem('bench');
  const variants = await startVariantGateways(bench);
  const { gateways } = variants;
  /** The bare server replaying the gateway's answer (started once a licence exists to answer about). */
  let replay: Awaited<ReturnType<typeof startAnswerReplay>> | undefined;
  try {
    const { paths, withApiKey, asLicenses } = await createBenchLicenses(
      bench,
      Object.values(gateways).map((g) => g.port),
    );
    replay = await startAnswerReplay(`${at(gateways['access log on'].port)}${paths[0]}`, bench.headers);
    const watch = watchedProcesses(bench, variants);
    console.log(
      `${WARM_UP_S} s warm-up then ${duration} s per run, ${connections} connections, 20 distinct licence keys...`,
    );
    // The headline is what users run (npm start, compose and Kubernetes: LOG_LEVEL=info, limits on); every other
    // row is a tuned configuration that shows one cost, with the access log off (the bench system's LOG_LEVEL=warn).
    const specs: Spec[] = [
      [SHIPPED, at(gateways['access log on'].port)],
      [TRACED, at(gateways['tracing on'].port)],
      ['cached validation, rate limits on (local decisions)', bench.system.gatewayUrl],
      ['cached validation, rate limits off', at(gateways['limits off'].port)],
      ['cached validation, rate limits exact (one Redis round trip each)', at(gateways['limits exact'].port)],
      [
        'uncached at the gateway (VALIDATION_CACHE_SIZE=0): the licence service answers from its cache',
        at(gateways.uncached.port),
      ],
      [
        'uncached anywhere (VALIDATION_CACHE_SIZE=0, LICENSE_CACHE_SIZE=0): a store read each',
        at(gateways['no cache'].port),
      ],
      [
        `cached validation, rate limits on, ${Math.min(2, cpus().length)} gateway workers (GATEWAY_WORKERS)`,
        at(gateways.workers.port),
      ],
      [APP_API_KEY, at(gateways['app credentials'].port), withApiKey],
      [APP_LICENSE, at(gateways['app credentials'].port), asLicenses],
      [SHAPED, at(replay.port)],
    ];
    const { runs, bares } = await measureRounds(bench, specs, variants.barePort, watch, paths);
    const report = benchReport(runs, bares, watch, replay.answerHeaders);
    console.log(`\n${report.table}\n\n${report.cpuTable}\n\n${report.limiterCost}\n\n${report.targets}`);
    const profileText = profile ? await profileGateways(bench, paths) : '';
    if (profileText) console.log(profileText);
    writeBenchmarksDoc(benchmarksDoc(bench, report, profileText));
  } finally {
    replay?.proc.kill();
    variants.stop();
    await bench.stop();
  }
}

void main().catch((err) => {
  console.error(err);
  process.exit(1);
});
