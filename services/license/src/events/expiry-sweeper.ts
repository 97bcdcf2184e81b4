import type { Clock, Logger, Outbox } from '@licensing/runtime';
import type { LicenseStore } from '../store/queries';
import { licenseExpired } from './license-events';

/**
 * Publishes license.expired once per licence when its expiry and grace have
 * passed. Safe with several instances: the conditional update that records the
 * event lets only one of them through.
 */
export class ExpirySweeper {
  private timer?: NodeJS.Timeout;
  private running?: Promise<number>;

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

  start(): void {
    const tick = () => {
      this.running = this.sweep().catch((err) => {
        this.log.warn({ err }, 'expiry sweep failed; will retry');
        return 0;
      });
      void this.running.finally(() => {
        if (this.timer) this.timer = setTimeout(tick, this.intervalMs);
      });
    };
    this.timer = setTimeout(tick, this.intervalMs);
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
