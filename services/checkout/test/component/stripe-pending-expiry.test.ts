import { randomBytes } from 'node:crypto';
import type { Connection } from 'mongoose';
import { connectMongo, createLogger, runMigrations, syncIndexes } from '@licensing/runtime';
import { interpretSubscriptionEvent } from '../../src/domain/stripe-subscription-events';
import { checkoutModels, PENDING_REFUND_DAYS } from '../../src/store/models';
import { pendingExpiryMigration } from '../../src/store/pending-expiry-migration';
import { CheckoutStore } from '../../src/store/queries';
import { PENDING_EVENT_DAYS, SubscriptionStore, subscriptionModels } from '../../src/store/subscriptions';

// Stripe events about objects that are not ours (a subscription or a payment this service never
// started, or not yet) are kept only as what they mean, and for 30 days: MongoDB's TTL index removes
// them; FerretDB ignores TTL indexes, so the checkout sweep deletes the expired ones. Here, against
// real FerretDB.

const DAY = 86_400_000;
let db: Connection;
let subs: SubscriptionStore;
let checkout: CheckoutStore;

beforeAll(async () => {
  db = await connectMongo(process.env.TEST_MONGO_URL!, `t_stripe_pending_${randomBytes(3).toString('hex')}`);
  subs = new SubscriptionStore(subscriptionModels(db));
  checkout = new CheckoutStore(checkoutModels(db));
  await syncIndexes(db);
});

afterAll(async () => {
  await db?.dropDatabase().catch(() => undefined);
  await db?.close();
});

const ttlIndexOn = (indexes: [Record<string, unknown>, Record<string, unknown>][]) =>
  indexes.filter(([keys, options]) => Object.keys(keys).join() === 'expires_at' && options.expireAfterSeconds === 0);

it('both collections declare a TTL index on expires_at (MongoDB removes them itself)', () => {
  expect(ttlIndexOn(subs.models.PendingEvent.schema.indexes() as never)).toHaveLength(1);
  expect(ttlIndexOn(checkout.models.PendingRefund.schema.indexes() as never)).toHaveLength(1);
  expect(PENDING_EVENT_DAYS).toBe(30);
  expect(PENDING_REFUND_DAYS).toBe(30);
});

it('the sweep deletes the early events past their expiry, and only those', async () => {
  const now = new Date();
  const action = interpretSubscriptionEvent({
    id: 'evt_x',
    type: 'customer.subscription.updated',
    livemode: false,
    created: 1,
    data: { object: { id: 'sub_theirs', status: 'active', metadata: {} } },
  })!;
  const keep = (id: string, expiresAt: Date) =>
    subs.keepPending({
      _id: id,
      provider_subscription_id: 'sub_theirs',
      session_id: '',
      created: 1,
      action,
      expires_at: expiresAt,
    });
  await keep('evt_old', new Date(now.getTime() - DAY));
  await keep('evt_now', now);
  await keep('evt_fresh', new Date(now.getTime() + 29 * DAY));
  expect(await subs.dropExpiredPending(now)).toBe(2);
  const left = await subs.models.PendingEvent.find({}).lean().exec();
  expect(left.map((d) => d._id)).toEqual(['evt_fresh']);
  // What is kept reads back as the action it was.
  expect((await subs.pendingFor('sub_theirs', ''))[0].action).toEqual(action);
  expect(await subs.dropExpiredPending(now)).toBe(0);
});

it('a refund of a payment that is not ours is kept 30 days, then the sweep forgets it', async () => {
  const t0 = new Date();
  await checkout.addPendingRefund('pi_not_ours', t0);
  const stored = await checkout.models.PendingRefund.findById('pi_not_ours').lean().exec();
  expect(stored?.expires_at?.getTime()).toBe(t0.getTime() + 30 * DAY);
  expect(await checkout.pruneExpiredPendingRefunds(new Date(t0.getTime() + 29 * DAY))).toBe(0);
  expect(await checkout.hasPendingRefund('pi_not_ours')).toBe(true);
  expect(await checkout.pruneExpiredPendingRefunds(new Date(t0.getTime() + 30 * DAY))).toBe(1);
  expect(await checkout.hasPendingRefund('pi_not_ours')).toBe(false);
});

it('the upgrade gives records stored before their 30 days, and keeps only what each early event means', async () => {
  const whole = {
    id: 'evt_before_upgrade',
    type: 'invoice.paid',
    livemode: false,
    created: 5,
    data: {
      object: {
        id: 'in_old',
        subscription: 'sub_older',
        billing_reason: 'subscription_cycle',
        amount_paid: 1000,
        currency: 'eur',
        customer_email: 'old.customer@example.com',
        customer_name: 'Old Customer',
      },
    },
  };
  // As written before: the whole event, no expiry.
  await db.db!.collection('subscription_pending_events').insertOne({
    _id: whole.id as never,
    provider_subscription_id: 'sub_older',
    session_id: '',
    created: 5,
    event: whole,
  });
  await db.db!.collection('checkout_pending_refunds').insertOne({ _id: 'pi_older' as never, created_at: new Date() });
  const t0 = Date.now();
  await runMigrations(db, [pendingExpiryMigration], { log: createLogger('migration-test', 'silent') });
  const event = await subs.models.PendingEvent.findById(whole.id).lean().exec();
  expect(event).not.toHaveProperty('event');
  expect(event?.action).toEqual(interpretSubscriptionEvent(whole));
  expect(JSON.stringify(event)).not.toContain('old.customer@example.com');
  expect(JSON.stringify(event)).not.toContain('Old Customer');
  for (const expires of [
    event?.expires_at,
    (await checkout.models.PendingRefund.findById('pi_older').lean().exec())?.expires_at,
  ]) {
    expect(expires!.getTime()).toBeGreaterThanOrEqual(t0 + 30 * DAY);
    expect(expires!.getTime()).toBeLessThanOrEqual(Date.now() + 30 * DAY);
  }
});
