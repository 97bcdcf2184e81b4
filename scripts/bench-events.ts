// `npm run bench:events`: how fast a licence's event reaches a vendor's webhook endpoint, and what a
// burst of issuance costs until the system is quiet again. The system runs as `npm start` runs it
// (development, LOG_LEVEL=info, loopback webhooks allowed) over a fresh default store, with one
// endpoint subscribed to license.created on a receiver in this process that records arrivals.
//   1. Steady: 100 issuances/s for 60 s (BENCH_EVENTS_RATE, BENCH_EVENTS_STEADY_S); latency from each
//      201 to its webhook's arrival, p50/p99/max.
//   2. Burst: 10,000 licences (BENCH_EVENTS_BURST) at 32 connections: issuance rate and failures, the
//      time from the last 201 to the last webhook, every webhook exactly once (by webhook-id and by
//      licence), and the time until the whole system uses under 5 % of a core.
//   3. CPU per licence by process (issuance and its delivery), RSS of every process at idle and after.
// Writes the "events" section of docs/benchmarks.md.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { bareRate, replaceSection, startBenchSystem, SystemCpu } from './lib/bench-kit';
import { FERRETDB_VERSION } from './lib/ferretdb';
import { repoRoot } from './lib/paths';

const RATE = Number(process.env.BENCH_EVENTS_RATE ?? 100);
const STEADY_S = Number(process.env.BENCH_EVENTS_STEADY_S ?? 60);
const BURST = Number(process.env.BENCH_EVENTS_BURST ?? 10_000);
const CONNECTIONS = 32;
/** The whole system is quiet when a window of this many seconds averages under QUIET_PCT of a core. */
const QUIET_WINDOW_S = 5;
const QUIET_PCT = 5;
const QUIET_GIVE_UP_S = 300;
const DRAIN_GIVE_UP_S = 600;

/** What the receiver saw: each arrival by webhook-id, and licence key → when its license.created came. */
class Receiver {
  private server!: Server;
  readonly byWebhookId = new Map<string, number>();
  readonly arrivals = new Map<string, number>();
  duplicates = 0;
  lastArrival = 0;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const at = Date.now();
        const id = String(req.headers['webhook-id'] ?? '');
        const seen = this.byWebhookId.get(id) ?? 0;
        this.byWebhookId.set(id, seen + 1);
        if (seen) this.duplicates++;
        else {
          const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
            type: string;
            data: { license?: { key?: string } };
          };
          const key = event.data.license?.key;
          if (event.type === 'license.created' && key) {
            if (this.arrivals.has(key)) this.duplicates++;
            else this.arrivals.set(key, at);
          }
        }
        this.lastArrival = at;
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const addr = this.server.address() as { port: number };
    this.url = `http://127.0.0.1:${addr.port}/webhooks`;
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Bench = Awaited<ReturnType<typeof startBenchSystem>>;

/** What each phase needs: the gateway, the receiver, the system's CPU and the body of one issuance. */
interface Phase {
  gatewayUrl: string;
  headers: Bench['headers'];
  issueBody: string;
  receiver: Receiver;
  cpu: SystemCpu;
  untilQuiet: () => Promise<number>;
}

/** A product to issue licences of and the receiver's endpoint, subscribed to license.created; the body of one issuance. */
async function subscribeReceiver({ system, headers }: Bench, receiver: Receiver): Promise<string> {
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${system.gatewayUrl}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };
  const product = (await post('/api/v1/products', { name: 'Events', policy: { duration_days: 365 } })).body;
  const endpoint = await post('/api/v1/webhooks', { url: receiver.url, events: ['license.created'] });
  if (endpoint.status !== 201) throw new Error(`webhook endpoint refused: ${JSON.stringify(endpoint.body)}`);
  return JSON.stringify({ product_id: product.id, customer_email: 'events@example.com' });
}

