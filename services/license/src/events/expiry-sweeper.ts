import type { Clock, Outbox } from '@licensing/runtime';
import type { LicenseStore } from '../store/queries';
import { licenseExpired } from './license-events';

/**
 * Publishes license.expired once per licence when its expiry and grace have
 * passed. Safe with several instances: the conditional update that records the
 * event lets only one of them through. main.ts runs sweep() as a PeriodicTask.
 */
export class ExpirySweeper {

  constructor(
    private readonly store: LicenseStore,
    private readonly outbox: Outbox,
    private readonly clock: Clock,
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
}
