import { randomBytes } from 'node:crypto';
import { Schema, type Connection, type Model } from 'mongoose';
import {
  EventBus,
  Outbox,
  connectMongo,
  createLogger,
  newEvent,
  outboxFields,
  outboxOf,
  withEvents,
  syncIndexes,
  runEventsSetup,
} from '@licensing/runtime';
import { EventLog } from '../support/events';
import { eventually } from '../support/eventually';

// The outbox against real FerretDB and NATS: events stored with a document are
// published, cleared, and never duplicated on the stream.
const id = randomBytes(3).toString('hex');
const natsUrl = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const log = createLogger('outbox-test', 'silent');
let db: Connection;
let bus: EventBus;
let Thing: Model<any>;
let outbox: Outbox;
let events: EventLog;

beforeAll(async () => {
  db = await connectMongo(process.env.TEST_MONGO_URL!, `t_outbox_${id}`);
  Thing = db.model(
    'Thing',
    new Schema({ _id: String, name: String, ...outboxFields }, { versionKey: false }),
  ) as unknown as Model<any>;
  await syncIndexes(db);
  await runEventsSetup({
    LOG_LEVEL: 'silent',
    NATS_URL: natsUrl,
    NATS_USER: '',
    NATS_PASSWORD: '',
    NATS_TLS_CA_FILE: '',
    EVENTS_RETENTION_HOURS: 1,
    EVENTS_SUBJECT_PREFIX: `t_outbox_${id}.events`,
    EVENTS_STREAM: `T_OUTBOX_${id}`,
  });
  bus = await EventBus.connect({
    url: natsUrl,
    subjectPrefix: `t_outbox_${id}.events`,
    stream: `T_OUTBOX_${id}`,
    name: 'outbox-test',
    log,
  });
  outbox = new Outbox(bus, log, 100, 0); // settle at once: these tests look at the clearing itself
  outbox.track(Thing);
  events = await EventLog.open(natsUrl, `T_OUTBOX_${id}`);
});

afterAll(async () => {
  await events?.close();
  await outbox?.stop();
  const jsm = await bus.nc.jetstreamManager();
  await jsm.streams.delete(`T_OUTBOX_${id}`).catch(() => undefined);
  await bus?.close();
  await db?.dropDatabase();
  await db?.close();
});

it('a sweep publishes pending events in order and clears the document', async () => {
  const e1 = newEvent('product.created', 'acct_1', {
    product: { id: 'p1', name: 'a', description: '', created_at: '' },
  });
  const e2 = newEvent('product.created', 'acct_1', {
    product: { id: 'p1', name: 'b', description: '', created_at: '' },
  });
  await Thing.create({ _id: 't1', name: 'a', ...outboxOf([e1, e2]) });
  expect(await outbox.backlog()).toBe(1);
  expect(await outbox.sweep()).toBe(1);
  const doc = await Thing.findById('t1').lean<Record<string, unknown>>();
  expect(doc).toEqual({ _id: 't1', name: 'a' });
  expect(await outbox.backlog()).toBe(0);
  await events.waitFor((e) => e.id === e2.id);
  expect(events.all().map((e) => e.id)).toEqual([e1.id, e2.id]);
});

it('republishing an event already on the stream does not duplicate it (Nats-Msg-Id)', async () => {
  const e = newEvent('product.created', 'acct_1', {
    product: { id: 'p2', name: 'x', description: '', created_at: '' },
  });
  await bus.publish(e);
  // As if the process died after publishing but before clearing the outbox:
  await Thing.create({ _id: 't2', name: 'x', ...outboxOf([e]) });
  await outbox.sweep();
  await events.waitFor((x) => x.id === e.id);
  // A later event reaches the log after anything published before it: e is still there once.
  const later = newEvent('product.created', 'acct_1', {
    product: { id: 'p2-later', name: 'x', description: '', created_at: '' },
  });
  await bus.publish(later);
  await events.waitFor((x) => x.id === later.id);
  expect(events.all().filter((x) => x.id === e.id)).toHaveLength(1);
});

it('an event added by an update in the same write is published by the running relay', async () => {
  await Thing.create({ _id: 't3', name: 'before' });
  const e = newEvent('product.created', 'acct_1', {
    product: { id: 'p3', name: 'after', description: '', created_at: '' },
  });
  await Thing.updateOne({ _id: 't3' }, { $set: { name: 'after', ...withEvents([e]) } });
  outbox.start();
  await events.waitFor((x) => x.id === e.id, 5000);
  await eventually(async () => expect(await outbox.backlog()).toBe(0), { timeoutMs: 2500, intervalMs: 50 });
});

it('publishing right after a write never writes to the document, and the sweep leaves unsettled events alone', async () => {
  await outbox.stop(); // the earlier test's relay would clear at once
  const careful = new Outbox(bus, log, 100, 60_000);
  careful.track(Thing);
  const e = newEvent('product.created', 'acct_1', {
    product: { id: 'p4', name: 'fresh', description: '', created_at: '' },
  });
  await Thing.create({ _id: 't4', name: 'fresh', ...outboxOf([e]) });
  careful.flush(Thing, 't4');
  await events.waitFor((x) => x.id === e.id);
  await careful.sweep();
  const doc = await Thing.findById('t4').lean<Record<string, unknown>>();
  expect(doc).toMatchObject({ outbox_pending: true, outbox: { [e.id]: expect.any(Object) } });
  expect(events.all().filter((x) => x.id === e.id)).toHaveLength(1); // acked once; the sweep does not publish it again
  await careful.stop();
});

it('a document published by this process is cleared once settled, with no scan of the collection', async () => {
  // Scans only at start (nothing pending then) and after a minute: the clearing below cannot come from a scan.
  await Thing.deleteMany({});
  const relay = new Outbox(bus, log, 50, 300, 60_000);
  relay.track(Thing);
  const scans = jest.spyOn(relay, 'sweep');
  relay.start();
  await eventually(() => expect(scans).toHaveBeenCalledTimes(1), { timeoutMs: 5000, intervalMs: 20 });
  const e = newEvent('product.created', 'acct_1', {
    product: { id: 'p5', name: 'settles', description: '', created_at: '' },
  });
  await Thing.create({ _id: 't5', name: 'settles', ...outboxOf([e]) });
  const writes = jest.spyOn(Thing, 'updateOne');
  relay.flush(Thing, 't5', [e]);
  await events.waitFor((x) => x.id === e.id);
  await eventually(async () => expect(await Thing.findById('t5').lean()).toEqual({ _id: 't5', name: 'settles' }), {
    timeoutMs: 5000,
    intervalMs: 50,
  });
  expect(scans).toHaveBeenCalledTimes(1);
  expect(writes).toHaveBeenCalledTimes(1); // the document held exactly the published event: one write clears it
  writes.mockRestore();
  await relay.stop();
});
