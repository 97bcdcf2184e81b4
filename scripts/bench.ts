// `npm run bench`: licence validation through the whole system, against a bare
// node:http server measured in the same run on the same machine, with the
// Redis rate limiter on and off. Writes docs/benchmarks.md.
//   BENCH_DURATION (s, default 10), BENCH_CONNECTIONS (default 50),
//   BENCH_PROFILE=1 adds a CPU profile summary of the gateway and licence service.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import { AccountServiceClient } from '@licensing/proto';
import { createClient } from '@licensing/runtime';
import { FERRETDB_VERSION, startFerretDB } from './lib/ferretdb';
import { launchSystem } from './lib/launch';
import { freePort, waitForPort } from './lib/net';
import { repoRoot } from './lib/paths';
import { envFor, type Topology } from './lib/topology';

const duration = Number(process.env.BENCH_DURATION ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const profile = process.env.BENCH_PROFILE === '1';
const WARM_UP_S = 3;

const BARE_SERVER = `
  const body = JSON.stringify({ valid: true, code: 'valid', detail: 'the licence is valid', product_id: 'prod_01M82BCFGS21FWB5Z5A498AR3N', customer_email: 'a@example.com', status: 'active', expires_at: null });
  require('node:http').createServer((req, res) => { res.writeHead(200, { 'content-type': 'application/json' }); res.end(body); }).listen(Number(process.argv[1]), '127.0.0.1');
`;

interface Run {
  name: string;
  rps: number;
  requests: number;
  p50: number;
  p99: number;
  failed: number;
  /** CPU seconds each watched process used during the measured part. */
  cpu: Record<string, number>;
}

/** CPU seconds (user + system) a process has used so far, from /proc. */
function cpuSeconds(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime in clock ticks (100/s)
  } catch {
    return 0;
  }
}

async function measure(name: string, url: string, headers: Record<string, string>, watch: Record<string, number | undefined>): Promise<Run> {
  await autocannon({ url, connections, duration: WARM_UP_S, headers });
  const before = Object.fromEntries(Object.entries(watch).map(([n, pid]) => [n, cpuSeconds(pid)]));
  const r = await autocannon({ url, connections, duration, headers });
  const cpu = Object.fromEntries(Object.entries(watch).map(([n, pid]) => [n, cpuSeconds(pid) - before[n]]));
  return { name, rps: r.requests.average, requests: r.requests.total, p50: r.latency.p50, p99: r.latency.p99, failed: r.errors + r.timeouts + r.non2xx, cpu };
}