/** 1. Steady: one issuance every 1000/RATE ms, each request on its own (not waiting for the last). */
async function steady({ gatewayUrl, headers, issueBody, receiver }: Phase): Promise<Result['steady']> {
  console.log(`steady: ${RATE} issuances/s for ${STEADY_S} s`);
  const answered = new Map<string, number>();
  let steadyFailed = 0;
  const started = Date.now();
  const inFlight: Promise<void>[] = [];
  for (let i = 0; i < RATE * STEADY_S; i++) {
    const due = started + (i * 1000) / RATE;
    if (due > Date.now()) await sleep(due - Date.now());
    inFlight.push(
      fetch(`${gatewayUrl}/api/v1/licenses`, { method: 'POST', headers, body: issueBody }).then(
        async (res) => {
          const at = Date.now();
          const body = (await res.json()) as { license_key?: string };
          if (res.status === 201 && body.license_key) answered.set(body.license_key, at);
          else steadyFailed++;
        },
        () => void steadyFailed++,
      ),
    );
  }
  await Promise.all(inFlight);
  const steadyRate = (RATE * STEADY_S) / ((Date.now() - started) / 1000);
  for (let i = 0; i < 300 && [...answered.keys()].some((k) => !receiver.arrivals.has(k)); i++) await sleep(100);
  const latencies = [...answered].map(([k, at]) => (receiver.arrivals.get(k) ?? Number.NaN) - at);
  const steadyMissing = latencies.filter(Number.isNaN).length;
  console.log(`  ${answered.size} issued, ${steadyFailed} failed, ${steadyMissing} webhooks missing`);
  const steadySorted = latencies.filter((l) => !Number.isNaN(l)).sort((a, b) => a - b);
  return {
    rate: steadyRate,
    issued: answered.size,
    failed: steadyFailed,
    missing: steadyMissing,
    p50: pct(steadySorted, 50),
    p99: pct(steadySorted, 99),
    max: steadySorted[steadySorted.length - 1],
  };
}

/** 2. Burst: BURST licences at 32 connections; the keys issued, when the last 201 came and the CPU it took. */
async function issueBurst({ gatewayUrl, headers, issueBody, cpu }: Phase) {
  console.log(`burst: ${BURST} licences at ${CONNECTIONS} connections`);
  const burstKeys: string[] = [];
  let last201 = 0;
  const burstCpu = cpu.now();
  const burstStart = Date.now();
  const burst = await autocannon({
    url: gatewayUrl,
    connections: CONNECTIONS,
    amount: BURST,
    timeout: 30,
    requests: [
      {
        method: 'POST',
        path: '/api/v1/licenses',
        headers,
        body: issueBody,
        onResponse: (status: number, body: string) => {
          if (status !== 201) return;
          last201 = Date.now();
          burstKeys.push((JSON.parse(body) as { license_key: string }).license_key);
        },
      },
    ],
  });
  const issueS = (last201 - burstStart) / 1000;
  return { burst, burstKeys, last201, issueS, issuanceCpu: cpu.since(burstCpu) };
}

/** Then the drain (every webhook of the burst, or DRAIN_GIVE_UP_S) and the quiet. */
async function burstAndDrain(phase: Phase) {
  const { receiver, cpu } = phase;
  const before = { arrivals: receiver.arrivals.size, duplicates: receiver.duplicates };
  const { burst, burstKeys, last201, issueS, issuanceCpu } = await issueBurst(phase);
  const drainCpu = cpu.now();
  const drainStart = Date.now();
  console.log(`issued ${burstKeys.length} in ${issueS.toFixed(1)} s; waiting for their webhooks`);
  for (let i = 1; Date.now() - drainStart < DRAIN_GIVE_UP_S * 1000; i++) {
    const waiting = burstKeys.filter((k) => !receiver.arrivals.has(k)).length;
    if (!waiting) break;
    if (i % 25 === 0) console.log(`  ${waiting} webhooks still to come`);
    await sleep(200);
  }
  const lastWebhook = Math.max(...burstKeys.map((k) => receiver.arrivals.get(k) ?? 0));
  const burstMissing = burstKeys.filter((k) => !receiver.arrivals.has(k)).length;
  const deliveryCpu = cpu.since(drainCpu);
  const quietCpu = cpu.now();
  const quietS = await phase.untilQuiet();
  const settleCpu = cpu.since(quietCpu);
  const perLicense = (cpu: Record<string, number>) =>
    Object.fromEntries(Object.entries(cpu).map(([k, s]) => [k, (1000 * s) / Math.max(1, burstKeys.length)]));
  const result: Result['burst'] = {
    issued: burstKeys.length,
    failed: burst.errors + burst.timeouts + burst.non2xx,
    rate: burstKeys.length / issueS,
    lastWebhookAfterS: (lastWebhook - last201) / 1000,
    missing: burstMissing,
    duplicates: receiver.duplicates - before.duplicates,
    received: receiver.arrivals.size - before.arrivals,
    quietAfterS: quietS,
  };
  const cpuPerLicence: Result['cpu'] = {
    issuance: perLicense(issuanceCpu),
    delivery: perLicense(deliveryCpu),
    settle: perLicense(settleCpu),
  };
  return { burst: result, cpu: cpuPerLicence };
}

