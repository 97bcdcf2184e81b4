import { AppError, type Logger } from '@licensing/runtime';
import type { Export } from '@licensing/proto';
import type { Clients } from '../backends/clients';
import { runExport } from './imports';

/** What a user reads of an export its gateway gave up on while shutting down (docs/api.md, "Exports"). */
export const EXPORT_GATEWAY_SHUT_DOWN =
  'the process running this export stopped before it finished (its gateway shut down): start a new export';

/**
 * The exports this gateway process is writing (each runs on after its POST was answered). On a graceful
 * stop (SIGTERM) they get the shutdown timeout to finish, alongside the HTTP drain; those still running
 * then are marked failed at once, saying to start a new export, so nobody waits for a lease to lapse.
 * A gateway that dies without stopping leaves its exports to their lease (the licence service's
 * EXPORT_LEASE_MS), which this process renews while it works (runExport's heartbeat).
 */
export class ExportJobs {
  private readonly running = new Map<string, { accountId: string; done: Promise<void>; stop: AbortController }>();

  constructor(
    private readonly clients: Clients,
    private readonly log: Logger,
  ) {}

  /** Runs the export on after the answer; its progress and outcome are read with GET. */
  start(accountId: string, exp: Export): void {
    const stop = new AbortController();
    const done = runExport(this.clients, accountId, exp.id, this.log, { leaseMs: exp.lease_ms, signal: stop.signal });
    this.running.set(exp.id, { accountId, done, stop });
    void done.finally(() => this.running.delete(exp.id));
  }

  /** Exports in progress in this process. */
  get size(): number {
    return this.running.size;
  }

  /** Waits up to timeoutMs for the running exports (and any started meanwhile), then fails those left. */
  async stop(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.running.size && Date.now() < deadline) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled([...this.running.values()].map((j) => j.done)),
        new Promise((r) => {
          timer = setTimeout(r, deadline - Date.now());
        }),
      ]);
      clearTimeout(timer);
    }
    const left = [...this.running];
    if (!left.length) return;
    this.log.warn({ exports: left.map(([id]) => id) }, 'shutting down: exports still running are failed');
    await Promise.all(
      left.map(async ([id, job]) => {
        job.stop.abort(new AppError('service_unavailable', EXPORT_GATEWAY_SHUT_DOWN));
        await this.clients.imports
          .finishExport({ account_id: job.accountId, export_id: id, failure: EXPORT_GATEWAY_SHUT_DOWN })
          .catch((err: unknown) => this.log.warn({ err, export_id: id }, 'could not mark an export failed'));
      }),
    );
  }
}
