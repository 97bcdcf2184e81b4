import { randomBytes } from 'node:crypto';
import type { Connection } from 'mongoose';
import { connectMongo, createLogger, syncIndexes } from '@licensing/runtime';
import { EndpointLeases, HeldLease } from '../../src/jobs/endpoint-lease';
import { LeaseStore, leaseModel } from '../../src/store/endpoint-leases';
import { FakeClock } from '../../../../test/support/fakes/common';
import { eventually } from '../../../../test/support/eventually';

// The webhook dispatcher's endpoint leases on the run's FerretDB, whose updates
// are not atomic: taking, renewing and losing a lease must hold there too.

const LEASE_MS = 60_000; // the clock is moved by hand
const log = createLogger('lease-test', 'silent');
let db: Connection;
let store: LeaseStore;
const clock = new FakeClock();
const held: HeldLease[] = [];

/** An instance's leases; every one taken is released after the test. */
const instance = () => new EndpointLeases(store, clock, log, LEASE_MS);
async function take(leases: EndpointLeases, endpointId: string) {
  const out = await leases.take(endpointId);
  if (out instanceof HeldLease) held.push(out);
  return out;
}
const endpoint = () => `we_${randomBytes(6).toString('hex')}`;

beforeAll(async () => {
  db = await connectMongo(process.env.TEST_MONGO_URL!, `t_leases_${randomBytes(3).toString('hex')}`);
  store = new LeaseStore(leaseModel(db));
  await syncIndexes(db);
});

afterEach(async () => {
  for (const l of held.splice(0)) await l.release();
});

afterAll(async () => {
  await db?.dropDatabase();
  await db?.close();
});

it('of 20 instances taking the same free endpoint at once, exactly one gets it', async () => {
  for (let round = 0; round < 3; round++) {
    const e = endpoint();
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => take(instance(), e)));
    expect(outcomes.filter((o) => o instanceof HeldLease)).toHaveLength(1);
  }
});

it('a held lease keeps others out; a released one is free at once', async () => {
  const e = endpoint();
  const [a, b] = [instance(), instance()];
  const lease = (await take(a, e)) as HeldLease;
  expect(lease).toBeInstanceOf(HeldLease);
  expect(await take(b, e)).toEqual({ busyUntil: new Date(clock.now().getTime() + LEASE_MS) });
  await lease.release();
  expect(await lease.holds(0)).toBe(false);
  expect(await take(b, e)).toBeInstanceOf(HeldLease);
});

it('a holder renews before its lease runs short, and others stay out', async () => {
  const e = endpoint();
  const lease = (await take(instance(), e)) as HeldLease;
  clock.advance(LEASE_MS - 1000);
  expect(await lease.holds(5000)).toBe(true); // renewed: a new epoch, a whole lease from now
  clock.advance(30_000);
  expect(await take(instance(), e)).toMatchObject({ busyUntil: expect.any(Date) });
  expect(await lease.holds(20_000)).toBe(true);
  // Each renewal removes the epochs before it: one document per endpoint.
  expect(await store.Lease.countDocuments({ endpoint_id: e })).toBe(1);
});

it('once a lease ran out and another instance took the endpoint, the old holder holds nothing (fencing)', async () => {
  const e = endpoint();
  const stale = (await take(instance(), e)) as HeldLease;
  clock.advance(LEASE_MS + 1);
  const fresh = await take(instance(), e);
  expect(fresh).toBeInstanceOf(HeldLease);
  expect(await stale.holds(0)).toBe(false); // its renewal lost the race for the next epoch
  expect(await (fresh as HeldLease).holds(1000)).toBe(true);
});

it('a holder that stalled past its lease while nobody took over may carry on', async () => {
  const e = endpoint();
  const lease = (await take(instance(), e)) as HeldLease;
  clock.advance(LEASE_MS + 1);
  expect(await lease.holds(1000)).toBe(true); // nobody made a later epoch: renewing is safe
  expect(await take(instance(), e)).toMatchObject({ busyUntil: expect.any(Date) });
});

it('an epoch made again after it was removed does not count: only the newest does', async () => {
  const e = endpoint();
  const leases = instance();
  const first = (await take(leases, e)) as HeldLease; // epoch 1
  expect(await first.holds(LEASE_MS + 1000)).toBe(false); // asks more than a lease gives, so it renews: epoch 2
  expect(await store.Lease.countDocuments({ endpoint_id: e })).toBe(1); // epoch 1 removed
  // An instance that read epoch 0 long ago makes epoch 1 again: it does not become the holder.
  expect(await leases.extend(e, 0)).toBeNull();
  expect(await first.holds(1000)).toBe(true);
});

it('renews in the background while work is in progress, so a long delivery keeps the endpoint', async () => {
  const e = endpoint();
  const shortLeases = new EndpointLeases(store, clock, log, 3000); // renewed every second (real time)
  const lease = (await take(shortLeases, e)) as HeldLease;
  await lease.renewWhile(async () => {
    clock.advance(2500);
    await eventually(async () => expect(await store.newest(e)).toMatchObject({ epoch: 2 }), { timeoutMs: 5000 });
    clock.advance(2500); // past the first epoch's end: only the renewal keeps others out
    expect(await take(instance(), e)).toMatchObject({ busyUntil: expect.any(Date) });
  });
  expect(await lease.holds(0)).toBe(true);
});