/** Self time of a V8 CPU profile, idle excluded, by package (or our own folder) and by function. */
function hotspots(dir: string, top = 8): string[] {
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) return ['(no profile written)'];
  const prof = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[]; samples: number[] };
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const byPackage = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let busy = 0;
  for (const id of prof.samples) {
    const f = byId.get(id)!.callFrame;
    if (f.functionName === '(idle)') continue;
    busy++;
    const inModules = f.url.split('node_modules/')[1];
    const pkg = inModules
      ? inModules.split('/').slice(0, inModules.startsWith('@') ? 2 : 1).join('/')
      : f.url.startsWith('node:') ? 'node core' : f.url ? f.url.replace(/^file:\/\//, '').replace(/^.*\/(gateway|services\/[^/]+|packages\/[^/]+|proto)\/.*$/, '$1 (ours)') : f.functionName;
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + 1);
    const fn = `${f.functionName || '(anonymous)'} ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber + 1}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + 1);
  }
  const fmt = (m: Map<string, number>) => [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, top).map(([k, n]) => `${((100 * n) / busy).toFixed(1).padStart(5)}%  ${k}`);
  return ['by package (share of busy time):', ...fmt(byPackage), '', 'by function:', ...fmt(byFunction)];
}

function spawnNode(args: string[], env: Record<string, string> = {}): ChildProcess {
  return spawn(process.execPath, args, { stdio: 'ignore', env: { ...process.env, ...env } });
}

async function main() {
  const work = mkdtempSync(join(tmpdir(), 'licensing-bench-'));
  const ferret = await startFerretDB({ port: await freePort(), dataDir: join(work, 'ferretdb') });
  const id = randomBytes(3).toString('hex');
  const t: Topology = {
    mongoUrl: ferret.url,
    natsUrl: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
    redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    rateLimitPrefix: `bench_${id}:rl`,
    dbPrefix: `bench_${id}`,
    subjectPrefix: `bench_${id}.events`,
    stream: `BENCH_${id}`,
    internalToken: randomBytes(24).toString('hex'),
    apiKeyPepper: randomBytes(24).toString('hex'),
    signingKeySecret: randomBytes(32).toString('base64'),
    webhookSecretKey: randomBytes(32).toString('base64'),
    host: '127.0.0.1',
    nodeEnv: 'production',
    logLevel: 'warn',
    metricsAnyPort: true,
    // As in production behind a load balancer that terminates TLS: the requests
    // below say X-Forwarded-Proto: https, which the gateway believes from loopback.
    trustedProxies: '127.0.0.1',
  };
  const profDirs = { gateway: join(work, 'prof-gateway'), license: join(work, 'prof-license') };
  const system = await launchSystem(
    t,
    { account: await freePort(), product: await freePort(), license: await freePort(), checkout: await freePort(), checkoutHttp: await freePort(), webhook: await freePort(), gateway: await freePort() },
    join(work, 'logs'),
    profile ? { gateway: ['--cpu-prof', `--cpu-prof-dir=${profDirs.gateway}`], license: ['--cpu-prof', `--cpu-prof-dir=${profDirs.license}`] } : {},
  );
  // The same gateway with rate limits off, over the same services: the limiter's cost is the difference.
  const unlimitedPort = await freePort();
  const unlimited = spawnNode([join(repoRoot(), 'gateway/dist/main.js')], { ...envFor.gateway(t, unlimitedPort, system.addrs), RATE_LIMITS_ENABLED: 'false' });
  const barePort = await freePort();
  const bare = spawnNode(['-e', BARE_SERVER, String(barePort)]);
  await waitForPort('127.0.0.1', unlimitedPort, 10_000);
  await waitForPort('127.0.0.1', barePort, 5000);

  try {
    // One enterprise account with limits far above what the run sends, a product and a licence.
    const admin = createClient(AccountServiceClient, system.addrs.account, t.internalToken);
    const { secret, account } = await admin.call.createAccount({ name: 'Bench', plan: 'enterprise' });
    await admin.call.updateAccount({ id: account!.id, perMinuteLimit: 1_000_000, perHourLimit: 1_000_000 });
    admin.close();
    const headers = { authorization: `Bearer ${secret}`, 'content-type': 'application/json', 'x-forwarded-proto': 'https' };
    const post = async (path: string, body: unknown) => (await fetch(`${system.gatewayUrl}${path}`, { method: 'POST', headers, body: JSON.stringify(body) })).json() as Promise<Record<string, string>>;
    const product = await post('/api/v1/products', { name: 'Bench' });
    const license = await post('/api/v1/licenses', { product_id: product.id, customer_email: 'bench@example.com' });
    const path = `/api/v1/licenses/validate?license_key=${license.license_key}`;
    const check = (await (await fetch(`${system.gatewayUrl}${path}`, { headers })).json()) as { code: string };
    if (check.code !== 'valid') throw new Error(`set-up failed: validation said ${check.code}`);

    const watch = { gateway: system.pids.gateway, 'gateway (limits off)': unlimited.pid, license: system.pids.license, ferretdb: ferret.process.pid, account: system.pids.account, 'load generator': process.pid };
    console.log(`${WARM_UP_S} s warm-up then ${duration} s per run, ${connections} connections...`);
    const runs = [
      await measure('bare node:http, fixed JSON', `http://127.0.0.1:${barePort}/`, {}, { 'load generator': process.pid }),
      await measure('validate via gateway, rate limits off', `http://127.0.0.1:${unlimitedPort}${path}`, headers, watch),
      await measure('validate via gateway, Redis rate limits on', `${system.gatewayUrl}${path}`, headers, watch),
    ];
    const [baseline, off, on] = runs;
    const cpuPerRequestMs = (r: Run, proc: string) => (1000 * (r.cpu[proc] ?? 0)) / r.requests;
    const gatewayCpuOff = cpuPerRequestMs(off, 'gateway (limits off)');
    const gatewayCpuOn = cpuPerRequestMs(on, 'gateway');

    const table = [
      '| run | requests/s | vs bare | p50 ms | p99 ms | failed |',
      '|---|---:|---:|---:|---:|---:|',
      ...runs.map((r) => `| ${r.name} | ${Math.round(r.rps)} | ${((100 * r.rps) / baseline.rps).toFixed(1)} % | ${r.p50} | ${r.p99} | ${r.failed} |`),
    ].join('\n');
    const procs = Object.keys(watch).filter((p) => (on.cpu[p] ?? 0) + (off.cpu[p] ?? 0) > 0.05);
    const cpuTable = [
      '| process | CPU ms per request, limits off | CPU ms per request, limits on |',
      '|---|---:|---:|',
      ...procs.map((p) => `| ${p} | ${cpuPerRequestMs(off, p).toFixed(3)} | ${cpuPerRequestMs(on, p).toFixed(3)} |`),
    ].join('\n');
    const limiterCost = `The Redis limiter (two windows: two Redis round trips per request) costs ${(gatewayCpuOn - gatewayCpuOff).toFixed(3)} ms of gateway CPU per request (${gatewayCpuOff.toFixed(3)} → ${gatewayCpuOn.toFixed(3)} ms) and changes throughput by ${(((on.rps - off.rps) / off.rps) * 100).toFixed(1)} % (p50 ${off.p50} → ${on.p50} ms).`;
    console.log(`\n${table}\n\n${cpuTable}\n\n${limiterCost}`);

    await system.stop(); // profiles are written on exit
    let profileText = '';
    if (profile) {
      profileText = `\n\n## Where the time goes (CPU profile of the limits-on gateway and the licence service, self time)\n\nGateway:\n\n\`\`\`\n${hotspots(profDirs.gateway).join('\n')}\n\`\`\`\n\nLicence service:\n\n\`\`\`\n${hotspots(profDirs.license).join('\n')}\n\`\`\``;
      console.log(profileText);
    }
    const doc = `# Benchmarks

Measured by \`npm run bench\`${profile ? ' with `BENCH_PROFILE=1`' : ''}: autocannon, ${connections} connections, ${WARM_UP_S} s warm-up then ${duration} s per run,
all runs in one invocation on the same machine. The machine is shared and noisy: read the ratios, not the absolute figures.

- When: ${new Date().toISOString()}
- Machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}
- System: gateway, account, product and licence services as separate processes; FerretDB ${FERRETDB_VERSION} over SQLite; NATS; Redis. The load generator shares the same cores.

${table}

Each validation: Express routing, bearer auth (cached after the first call), the two rate-limit windows in Redis (when on),
one gRPC call to the licence service, one \`findOne\` by key on the store, JSON out.

CPU per request by process (from /proc, during the measured part of each run):

${cpuTable}

${limiterCost}${profileText}
`;
    writeFileSync(join(repoRoot(), 'docs', 'benchmarks.md'), doc);
    console.log('\nwritten to docs/benchmarks.md');
  } finally {
    bare.kill();
    unlimited.kill();
    await system.stop();
    await ferret.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

void main().catch((err) => {
  console.error(err);
  process.exit(1);
});
