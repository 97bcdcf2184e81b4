import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { Connection } from 'mongoose';
import { Keyring, Metrics, connectMongo, createLogger, newId, syncIndexes, type Outbox } from '@licensing/runtime';
import { newDelivery } from '../../src/events/fanout';
import { Dispatcher } from '../../src/jobs/dispatcher';
import { EndpointLeases, HeldLease, leaseMsFor } from '../../src/jobs/endpoint-lease';
import { DeliveryStore, deliveryModel, type DeliveryDoc } from '../../src/store/deliveries';
import { EndpointCache } from '../../src/store/endpoint-cache';
import { LeaseStore, leaseModel } from '../../src/store/endpoint-leases';
import { endpointModel } from '../../src/store/models';
import { EndpointStore } from '../../src/store/queries';
import { FakeClock, RecordingOutbox } from '../../../../test/support/fakes/common';
import { eventually } from '../../../../test/support/eventually';

// The dispatcher over the run's FerretDB, with a receiver that holds every request until the test
// lets it answer: deliveries handed over by the fan-out go out at once (the poll never runs here),
// up to the endpoint's concurrency, each once; and a chain whose lease is taken over mid-flight
// records nothing more and sends nothing more.

const TIMEOUT_MS = 10_000;
const log = createLogger('dispatch-test', 'silent');
const secretKey = Keyring.of(randomBytes(32));
let db: Connection;
let endpoints: EndpointStore;
let deliveries: DeliveryStore;
let leaseStore: LeaseStore;

/** A receiver that answers 200 only when released, and counts the requests it holds. */
const held: ServerResponse[] = [];
const received: IncomingHttpHeaders[] = [];
let mostAtOnce = 0;
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    received.push(req.headers);
    held.push(res);
    mostAtOnce = Math.max(mostAtOnce, held.length);
  });
});
const release = () => {
  for (const res of held.splice(0)) res.writeHead(200).end();
};
let url = '';

