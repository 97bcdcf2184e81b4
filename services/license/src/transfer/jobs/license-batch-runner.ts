import { outsideAnyCall, type Logger } from '@licensing/runtime';
import { BATCH_LEASE_MS, issueBatch, type BatchDeps } from '../use-cases/license-batches';

/**
 * Runs licence batches (use-cases/license-batches.ts issueBatch): a new one at once, in the
 * background of the call that stored it; one whose run stopped (its instance crashed or stopped) when
 * its lease has run out, found by the periodic sweep of any instance. Items are idempotent by their
 * fixed licence ids, so a batch run twice at once (FerretDB lets two leases through) issues nothing twice.
 */
export class LicenseBatchRunner {
  private readonly running = new Map<string, Promise<void>>();

  constructor(
    private readonly deps: BatchDeps,
    private readonly log: Logger,
  ) {}

  /**
   * Starts a batch now (not awaited: the call that stored it answers 202), outside that call's scope:
   * its deadline would stop the run's store operations after 5 s (runtime/store/query-deadline.ts).
   */
  kick(id: string): void {
    void outsideAnyCall(() => this.run(id, false));
  }

  /** Resumes batches nobody is running (their lease ran out): the periodic task. */
  async sweep(): Promise<void> {
    const ids = await this.deps.batches.abandoned(this.deps.clock.now(), 5);
    for (const id of ids) await this.run(id, true);
  }

  /** Waits for the runs in progress (a graceful stop). */
  async stop(): Promise<void> {
    await Promise.allSettled([...this.running.values()]);
  }

  private run(id: string, resume: boolean): Promise<void> {
    const current = this.running.get(id);
    if (current) return current;
    const run = (async () => {
      try {
        const doc = await this.deps.batches.findById(id);
        if (doc?.status !== 'running') return;
        if (resume && !(await this.deps.batches.lease(doc, new Date(this.deps.clock.now().getTime() + BATCH_LEASE_MS))))
          return;
        await issueBatch(this.deps, doc, this.log);
      } catch (err) {
        // Left running: the sweep takes it up again once its lease has run out.
        this.log.warn({ err, batch: id }, 'licence batch stopped; it will be resumed');
      } finally {
        this.running.delete(id);
      }
    })();
    this.running.set(id, run);
    return run;
  }
}
