// `npm run bench:heartbeat`: floating-seat heartbeats through the whole system, against cached
// validation measured in the same run on the same machine (the first row of `npm run bench`). 1,000
// floating seats (20 licences of a product with lease_seconds, 50 seats each), heartbeated round-robin
// by BENCH_CONNECTIONS (default 50) connections, so no two requests in flight renew the same seat. A
// heartbeat is one gRPC call and, for a running lease, one store operation (a conditional update by
// activation id, an equality on an index whatever the number of seats; the licence from the cache).
// Writes the "heartbeat" section of docs/benchmarks.md.
//   BENCH_DURATION (s, default 10), BENCH_CONNECTIONS (default 50), BENCH_ROUNDS (default 2)
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { cpuSeconds, replaceSection, startBenchSystem, mean, median } from './lib/bench-kit';
import { FERRETDB_VERSION } from './lib/ferretdb';
import { repoRoot } from './lib/paths';

const duration = Number(process.env.BENCH_DURATION ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 2));
const WARM_UP_S = 3;
const LICENSES = 20;
const SEATS_PER_LICENSE = 50;

interface Run {
  rps: number;
  requests: number;
  p50: number;
  p99: number;
  failed: number;
  cpu: Record<string, number>;
}

type Bench = Awaited<ReturnType<typeof startBenchSystem>>;

/**
 * The set-up: 20 licences of a plain product to validate (the baseline, as `npm run bench` validates
 * them), and 1,000 floating seats (20 licences × 50 activations) to heartbeat.
 */
