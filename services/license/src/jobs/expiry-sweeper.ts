import type { Clock, Outbox } from '@licensing/runtime';
import { effectiveStatus } from '@licensing/proto';
import { bucketOf, bucketsToSweep, expiryBucket } from '../domain/expiry';
import type { LicenseDoc } from '../store/models';
import type { LicenseStore } from '../store/queries';
import { licenseExpired, licenseRevokedAtExpiry } from '../events/license-events';
import type { ProductLookup } from '../use-cases/deps';
import { withLiveEntitlements } from '../use-cases/product-entitlements';

const STATE_ID = 'license-expiry';
/** Buckets (hours) one pass looks at, and licences per query: a pass's work never depends on how many licences exist. */
const BUCKETS_PER_PASS = 24 * 7;
/** Further behind than this, one range query (served by the same index on MongoDB) replaces a query per bucket. */
const CATCH_UP_AFTER = 3;
const BATCH = 200;

/**
 * Publishes license.expired once per licence when its expiry and grace have
 * passed; a licence whose policy says revoke_access is stored revoked in the
 * same write, with license.revoked (answers say revoked from that moment already:
 * proto/rules/status.ts). It walks the hourly expiry buckets (domain/expiry.ts)
 * from the first one not yet done up to the current hour, and remembers how far it got, so a
 * pass costs what is expiring, not what is stored. Safe with several
 * instances: the conditional update that records the event lets only one of
 * them through (and the event id is deterministic). main.ts runs sweep() as a
 * PeriodicTask.
 */
export class ExpirySweeper {
  constructor(
    private readonly store: LicenseStore,
    /** The licence cache's outbox (main.ts): a revocation is forgotten there as a revocation by hand is. */
    private readonly outbox: Pick<Outbox, 'flush'>,
    private readonly clock: Clock,
    /** license.expired carries the product's current entitlements (through the product cache). */
    private readonly products: ProductLookup,
  ) {}

  async sweep(): Promise<number> {
    const now = this.clock.now();
    const state = await this.store.sweepState(STATE_ID);
    if (!state.backfilled) {
      await this.store.backfillExpiryBuckets((doc) => expiryBucket(doc.grace_ends_at, doc.expired_notified, now));
      // From the earliest licence filed, not from now: a licence filed before the first pass (the service
      // down since, or a clock moved on) may be due already.
      const earliest = await this.store.earliestFiledBucket();
      const start = earliest && earliest < bucketOf(now) ? earliest : bucketOf(now);
      Object.assign(state, { backfilled: true, through: previousHour(start) });
      await this.store.saveSweepState(state);
    }
    const current = bucketOf(now);
    let marked = 0;
    const behind = bucketsToSweep(state.through, now, CATCH_UP_AFTER + 1);
    if (behind.length > CATCH_UP_AFTER) {
      // Every bucket before the current hour is due as a whole, however far behind (days of downtime,
      // a clock moved on): one walk announces them all. It reads only what is expiring, which is the
      // work to do anyway; a walk of a week per pass took a pass per week behind.
      const last = previousHour(current);
      for await (const doc of this.store.inExpiryRange(behind[0], last)) marked += await this.announce(doc, now);
      state.through = last;
      await this.store.saveSweepState(state);
    }
    for (const bucket of bucketsToSweep(state.through, now, BUCKETS_PER_PASS)) {
      marked += await this.sweepBucket(bucket, now);
      if (bucket >= current) break; // the current hour is swept again next time
      state.through = bucket;
      await this.store.saveSweepState(state);
    }
    return marked;
  }

  /** 1 when this call published the licence's license.expired. Suspended or revoked: nothing to announce; a reinstatement files it again (license-handlers). */
  private async announce(doc: LicenseDoc, now: Date): Promise<number> {
    if (doc.status !== 'active' || !doc.grace_ends_at || doc.grace_ends_at > now) return 0;
    const announced = await withLiveEntitlements(this.products, doc);
    if (effectiveStatus(doc, now) === 'revoked') return this.revoke(announced, now);
    if (!(await this.store.markExpired(doc._id, licenseExpired(announced, now)))) return 0;
    this.outbox.flush(this.store.models.License, doc._id);
    return 1;
  }

  /**
   * revoke_access: stored revoked with both events in one conditional write, as a revocation by hand
   * is stored with its event (use-cases/change-license.ts), so every cache evicts it and webhooks hear
   * license.expired then license.revoked.
   */
  private async revoke(doc: LicenseDoc, now: Date): Promise<number> {
    const revoked = { ...doc, status: 'revoked' as const };
    const events = [licenseExpired(doc, now), licenseRevokedAtExpiry(revoked, now)];
    if (!(await this.store.markRevokedAtExpiry(doc, events))) return 0;
    this.outbox.flush(this.store.models.License, doc._id, events);
    return 1;
  }

  /** Announces every active licence of the bucket whose grace has ended; the others wait (or need nothing). */
  private async sweepBucket(bucket: string, now: Date): Promise<number> {
    let marked = 0;
    let after = '';
    for (;;) {
      const docs = await this.store.inExpiryBucket(bucket, after, BATCH);
      for (const doc of docs) marked += await this.announce(doc, now);
      if (docs.length < BATCH) return marked;
      after = docs[docs.length - 1]._id;
    }
  }
}

const previousHour = (bucket: string) => bucketOf(new Date(Date.parse(`${bucket}:00:00.000Z`) - 3600_000));
