import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { cpuSeconds, mean, median } from './bench-kit';

// One measured run of `npm run bench` (autocannon against one URL, with the CPU each watched process
// used), how a configuration's rounds combine into one row, and where a profiled gateway's time went.

/** Seconds per measured run (BENCH_DURATION) and connections (BENCH_CONNECTIONS). */
export const duration = Number(process.env.BENCH_DURATION ?? 10);
export const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
export const WARM_UP_S = 3;

export interface Run {
  name: string;
  rps: number;
  requests: number;
  p50: number;
  p99: number;
  failed: number;
  /** The bare server's rate around this run (the mean of the runs before and after it). */
  bareRps: number;
  /** CPU seconds each watched process used during the measured part. */
  cpu: Record<string, number>;
}

export async function measure(
  name: string,
  url: string,
  headers: Record<string, string>,
  /** A pid, or a function giving CPU seconds (a process with its workers). */
  watch: Record<string, number | undefined | (() => number)>,
  paths: string[] = ['/'],
  seconds = duration,
  /** Called as the measured part (after the warm-up) starts and ends. */
  measured?: { start(): void; end(): void },
  /**
   * One app per connection instead: connection n sends only the n-th of these (round robin), with its
   * own headers over `headers` (an app validating its own licence, with its key or its licence credential).
   */
  apps?: { path: string; headers: Record<string, string> }[],
): Promise<Run> {
  const requests = paths.map((path) => ({ path, method: 'GET' as const, headers }));
  const perApp = () => {
    if (!apps) return {};
    let n = 0;
    return {
      setupClient: (client: autocannon.Client) => {
        const app = apps[n++ % apps.length];
        client.setRequests([{ path: app.path, method: 'GET', headers: { ...headers, ...app.headers } }]);
      },
    };
  };
  await autocannon({ url, connections, duration: WARM_UP_S, requests, ...perApp() });
  const used = (w: number | undefined | (() => number)) => (typeof w === 'function' ? w() : cpuSeconds(w));
  const before = Object.fromEntries(Object.entries(watch).map(([n, w]) => [n, used(w)]));
  measured?.start();
  const r = await autocannon({ url, connections, duration: seconds, requests, ...perApp() });
  measured?.end();
  const cpu = Object.fromEntries(Object.entries(watch).map(([n, w]) => [n, used(w) - before[n]]));
  return {
    name,
    rps: r.requests.average,
    requests: r.requests.total,
    p50: r.latency.p50,
    p99: r.latency.p99,
    failed: r.errors + r.timeouts + r.non2xx,
    bareRps: 0,
    cpu,
  };
}

/** One configuration's rounds as one row: mean rate and share of bare, median latencies, summed requests and CPU. */
export function combined(rounds: Run[]): Run {
  const rps = mean(rounds.map((r) => r.rps));
  const share = mean(rounds.map((r) => r.rps / r.bareRps));
  const cpu: Record<string, number> = {};
  for (const r of rounds) for (const [proc, s] of Object.entries(r.cpu)) cpu[proc] = (cpu[proc] ?? 0) + s;
  return {
    name: rounds[0].name,
    rps,
    bareRps: rps / share,
    requests: rounds.reduce((n, r) => n + r.requests, 0),
    p50: median(rounds.map((r) => r.p50)),
    p99: median(rounds.map((r) => r.p99)),
    failed: rounds.reduce((n, r) => n + r.failed, 0),
    cpu,
  };
}

/** Self time of a V8 CPU profile, idle excluded, by package (or our own folder) and by function. */
export function hotspots(dir: string, top = 8): string[] {
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) return ['(no profile written)'];
  const prof = JSON.parse(readFileSync(join(dir, file), 'utf8')) as {
    nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
    samples: number[];
  };
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
      ? inModules
          .split('/')
          .slice(0, inModules.startsWith('@') ? 2 : 1)
          .join('/')
      : f.url.startsWith('node:')
        ? 'node core'
        : f.url
          ? f.url
              .replace(/^file:\/\//, '')
              .replace(/^.*\/(gateway|services\/[^/]+|packages\/[^/]+|proto)\/.*$/, '$1 (ours)')
          : f.functionName;
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + 1);
    const fn = `${f.functionName || '(anonymous)'} ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber + 1}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + 1);
  }
  const fmt = (m: Map<string, number>) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, n]) => `${((100 * n) / busy).toFixed(1).padStart(5)}%  ${k}`);
  return ['by package (share of busy time):', ...fmt(byPackage), '', 'by function:', ...fmt(byFunction)];
}
