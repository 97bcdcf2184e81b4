import type { Clock, Outbox } from '@licensing/runtime';
import { bucketOf, bucketsToSweep } from '../domain/expiry';
import { sweepReclaims } from '../domain/leases';
import { deactivationEvent } from '../events/license-events';
import type { LicenseStore } from '../store/queries';

const STATE_ID = 'lapsed-seats';
/** Buckets (hours) one pass looks at, and seats per query: a pass's work never depends on how many seats exist. */
const BUCKETS_PER_PASS = 24 * 7;
const BATCH = 200;

/**
 * Reclaims the floating seats that lapsed and that no activation needed since (domain/leases.ts):
 * each is deactivated with license.deactivated, reason lapsed. It walks the hourly reclaim buckets
 * from the first one not yet done up to the current hour, one equality look-up each, and remembers how
 * far it got: a pass reads the seats that lapsed (plus those of the current hour, swept again next
 * time), never every activation. Heartbeated seats have left the bucket. Safe with several instances
 * and with concurrent activations: each reclaim is a conditional update on the lease that was read
 * (store.reclaimLapsed). main.ts runs sweep() as a PeriodicTask.
 */
export class LapsedSeatSweeper {
  constructor(
    private readonly store: LicenseStore,
    private readonly outbox: Pick<Outbox, 'flush'>,
    private readonly clock: Clock,
  ) {}

  async sweep(): Promise<number> {
    const now = this.clock.now();
    const state = await this.store.sweepState(STATE_ID);
    const current = bucketOf(now);
    if (!state.through) {
      // The first pass starts at the current hour: no seat was filed before the sweep existed.
      state.through = previousHour(current);
      await this.store.saveSweepState({ ...state, backfilled: true });
    }
    const buckets = bucketsToSweep(state.through, now, BUCKETS_PER_PASS);
    let reclaimed = 0;
    for (const bucket of buckets) {
      reclaimed += await this.sweepBucket(bucket, now);
      if (bucket >= current) break; // the current hour is swept again next time
      state.through = bucket;
      await this.store.saveSweepState({ ...state, backfilled: true });
    }
    return reclaimed;
  }

  private async sweepBucket(bucket: string, now: Date): Promise<number> {
    let reclaimed = 0;
    let after = '';
    for (;;) {
      const seats = await this.store.inReclaimBucket(bucket, after, BATCH);
      for (const seat of seats) {
        if (!sweepReclaims(seat, now)) continue;
        const license = await this.store.findIdInAccount(seat.account_id, seat.license_id);
        if (!license) continue;
        const freed = await this.store.reclaimLapsed(seat._id, seat.lease_expires_at!, now, (a) =>
          deactivationEvent(license, a, 'lapsed', now),
        );
        if (!freed) continue;
        this.outbox.flush(this.store.models.Activation, seat._id);
        reclaimed++;
      }
      if (seats.length < BATCH) return reclaimed;
      after = seats[seats.length - 1]._id;
    }
  }
}

const previousHour = (bucket: string) => bucketOf(new Date(Date.parse(`${bucket}:00:00.000Z`) - 3600_000));
