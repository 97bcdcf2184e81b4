import { PeriodicTask, type Clock, type Logger, type Outbox } from '@licensing/runtime';
import type { LicenseStore } from '../store/queries';
import { licenseExpired } from './license-events';

/**
 * Publishes license.expired once per licence when its expiry and grace have
 * passed. Safe with several instances: the conditional update that records the
 * event lets only one of them through.
 */
export class ExpirySweeper {

  constructor(
    private readonly store: LicenseStore,
    private readonly outbox: Outbox,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly intervalMs: number,
  ) {}

  async sweep(): Promise<number> {
    const now = this.clock.now();
    let marked = 0;
    for (const doc of await this.store.dueForExpiry(now, 200)) {
      if (await this.store.markExpired(doc._id, licenseExpired(doc, now))) {
        this.outbox.flush(this.store.models.License, doc._id);
        marked++;
      }
    }
    return marked;
  }

  private task?: PeriodicTask;

  start(): void {
    // Made here, not as a field: parameter properties are not set yet when fields initialise.
    this.task = new PeriodicTask('licence expiry sweep', () => this.sweep(), this.intervalMs, this.log);
    this.task.start();
  }

  async stop(): Promise<void> {
    await this.task?.stop();
  }

}
