import cluster, { type Worker } from 'node:cluster';
import { serveClusterMetrics, type Logger } from '@licensing/runtime';

// GATEWAY_WORKERS > 1: one gateway process per core on one host (a VM, a compose
// service). The primary only supervises: node:cluster hands each accepted
// connection to a worker (round robin), every worker is a whole gateway (its own
// caches, NATS connection, channels and local limit budget, as another replica
// would have), and the primary serves /metrics summed over the workers. In
// Kubernetes keep 1 and scale pods instead: one process per pod is what the
// probes and the HPA measure.

export interface PrimaryOptions {
  workers: number;
  host: string;
  metricsPort: number;
  /** How long workers may take to stop before they are killed. */
  shutdownTimeoutMs: number;
  log: Logger;
}

/**
 * The primary: forks the workers and replaces one that dies; SIGTERM or SIGINT
 * asks each worker once to stop gracefully (SIGTERM) and exits when all have;
 * SIGHUP (new TLS files) is passed on.
 */
export async function runPrimary({
  workers,
  host,
  metricsPort,
  shutdownTimeoutMs,
  log,
}: PrimaryOptions): Promise<void> {
  // First: a metrics port in use refuses to start before any worker exists.
  const metrics = await serveClusterMetrics(host, metricsPort);
  let stopping = false;
  const live = () => Object.values(cluster.workers ?? {}).filter((w): w is Worker => !!w && !w.isDead());
  const listening = new Set<number>();
  cluster.on('listening', (worker) => listening.add(worker.id));
  cluster.on('exit', (worker: Worker, code, signal) => {
    if (stopping) return;
    if (!listening.has(worker.id)) {
      // It never served: another would fail the same way (port in use, store settings). Stop all.
      log.error({ worker: worker.process.pid, code, signal }, 'a gateway worker failed to start; stopping');
      for (const w of live()) w.process.kill('SIGKILL');
      process.exit(1);
    }
    log.error({ worker: worker.process.pid, code, signal }, 'gateway worker exited; starting another');
    cluster.fork();
  });
  for (let i = 0; i < workers; i++) cluster.fork();
  log.info({ workers, metrics_port: metrics.port }, 'gateway primary started its workers');

  const stop = () => {
    if (stopping) return;
    stopping = true;
    for (const w of live()) w.process.kill('SIGTERM');
    let closing = false;
    const check = () => {
      if (closing || live().length > 0) return;
      closing = true;
      void metrics.close().then(() => process.exit(0));
    };
    cluster.on('exit', check);
    check();
    setTimeout(() => {
      log.error('gateway workers did not stop in time; killing them');
      for (const w of live()) w.process.kill('SIGKILL');
      process.exit(1);
    }, shutdownTimeoutMs + 5000).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.on('SIGHUP', () => {
    for (const w of live()) w.process.kill('SIGHUP');
  });
}