async function main() {
  // The machine's speed before the system starts: the figures below are times and rates.
  const bareBefore = await bareRate();
  const receiver = new Receiver();
  await receiver.start();
  // As `npm start` runs it: development, the access log on, loopback webhooks allowed.
  const bench = await startBenchSystem('bench-events', {
    nodeEnv: 'development',
    logLevel: 'info',
    webhookAllowLoopback: true,
  });
  const cpu = new SystemCpu(bench, { nats: true });
  // Profiling (BENCH_PROFILE_DIR) keeps every process busy sampling: it is never quiet, so do not wait.
  const untilQuiet = () =>
    process.env.BENCH_PROFILE_DIR
      ? sleep(3000).then(() => Number.NaN)
      : cpu.untilQuiet(QUIET_PCT, QUIET_WINDOW_S, QUIET_GIVE_UP_S);

  try {
    const issueBody = await subscribeReceiver(bench, receiver);
    const phase: Phase = {
      gatewayUrl: bench.system.gatewayUrl,
      headers: bench.headers,
      issueBody,
      receiver,
      cpu,
      untilQuiet,
    };
    console.log('waiting for the idle system to settle');
    await untilQuiet();
    const rssIdle = cpu.rss();
    const steadyResult = await steady(phase);
    await untilQuiet();
    const { burst, cpu: cpuPerLicence } = await burstAndDrain(phase);
    const rssAfter = cpu.rss();
    const result: Result = {
      steady: steadyResult,
      burst,
      cpu: cpuPerLicence,
      rss: { idle: rssIdle, after: rssAfter },
      bare: { before: bareBefore, after: await bareRate() },
    };
    console.log(JSON.stringify(result, null, 2));
    writeSection(result, bench.postgres !== null);
  } finally {
    await bench.stop();
    await receiver.stop();
  }
}

type Result = {
  steady: { rate: number; issued: number; failed: number; missing: number; p50: number; p99: number; max: number };
  burst: {
    issued: number;
    failed: number;
    rate: number;
    lastWebhookAfterS: number;
    missing: number;
    duplicates: number;
    received: number;
    quietAfterS: number;
  };
  cpu: Record<'issuance' | 'delivery' | 'settle', Record<string, number>>;
  rss: Record<'idle' | 'after', Record<string, number>>;
  /** The bare node:http server's requests/s before the system started and once it was quiet. */
  bare: { before: number; after: number };
};

