import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import { AccountServiceClient } from '@licensing/proto';
import { createClient } from '@licensing/runtime';
import { preparePostgres, startFerretDB, type FerretDB, type PostgresDatabase } from './ferretdb';
import { entry, freePorts, launchSystem, type RunningSystem } from './launch';
import { freePort, waitForPort } from './net';
import { credentialOf, type Component, type Topology } from './topology';

// What `npm run bench` and `npm run bench:scale` share: a whole system as
// separate processes over a store of its own, CPU accounting from /proc, and
// an account with limits far above what a benchmark sends.

/** CPU seconds (user + system) a process has used so far, from /proc. */
export function cpuSeconds(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime in clock ticks (100/s)
  } catch {
    return 0;
  }
}

/** CPU seconds of a process and its direct children (a gateway primary and its workers). */
export function treeCpuSeconds(pid: number | undefined): number {
  if (!pid) return 0;
  let children: number[] = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    children = [];
  }
  return cpuSeconds(pid) + children.reduce((n, child) => n + cpuSeconds(child), 0);
}

/** The local Redis server's pid, to count its CPU too (undefined when it cannot be found). */
export function redisPid(): number | undefined {
  try {
    return (
      Number(execFileSync('pgrep', ['-x', 'redis-server'], { encoding: 'utf8' }).trim().split('\n')[0]) || undefined
    );
  } catch {
    return undefined;
  }
}

/** A node process; its output goes to `logFile` when given (as a deployed process's would), else nowhere. */
export function spawnNode(args: string[], env: Record<string, string> = {}, logFile?: string): ChildProcess {
  const out = logFile ? openSync(logFile, 'a') : 'ignore';
  return spawn(process.execPath, args, { stdio: ['ignore', out, out], env: { ...process.env, ...env } });
}

export interface BenchSystem {
  work: string;
  t: Topology;
  ferret: FerretDB;
  postgres: PostgresDatabase | null;
  system: RunningSystem;
  /** Headers of an enterprise account whose limits are far above what the run sends. */
  headers: Record<string, string>;
  accountId: string;
  /**
   * Empties the account's rate-limit windows in Redis: a run of many configurations sends over a million
   * requests within the hour, and near its hourly limit a gateway asks Redis on every request (quota.ts),
   * which would measure the limiter's endgame instead of the configuration. Each gateway takes the fresh
   * counts at its next sync.
   */
  freshRateWindows(): Promise<void>;
  stop(): Promise<void>;
}

/** BENCH_PROFILE_DIR=<dir>: every component writes a V8 CPU profile of its whole run there when it stops. */
function profiled(dir: string | undefined): Partial<Record<Component, string[]>> {
  if (!dir) return {};
  const args = ['--cpu-prof', `--cpu-prof-dir=${dir}`];
  return Object.fromEntries(Object.keys(entry).map((c) => [c, args]));
}

