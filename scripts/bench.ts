// `npm run bench`: licence validation through the whole system, against a bare
// node:http server measured in the same run on the same machine. Writes
// docs/benchmarks.md. BENCH_DURATION (s, default 10), BENCH_CONNECTIONS (50),
// BENCH_PROFILE=1 adds a CPU profile summary of the gateway and licence service.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import { AccountServiceClient } from '@licensing/proto';
import { createClient } from '@licensing/runtime';
import { startFerretDB } from './lib/ferretdb';
import { launchSystem } from './lib/launch';
import { freePort, waitForPort } from './lib/net';
import { repoRoot } from './lib/paths';

const duration = Number(process.env.BENCH_DURATION ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const profile = process.env.BENCH_PROFILE === '1';

interface Result {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

async function load(name: string, url: string, headers: Record<string, string>, seconds: number): Promise<Result> {
  const r = await autocannon({ url, connections, duration: seconds, headers, pipelining: 1 });
  return { name, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.timeouts, non2xx: r.non2xx };
}

/** CPU seconds (user + system) a process has used so far, from /proc. */
function cpuSeconds(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in clock ticks (100/s on Linux)
  } catch {
    return 0;
  }
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
    const pkg = f.url.includes('node_modules/')
      ? f.url.split('node_modules/').pop()!.split('/').slice(0, f.url.split('node_modules/').pop()!.startsWith('@') ? 2 : 1).join('/')
      : f.url.startsWith('node:') ? 'node core' : f.url ? f.url.replace(/^file:\/\//, '').replace(/^.*\/(gateway|services\/[^/]+|packages\/[^/]+|proto)\/.*$/, '$1 (ours)') : f.functionName;
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + 1);
    const fn = `${f.functionName || '(anonymous)'} ${f.url.split('node_modules/').pop()?.split('/').slice(-2).join('/') ?? ''}:${f.lineNumber + 1}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + 1);
  }
  const fmt = (m: Map<string, number>) => [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, top).map(([k, n]) => `${((100 * n) / busy).toFixed(1).padStart(5)}%  ${k}`);
  return ['by package (share of busy time):', ...fmt(byPackage), '', 'by function:', ...fmt(byFunction)];
}

const BARE_SERVER = `
  const body = JSON.stringify({ valid: true, code: 'valid', detail: 'the licence is valid', product_id: 'prod_01M82BCFGS21FWB5Z5A498AR3N', customer_email: 'a@example.com', status: 'active', expires_at: null });
  require('node:http').createServer((req, res) => { res.writeHead(200, { 'content-type': 'application/json' }); res.end(body); }).listen(Number(process.argv[1]), '127.0.0.1');
`;

async function main() {
  const work = mkdtempSync(join(tmpdir(), 'licensing-bench-'));
  const ferret = await startFerretDB({ port: await freePort(), dataDir: join(work, 'ferretdb') });
  const id = randomBytes(3).toString('hex');
  const internalToken = randomBytes(24).toString('hex');
  const profDirs = { gateway: join(work, 'prof-gateway'), license: join(work, 'prof-license') };
  const system = await launchSystem(
    {
      mongoUrl: ferret.url,
      natsUrl: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
      dbPrefix: `bench_${id}`,
      subjectPrefix: `bench_${id}.events`,
      stream: `BENCH_${id}`,
      internalToken,
      apiKeyPepper: randomBytes(24).toString('hex'),
      host: '127.0.0.1',
      nodeEnv: 'production',
      logLevel: 'warn',
    },
    { account: await freePort(), product: await freePort(), license: await freePort(), gateway: await freePort() },
    join(work, 'logs'),
    profile ? { gateway: ['--cpu-prof', `--cpu-prof-dir=${profDirs.gateway}`], license: ['--cpu-prof', `--cpu-prof-dir=${profDirs.license}`] } : {},
  );
  // The baseline: a bare node:http server in its own process, answering a fixed validation-shaped body.
  const barePort = await freePort();
  const bareProcess = spawn(process.execPath, ['-e', BARE_SERVER, String(barePort)], { stdio: 'ignore' });
  await waitForPort('127.0.0.1', barePort, 5000);

  try {
    // Set up one account, product and licence through the real API.
    const admin = createClient(AccountServiceClient, system.addrs.account, internalToken);
    const { secret } = await admin.call.createAccount({ name: 'Bench', plan: 'enterprise' });
    admin.close();
    const headers = { authorization: `Bearer ${secret}`, 'content-type': 'application/json' };
    const product = (await (await fetch(`${system.gatewayUrl}/api/v1/products`, { method: 'POST', headers, body: JSON.stringify({ name: 'Bench' }) })).json()) as { id: string };
    const license = (await (await fetch(`${system.gatewayUrl}/api/v1/licenses`, { method: 'POST', headers, body: JSON.stringify({ product_id: product.id, customer_email: 'bench@example.com' }) })).json()) as { license_key: string };
    const validateUrl = `${system.gatewayUrl}/api/v1/licenses/validate?license_key=${license.license_key}`;
    const check = (await (await fetch(validateUrl, { headers })).json()) as { code: string };
    if (check.code !== 'valid') throw new Error(`set-up failed: validation said ${check.code}`);

    const bareUrl = `http://127.0.0.1:${barePort}/`;
    console.log(`warming up (3 s each), then ${duration} s per run with ${connections} connections...`);
    await load('warm-up', bareUrl, {}, 3);
    const bare = await load('bare node:http, fixed JSON', bareUrl, {}, duration);
    await load('warm-up', validateUrl, headers, 3);
    const processes = { ...system.pids, ferretdb: ferret.process.pid, 'load generator (this process)': process.pid };
    const before = Object.fromEntries(Object.entries(processes).map(([n, pid]) => [n, cpuSeconds(pid)]));
    const gateway = await load('GET /api/v1/licenses/validate via gateway', validateUrl, headers, duration);
    const cpuRows = Object.entries(processes)
      .map(([n, pid]) => [n, cpuSeconds(pid) - before[n]] as const)
      .sort((a, b) => b[1] - a[1])
      .map(([n, sec]) => `| ${n} | ${sec.toFixed(1)} | ${((100 * sec) / duration).toFixed(0)} % |`);
    const cpuTable = ['| process | CPU seconds | of one core |', '|---|---:|---:|', ...cpuRows].join('\n');
    console.log(`\nCPU used during the validation run:\n${cpuTable}`);

    const ratio = gateway.rps / bare.rps;
    const rows = [bare, gateway].map((r) => `| ${r.name} | ${Math.round(r.rps)} | ${r.p50} | ${r.p99} | ${r.errors} | ${r.non2xx} |`);
    const table = ['| run | requests/s | p50 ms | p99 ms | errors | non-2xx |', '|---|---:|---:|---:|---:|---:|', ...rows].join('\n');
    console.log(`\n${table}\n\nvalidation through the gateway = ${(ratio * 100).toFixed(1)} % of the bare server's throughput (${(1 / ratio).toFixed(1)}x slower)`);

    await system.stop(); // profiles are written on exit
    let profileText = '';
    if (profile) {
      profileText = `\n\n## Where the time goes (CPU profile, self time)\n\nGateway:\n\n\`\`\`\n${hotspots(profDirs.gateway).join('\n')}\n\`\`\`\n\nLicence service:\n\n\`\`\`\n${hotspots(profDirs.license).join('\n')}\n\`\`\``;
      console.log(profileText);
    }
    const doc = `# Benchmarks

Measured by \`npm run bench\` (${profile ? 'with BENCH_PROFILE=1, ' : ''}${duration} s per run after a 3 s warm-up, ${connections} connections, autocannon).
This machine is shared and noisy: compare the ratio, not the absolute figures, and re-run before drawing conclusions.

- When: ${new Date().toISOString()}
- Machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}
- System: gateway, account, product and licence services as separate processes, FerretDB ${'v1.24.2'} over SQLite, NATS; the load generator runs on the same cores.

${table}

**Validation through the gateway: ${(ratio * 100).toFixed(1)} % of a bare node:http server's throughput** (ratio ${ratio.toFixed(3)}), measured in the same run.
Each validation is: HTTP parse and routing in Express, bearer auth (cached after the first call), one gRPC call to the licence service, one \`findOne\` by key on the store, JSON out.

CPU used by each process during the validation run (${cpus().length} cores in all):

${cpuTable}${profileText}
`;
    writeFileSync(join(repoRoot(), 'docs', 'benchmarks.md'), doc);
    console.log('\nwritten to docs/benchmarks.md');
  } finally {
    bareProcess.kill();
    await system.stop();
    await ferret.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

void main().catch((err) => {
  console.error(err);
  process.exit(1);
});