function writeSection(r: Result, overPostgres: boolean): void {
  const mark = (ok: boolean) => (ok ? 'met' : '**not met**');
  const sum = (x: Record<string, number>) => Object.values(x).reduce((a, b) => a + b, 0);
  const procs = Object.keys(r.cpu.issuance);
  const exactlyOnce = r.burst.missing === 0 && r.burst.duplicates === 0 && r.burst.received === r.burst.issued;
  const section = `## Events to webhooks (\`npm run bench:events\`)

- When: ${new Date().toISOString()}; FerretDB ${FERRETDB_VERSION} over ${overPostgres ? 'PostgreSQL' : 'SQLite'}; the system as \`npm start\` runs it (development, \`LOG_LEVEL=info\`, loopback webhooks allowed), one endpoint subscribed to \`license.created\` on a loopback receiver in the bench process.
- Latency: from the \`201\` of \`POST /api/v1/licenses\` to the receiver's arrival of that licence's \`license.created\`.
- The load generator and the receiver run on the same cores as the system; PostgreSQL's and NATS's CPU is that of every such process on the machine.
- The machine in this run: a bare node:http server answered ${Math.round(r.bare.before).toLocaleString('en')}/s before the system started and ${Math.round(r.bare.after).toLocaleString('en')}/s once it was quiet (autocannon, 50 connections, 5 s, as \`npm run bench\` measures its baseline).

| what | figure | target | |
|---|---:|---:|---|
| steady ${RATE} issuances/s for ${STEADY_S} s: webhook latency p50 / p99 / max | ${r.steady.p50} / ${r.steady.p99} / ${r.steady.max} ms (${r.steady.rate.toFixed(0)}/s sent, ${r.steady.failed} failed, ${r.steady.missing} never arrived) | p99 ≤ 500 ms | ${mark(r.steady.p99 <= 500 && r.steady.missing === 0 && r.steady.failed === 0)} |
| burst of ${r.burst.issued.toLocaleString('en')} at ${CONNECTIONS} connections: issuance | ${r.burst.rate.toFixed(0)}/s, ${r.burst.failed} failed | ≥ 850/s, 0 failed | ${mark(r.burst.rate >= 850 && r.burst.failed === 0)} |
| burst: last webhook after the last \`201\` | ${r.burst.lastWebhookAfterS.toFixed(1)} s | ≤ 60 s | ${mark(r.burst.lastWebhookAfterS <= 60)} |
| burst: every webhook exactly once (by \`webhook-id\` and by licence) | ${r.burst.received.toLocaleString('en')} arrived, ${r.burst.missing} missing, ${r.burst.duplicates} twice | all, once | ${mark(exactlyOnce)} |
| burst: whole system under ${QUIET_PCT} % of a core (${QUIET_WINDOW_S} s window) after the last webhook | ${Number.isFinite(r.burst.quietAfterS) ? `${r.burst.quietAfterS.toFixed(0)} s` : `not within ${QUIET_GIVE_UP_S} s`} | ≤ 60 s | ${mark(r.burst.quietAfterS <= 60)} |

CPU milliseconds per licence of the burst, by process: while issuing (to the last \`201\`), while delivering (to the last webhook), and until quiet:

| process | issuing | delivering | until quiet | all | RSS idle → after, MB |
|---|---:|---:|---:|---:|---:|
${procs
  .map(
    (p) =>
      `| ${p} | ${r.cpu.issuance[p].toFixed(2)} | ${r.cpu.delivery[p].toFixed(2)} | ${r.cpu.settle[p].toFixed(2)} | ${(r.cpu.issuance[p] + r.cpu.delivery[p] + r.cpu.settle[p]).toFixed(2)} | ${r.rss.idle[p].toFixed(0)} → ${r.rss.after[p].toFixed(0)} |`,
  )
  .join('\n')}
| **all** | ${sum(r.cpu.issuance).toFixed(2)} | ${sum(r.cpu.delivery).toFixed(2)} | ${sum(r.cpu.settle).toFixed(2)} | ${(sum(r.cpu.issuance) + sum(r.cpu.delivery) + sum(r.cpu.settle)).toFixed(2)} | ${sum(r.rss.idle).toFixed(0)} → ${sum(r.rss.after).toFixed(0)} |
`;
  const file = join(repoRoot(), 'docs', 'benchmarks.md');
  writeFileSync(
    file,
    replaceSection(existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmarks\n', 'events', section),
  );
  console.log(`\n${section}\nwritten to docs/benchmarks.md`);
}

void main().catch((err) => {
  console.error(err);
  process.exit(1);
});