beforeAll(async () => {
  db = await connectMongo(process.env.TEST_MONGO_URL!, `t_dispatch_${randomBytes(3).toString('hex')}`);
  endpoints = new EndpointStore(endpointModel(db));
  deliveries = new DeliveryStore(deliveryModel(db));
  leaseStore = new LeaseStore(leaseModel(db));
  await syncIndexes(db);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}/in`;
});

const running: Dispatcher[] = [];
afterEach(async () => {
  release();
  for (const d of running.splice(0)) await d.stop();
  await deliveries.Delivery.deleteMany({}); // what a test left pending is not the next one's to poll
  received.length = 0;
  mostAtOnce = 0;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  await db?.dropDatabase();
  await db?.close();
});

function dispatcher(clock: FakeClock, concurrency: number): Dispatcher {
  const cache = new EndpointCache(endpoints, 1000);
  endpoints.onWrite = (a) => cache.invalidate(a);
  const d = new Dispatcher(
    deliveries,
    endpoints,
    cache,
    leaseStore,
    clock,
    log,
    {
      intervalMs: 3_600_000, // the poll never runs by itself here
      timeoutMs: TIMEOUT_MS,
      scheduleS: [5],
      policy: { httpsOnly: false, allowLoopback: true },
      secretKey,
      retentionDays: 30,
      concurrency,
    },
    new RecordingOutbox() as unknown as Outbox,
    new Metrics('webhook-dispatch-test'),
  );
  d.start();
  running.push(d);
  return d;
}

async function anEndpoint(clock: FakeClock): Promise<string> {
  const now = clock.now();
  const stored = await endpoints.insertWithinCap(
    {
      _id: newId('we'),
      account_id: `acct_${randomBytes(4).toString('hex')}`,
      url,
      events: ['*'],
      description: '',
      enabled: true,
      failing_since: null,
      secrets: [{ sealed: secretKey.seal(Buffer.from('whsec_dGVzdA==')), created_at: now, expires_at: null }],
      created_at: now,
      deleted_at: null,
    },
    5,
  );
  if (!stored || stored === 'contended') throw new Error('no endpoint');
  return stored._id;
}

const deliveriesOf = (endpointId: string, accountId: string, count: number, clock: FakeClock): DeliveryDoc[] =>
  Array.from({ length: count }, () => {
    const event = { id: newId('evt'), account_id: accountId, type: 'license.created' };
    return newDelivery(event, endpointId, JSON.stringify({ id: event.id }), clock.now());
  });

const stored = async (endpointId: string) =>
  deliveries.Delivery.find({ endpoint_id: endpointId }).lean<DeliveryDoc[]>().exec();

it('an unordered insert adds only what is new, also with a duplicate inside the batch', async () => {
  const clock = new FakeClock();
  const endpointId = await anEndpoint(clock);
  const account = (await endpoints.byId(endpointId))!.account_id;
  const [a, b, c] = deliveriesOf(endpointId, account, 3, clock);
  expect((await deliveries.recordAll([a, b, a])).map((d) => d._id)).toEqual([a._id, b._id]);
  expect((await deliveries.recordAll([b, c, a])).map((d) => d._id)).toEqual([c._id]);
  expect(await deliveries.recordAll([a, b, c])).toEqual([]);
  expect(await stored(endpointId)).toHaveLength(3);
});

it('handed-over deliveries go out at once, up to the concurrency at a time, each once, and are recorded', async () => {
  const clock = new FakeClock();
  const endpointId = await anEndpoint(clock);
  const account = (await endpoints.byId(endpointId))!.account_id;
  const d = dispatcher(clock, 3);
  const batch = deliveriesOf(endpointId, account, 10, clock);
  const added = await deliveries.recordAll(batch);
  d.offer(added);
  d.offer(added); // handed over twice (say, by a test event and the fan-out): still sent once
  await eventually(() => expect(held).toHaveLength(3));
  // Answered a few at a time: the rest follow, never more than three at once.
  await eventually(
    async () => {
      release();
      expect((await stored(endpointId)).filter((x) => x.status === 'delivered')).toHaveLength(10);
    },
    { intervalMs: 20 },
  );
  expect(mostAtOnce).toBe(3);
  expect(received.map((h) => h['webhook-id']).sort()).toEqual(batch.map((x) => x.event_id).sort());
  expect((await stored(endpointId)).every((x) => x.attempts === 1 && x.last_status_code === 200)).toBe(true);
});

it('the poll sends what was recorded but never handed over (a restart)', async () => {
  const clock = new FakeClock();
  const endpointId = await anEndpoint(clock);
  const account = (await endpoints.byId(endpointId))!.account_id;
  const d = dispatcher(clock, 8);
  await deliveries.recordAll(deliveriesOf(endpointId, account, 2, clock));
  expect(await d.pass()).toBe(2);
  await eventually(() => expect(held).toHaveLength(2));
  release();
  await eventually(async () =>
    expect((await stored(endpointId)).map((x) => x.status)).toEqual(['delivered', 'delivered']),
  );
});

it('a pipelined chain whose lease is taken over records nothing of what was in flight, and sends no more', async () => {
  const clock = new FakeClock();
  const endpointId = await anEndpoint(clock);
  const account = (await endpoints.byId(endpointId))!.account_id;
  const d = dispatcher(clock, 3);
  d.offer(await deliveries.recordAll(deliveriesOf(endpointId, account, 9, clock)));
  await eventually(() => expect(held).toHaveLength(3));
  // This instance stalls past its lease, and another takes the endpoint meanwhile.
  clock.advance(leaseMsFor(TIMEOUT_MS) + 1);
  const other = await new EndpointLeases(leaseStore, clock, log, leaseMsFor(TIMEOUT_MS)).take(endpointId);
  expect(other).toBeInstanceOf(HeldLease);
  release();
  await d.idle();
  expect(received).toHaveLength(3);
  const after = await stored(endpointId);
  expect(after).toHaveLength(9);
  expect(after.every((x) => x.status === 'pending' && x.attempts === 0)).toBe(true);
  await (other as HeldLease).release();
});