async function createSeats({ system, headers }: Bench) {
  const post = async (path: string, body?: unknown) => {
    const res = await fetch(`${system.gatewayUrl}${path}`, {
      method: 'POST',
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await res.json()) as Record<string, any>;
    if (res.status >= 300) throw new Error(`set-up: POST ${path} → ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const plain = await post('/api/v1/products', { name: 'Bench plain' });
  const validations: string[] = [];
  for (let i = 0; i < LICENSES; i++) {
    const l = await post('/api/v1/licenses', { product_id: plain.id, customer_email: `plain${i}@example.com` });
    validations.push(`/api/v1/licenses/validate?license_key=${l.license_key}`);
  }
  // 1,000 floating seats: 20 licences × 50 activations.
  const floating = await post('/api/v1/products', {
    name: 'Bench floating',
    policy: { lease_seconds: 3600, max_activations: SEATS_PER_LICENSE },
  });
  // The licences side by side, each one's seats one after another (parallel activations of one licence
  // contend for its slots, and some would be refused with 409 "retry").
  const seatsOf = async (i: number) => {
    const key = (await post('/api/v1/licenses', { product_id: floating.id, customer_email: `float${i}@example.com` }))
      .license_key as string;
    const paths: string[] = [];
    for (let j = 0; j < SEATS_PER_LICENSE; j++) {
      const seat = await post(`/api/v1/licenses/${key}/activations`, { fingerprint: `machine-${i}-${j}` });
      paths.push(`/api/v1/licenses/${key}/activations/${seat.id}/heartbeat`);
    }
    return paths;
  };
  const heartbeats = (await Promise.all(Array.from({ length: LICENSES }, (_, i) => seatsOf(i)))).flat();
  const check = await post(heartbeats[0]);
  if (!check.lease_expires_at) throw new Error('set-up failed: a heartbeat answered without a lease');
  return { validations, heartbeats };
}

/** One measured run of GET or POST over `paths`, with the CPU each watched process used. */
function measurement({ system, headers }: Bench, watch: Record<string, number | undefined>) {
  return async (method: 'GET' | 'POST', paths: string[], seconds: number): Promise<Run> => {
    // Round-robin over every path across all connections: with 1,000 seats and 50 connections, no two
    // requests in flight heartbeat the same seat (as 1,000 apps would not).
    let next = 0;
    const requests = [
      {
        method,
        headers,
        setupRequest: (req: autocannon.Request) => ({ ...req, path: paths[next++ % paths.length] }),
      },
    ];
    const run = (s: number) => autocannon({ url: system.gatewayUrl, connections, duration: s, requests });
    await run(WARM_UP_S);
    const before = Object.fromEntries(Object.entries(watch).map(([n, pid]) => [n, cpuSeconds(pid)]));
    const r = await run(seconds);
    return {
      rps: r.requests.average,
      requests: r.requests.total,
      p50: r.latency.p50,
      p99: r.latency.p99,
      failed: r.errors + r.timeouts + r.non2xx,
      cpu: Object.fromEntries(Object.entries(watch).map(([n, pid]) => [n, cpuSeconds(pid) - before[n]])),
    };
  };
}

async function main() {
  const bench = await startBenchSystem('bench-heartbeat');
  const { system, ferret } = bench;
  const watch: Record<string, number | undefined> = {
    gateway: system.pids.gateway,
    license: system.pids.license,
    ferretdb: ferret.process.pid,
  };
  try {
    const { validations, heartbeats } = await createSeats(bench);
    const measure = measurement(bench, watch);
    console.log(
      `${WARM_UP_S} s warm-up then ${duration} s per run, ${connections} connections, ${ROUNDS} rounds; ${heartbeats.length} floating seats...`,
    );
    const runs = { validation: [] as Run[], heartbeat: [] as Run[] };
    for (let round = 0; round < ROUNDS; round++) {
      await bench.freshRateWindows();
      runs.validation.push(await measure('GET', validations, duration));
      await bench.freshRateWindows();
      runs.heartbeat.push(await measure('POST', heartbeats, duration));
    }
    const row = (name: string, rs: Run[]) => {
      const requests = rs.reduce((n, r) => n + r.requests, 0);
      const cpuMs = (proc: string) => (1000 * rs.reduce((s, r) => s + (r.cpu[proc] ?? 0), 0)) / requests;
      return {
        name,
        rps: mean(rs.map((r) => r.rps)),
        p50: median(rs.map((r) => r.p50)),
        p99: median(rs.map((r) => r.p99)),
        failed: rs.reduce((n, r) => n + r.failed, 0),
        cpu: Object.keys(watch).map((p) => cpuMs(p).toFixed(3)),
      };
    };
    const v = row('cached validation, 20 licences (the baseline)', runs.validation);
    const h = row(`heartbeat, ${heartbeats.length} floating seats round-robin`, runs.heartbeat);
    const table = [
      `| run | requests/s | vs validation | p50 ms | p99 ms | p99 vs validation | failed | CPU ms/request: ${Object.keys(watch).join(', ')} |`,
      '|---|---:|---:|---:|---:|---:|---:|---|',
      ...[v, h].map(
        (r) =>
          `| ${r.name} | ${Math.round(r.rps)} | ${((100 * r.rps) / v.rps).toFixed(1)} % | ${r.p50} | ${r.p99} | ${(r.p99 / v.p99).toFixed(1)}× | ${r.failed} | ${r.cpu.join(', ')} |`,
      ),
    ].join('\n');
    const section = `## Floating-seat heartbeats (\`npm run bench:heartbeat\`)

- When: ${new Date().toISOString()}; ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}; FerretDB ${FERRETDB_VERSION} over ${bench.postgres ? 'PostgreSQL' : 'SQLite'}.
- autocannon, ${connections} connections, ${WARM_UP_S} s warm-up then ${duration} s per run, ${ROUNDS} rounds interleaved (rates are means, p50 and p99 medians). The machine is shared and noisy: read the ratios, which compare runs of the same invocation.
- ${heartbeats.length} floating seats: ${LICENSES} licences of a product with \`lease_seconds\` 3600 and \`max_activations\` ${SEATS_PER_LICENSE}, every seat activated; the heartbeats go round-robin over all of them. Each heartbeat is a gRPC call to the licence service and one store operation, the conditional update of a running lease by activation id (the licence comes from the licence service's cache; a seat that is not running is read first, to say why); no scan (the query-shape check of \`npm test\` covers them), no event, and no eviction of any validation cache.

${table}
`;
    console.log(`\n${section}`);
    const file = join(repoRoot(), 'docs', 'benchmarks.md');
    writeFileSync(
      file,
      replaceSection(existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmarks\n', 'heartbeat', section),
    );
    console.log('written to docs/benchmarks.md');
  } finally {
    await bench.stop();
  }
}

void main().catch((err) => {
  console.error(err);
  process.exit(1);
});
