import type { Migration } from '@licensing/runtime';
import type { StripeEventLike } from '../domain/stripe-events';
import { interpretSubscriptionEvent } from '../domain/stripe-subscription-events';
import { DAY_MS } from '../domain/subscription';
import { PENDING_REFUND_DAYS } from './models';
import { PENDING_EVENT_DAYS } from './subscriptions';

// Stripe events about objects that were not ours were kept whole and for ever before they were kept as
// what they mean, for 30 days. This gives the ones stored before their 30 days from the upgrade, and
// replaces each whole event by its meaning (applyPending reads either).

/** Early events handled per pass (a bound on one read: the collection holds only events not ours). */
const BATCH = 200;

export const pendingExpiryMigration: Migration = {
  id: '0002-stripe-pending-expiry',
  description:
    'Stripe events and refunds kept for objects that are not ours: only what the events mean, expiring in 30 days',
  async up({ db, progress }) {
    // The driver's collections: one-off scans no index is meant to serve (kept out of the query shapes).
    const events = db.db!.collection('subscription_pending_events');
    const refunds = db.db!.collection('checkout_pending_refunds');
    const now = Date.now();
    let changed = 0;
    for (;;) {
      const docs = await events
        .find({ event: { $exists: true } }, { projection: { event: 1 } })
        .limit(BATCH)
        .toArray();
      if (!docs.length) break;
      for (const d of docs) {
        const action = interpretSubscriptionEvent(d.event as unknown as StripeEventLike);
        await events.updateOne(
          { _id: d._id },
          {
            $set: { ...(action ? { action } : {}), expires_at: new Date(now + PENDING_EVENT_DAYS * DAY_MS) },
            $unset: { event: '' },
          },
        );
        progress(++changed);
      }
    }
    const dated = await events.updateMany(
      { expires_at: { $exists: false } },
      { $set: { expires_at: new Date(now + PENDING_EVENT_DAYS * DAY_MS) } },
    );
    const refunded = await refunds.updateMany(
      { expires_at: { $exists: false } },
      { $set: { expires_at: new Date(now + PENDING_REFUND_DAYS * DAY_MS) } },
    );
    progress(changed + dated.modifiedCount + refunded.modifiedCount);
  },
};
