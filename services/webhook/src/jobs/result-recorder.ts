import type { DeliveryDoc, DeliveryStore } from '../store/deliveries';
import { LEASE_MARGIN_MS, type HeldLease } from './endpoint-lease';

interface Pending {
  id: string;
  changes: Partial<DeliveryDoc>;
  done: (recorded: boolean) => void;
  failed: (err: unknown) => void;
}

/**
 * Writes the results of one endpoint's attempts, several in one bulk write:
 * a result that comes while a write is in flight waits for it and goes with
 * the others that came meanwhile (so a trickle is written one by one, at once,
 * and a pipelined chain in batches). Fencing, as for one attempt: a batch is
 * written only while this instance still holds the endpoint's lease with the
 * margin to spare; otherwise none of it is, and each attempt learns so (its
 * delivery stays due).
 */
export class ResultRecorder {
  private pending: Pending[] = [];
  private writing = false;

  constructor(
    private readonly deliveries: Pick<DeliveryStore, 'updateAll'>,
    private readonly lease: HeldLease,
  ) {}

  /** True once written; false if the lease was lost (nothing written). */
  record(id: string, changes: Partial<DeliveryDoc>): Promise<boolean> {
    return new Promise((done, failed) => {
      this.pending.push({ id, changes, done, failed });
      void this.next();
    });
  }

  private async next(): Promise<void> {
    if (this.writing || !this.pending.length) return;
    this.writing = true;
    const batch = this.pending.splice(0);
    try {
      if (!(await this.lease.holds(LEASE_MARGIN_MS))) {
        for (const p of batch) p.done(false);
        return;
      }
      await this.deliveries.updateAll(batch.map(({ id, changes }) => ({ id, changes })));
      for (const p of batch) p.done(true);
    } catch (err) {
      for (const p of batch) p.failed(err);
    } finally {
      this.writing = false;
      void this.next();
    }
  }
}