/** The whole system over a fresh store (FerretDB over PostgreSQL when it answers; BENCH_STORE=sqlite for SQLite). */
export async function startBenchSystem(name: string, overrides: Partial<Topology> = {}): Promise<BenchSystem> {
  const work = mkdtempSync(join(tmpdir(), `licensing-${name}-`));
  const id = randomBytes(3).toString('hex');
  const postgres =
    process.env.BENCH_STORE === 'sqlite'
      ? null
      : await preparePostgres(`licensing_${name.replace(/\W/g, '_')}_${id}`, { fresh: true });
  const ferret = await startFerretDB({ port: await freePort(), dataDir: join(work, 'ferretdb'), postgres });
  const t: Topology = {
    mongoUrl: ferret.url,
    ferretdbPostgresUrl: postgres?.url,
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
    // say X-Forwarded-Proto: https, which the gateway believes from loopback.
    trustedProxies: '127.0.0.1',
    // Production mode refuses the test payment provider unless told: the benchmarks take no payments.
    checkoutTestMode: true,
    ...overrides,
  };
  const system = await launchSystem(t, await freePorts(), join(work, 'logs'), {
    nodeArgs: profiled(process.env.BENCH_PROFILE_DIR),
  });
  // A bench stopped by Ctrl-C or a timeout stops its system too, instead of leaving it running unowned.
  let stopping = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.on(signal, () => {
      if (stopping) return; // a second signal (timeout(1) forwards one too) must not cut the stop short
      stopping = true;
      console.error(`${signal}: stopping the bench's system`);
      void Promise.allSettled([system.stop()])
        .then(() => ferret.stop())
        .then(() => postgres?.drop())
        .finally(() => process.exit(130));
    });
  const admin = createClient(AccountServiceClient, system.addrs.account, credentialOf(t, 'operator'));
  const { secret, account } = await admin.call.createAccount({ name: 'Bench', plan: 'enterprise' });
  await admin.call.updateAccount({ id: account!.id, per_minute_limit: 1_000_000, per_hour_limit: 1_000_000 });
  admin.close();
  return {
    work,
    t,
    ferret,
    postgres,
    system,
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', 'x-forwarded-proto': 'https' },
    accountId: account!.id,
    async freshRateWindows() {
      const redis = new Redis(t.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
      try {
        await redis.connect();
        const keys = await redis.keys(`${t.rateLimitPrefix}:*`);
        if (keys.length) await redis.del(...keys);
      } finally {
        redis.disconnect();
      }
    },
    async stop() {
      await system.stop();
      await ferret.stop();
      await postgres?.drop();
      if (process.env.BENCH_KEEP === '1') console.log(`kept ${work}`);
      else rmSync(work, { recursive: true, force: true });
    },
  };
}

/** Keeps the other sections of docs/benchmarks.md when one is rewritten: `<!-- name -->` … `<!-- /name -->`. */
export function replaceSection(doc: string, name: string, body: string): string {
  const start = `<!-- ${name} -->`;
  const end = `<!-- /${name} -->`;
  const section = `${start}\n${body.trim()}\n${end}`;
  const i = doc.indexOf(start);
  const j = doc.indexOf(end);
  return i >= 0 && j > i ? doc.slice(0, i) + section + doc.slice(j + end.length) : `${doc.trimEnd()}\n\n${section}\n`;
}

/** Every process of that name (PostgreSQL runs one per connection). */
export function pidsOf(name: string): number[] {
  try {
    return execFileSync('pgrep', ['-x', name], { encoding: 'utf8' }).trim().split('\n').map(Number).filter(Boolean);
  } catch {
    return [];
  }
}

/** Resident memory of a process in MB, from /proc (0 when it is gone). */
export function rssMb(pid: number): number {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('VmRSS:'));
    return line ? Number(line.split(/\s+/)[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The CPU of every process of a bench's system, by name: its components, FerretDB, Redis, and (when
 * asked) NATS and PostgreSQL, whose processes are looked up anew each time (one backend per connection;
 * other users of those servers on the machine count too).
 */
export class SystemCpu {
  constructor(
    private readonly bench: BenchSystem,
    private readonly extra: { nats?: boolean } = {},
  ) {}

  processes(): Record<string, number[]> {
    const { system, ferret, postgres } = this.bench;
    return {
      ...Object.fromEntries(Object.entries(system.pids).map(([k, pid]) => [k, pid ? [pid] : []])),
      ferretdb: [ferret.process.pid!],
      redis: [redisPid() ?? 0],
      ...(this.extra.nats ? { 'nats-server': pidsOf('nats-server') } : {}),
      ...(postgres ? { postgresql: pidsOf('postgres') } : {}),
    };
  }

  /** CPU seconds of every process now, by pid. */
  now(): Map<number, number> {
    return new Map(Object.values(this.processes()).flatMap((pids) => pids.map((p) => [p, cpuSeconds(p)] as const)));
  }

  /** CPU seconds by process name since `start`; processes started meanwhile count from zero. */
  since(start: Map<number, number>): Record<string, number> {
    return Object.fromEntries(
      Object.entries(this.processes()).map(([k, pids]) => [
        k,
        pids.reduce((sum, p) => sum + cpuSeconds(p) - (start.get(p) ?? 0), 0),
      ]),
    );
  }

  rss(): Record<string, number> {
    return Object.fromEntries(
      Object.entries(this.processes()).map(([k, pids]) => [k, pids.reduce((s, p) => s + rssMb(p), 0)]),
    );
  }

  /**
   * Seconds until a `windowS` window of the whole system averages under `pct` % of a core (Infinity
   * after `giveUpS`), with a line of progress every 10 s naming the busiest processes.
   */
  async untilQuiet(pct = 5, windowS = 5, giveUpS = 300): Promise<number> {
    const started = Date.now();
    const samples: { at: number; cpu: Map<number, number> }[] = [{ at: started, cpu: this.now() }];
    while (Date.now() - started < giveUpS * 1000) {
      await sleep(1000);
      const now = Date.now();
      samples.push({ at: now, cpu: this.now() });
      if (samples.length <= windowS) continue;
      const from = samples[samples.length - 1 - windowS];
      const used = this.since(from.cpu);
      const share = (100 * Object.values(used).reduce((a, b) => a + b, 0)) / ((now - from.at) / 1000);
      if (share < pct) return (now - started) / 1000;
      if (samples.length % 10 === 0) {
        const top = Object.entries(used)
          .sort((a, b) => b[1] - a[1])
          .slice(0, 4)
          .map(([k, s]) => `${k} ${((100 * s) / ((now - from.at) / 1000)).toFixed(1)}`);
        console.log(`  the system uses ${share.toFixed(1)} % of a core (${top.join(', ')})`);
      }
    }
    return Number.POSITIVE_INFINITY;
  }
}

/** The mean of some figures (a bench's rounds). */
export const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** Their median (of latencies: one slow round does not move it). */
export const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/**
 * The bare node:http server every bench compares with: one fixed JSON answer (a cached validation's
 * body), nothing else. `npm run bench` measures it between its runs; the others with bareRate().
 */
export const BARE_SERVER = `
  const body = JSON.stringify({ valid: true, code: 'valid', detail: 'the licence is valid', product_id: 'prod_01M82BCFGS21FWB5Z5A498AR3N', customer_email: 'a@example.com', status: 'active', expires_at: null });
  require('node:http').createServer((req, res) => { res.writeHead(200, { 'content-type': 'application/json' }); res.end(body); }).listen(Number(process.argv[1]), '127.0.0.1');
`;

/**
 * The machine's speed now: the bare server's requests per second at 50 connections, as `npm run bench`
 * measures it. A bench whose figures are times or rates quotes it, so a run on a slow or busy machine can
 * be told from a slower system (the shared cores' speed has been seen to vary fourfold between days).
 */
export async function bareRate(seconds = 5): Promise<number> {
  const port = await freePort();
  const server = spawnNode(['-e', BARE_SERVER, String(port)]);
  try {
    await waitForPort('127.0.0.1', port, 5000);
    const r = await autocannon({ url: `http://127.0.0.1:${port}/`, connections: 50, duration: seconds });
    return r.requests.average;
  } finally {
    server.kill();
  }
}
