import { randomBytes } from 'node:crypto';
import { Schema, type Connection, type Model } from 'mongoose';
import {
  type EventBus,
  Outbox,
  connectMongo,
  createLogger,
  newEvent,
  outboxFields,
  outboxOf,
  postgresPagesOf,
  usePostgresPages,
  withEvents,
  syncIndexes,
  addPostgresIndexes,
} from '@licensing/runtime';
import type { DomainEvent } from '@licensing/proto';
import { EventLog, testEventBus } from '../../../../test/support/events';
import { eventually } from '../../../../test/support/eventually';

// The outbox in batches, against real FerretDB and NATS: many documents' events published together
// and cleared by one write, never clearing an event written meanwhile, never publishing one twice,
// and leaving what failed to publish for the relay. Over FerretDB's PostgreSQL (the default store,
// one SQL statement per batch) and through FerretDB's own updates (MongoDB's way: one bulk write).
const id = randomBytes(3).toString('hex');
const natsUrl = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const postgresUrl = process.env.TEST_FERRETDB_POSTGRESQL_URL;
const log = createLogger('outbox-batches-test', 'silent');
let bus: EventBus;
let events: EventLog;

beforeAll(async () => {
  ({ bus } = await testEventBus({ subjects: `t_obatch_${id}`, stream: `T_OBATCH_${id}` }, 'outbox-batches-test', log));
  events = await EventLog.open(natsUrl, `T_OBATCH_${id}`);
});

afterAll(async () => {
  await events?.close();
  const jsm = await bus.nc.jetstreamManager();
  await jsm.streams.delete(`T_OBATCH_${id}`).catch(() => undefined);
  await bus?.close();
});

const created = (name: string) =>
  newEvent('product.created', 'acct_1', { product: { id: 'p', name, description: '', created_at: '' } });

/** How often each event is on the stream, once `expected` all are. */
async function onStream(expected: DomainEvent[]): Promise<Map<string, number>> {
  const ids = new Set(expected.map((e) => e.id));
  await eventually(
    () =>
      expect(
        new Set(
          events
            .all()
            .filter((e) => ids.has(e.id))
            .map((e) => e.id),
        ).size,
      ).toBe(ids.size),
    { timeoutMs: 10_000, intervalMs: 50 },
  );
  const counts = new Map<string, number>();
  for (const e of events.all()) if (ids.has(e.id)) counts.set(e.id, (counts.get(e.id) ?? 0) + 1);
  return counts;
}

/** A bus that counts the publishes in flight at once, and fails those of the events in `failing`. */
function watchedBus(failing = new Set<string>()) {
  const watched = Object.create(bus) as EventBus;
  const stats = { inFlight: 0, most: 0, attempted: [] as string[] };
  watched.publish = async (event: DomainEvent) => {
    stats.attempted.push(event.id);
    stats.inFlight++;
    stats.most = Math.max(stats.most, stats.inFlight);
    try {
      if (failing.has(event.id)) throw new Error('JetStream did not answer');
      await bus.publish(event);
    } finally {
      stats.inFlight--;
    }
  };
  return { watched, stats };
}

const stores = [
  // MongoDB's way, tried on FerretDB: bulk writes of 16 documents (outbox.ts says why).
  { store: 'through FerretDB’s own updates (as on MongoDB)', postgres: false, many: 40 },
  // The default store; the fallback for trying things out (TEST_STORE=sqlite) has no PostgreSQL.
  ...(postgresUrl ? [{ store: 'over FerretDB’s PostgreSQL', postgres: true, many: 300 }] : []),
];

describe.each(stores)('$store', ({ postgres, many }) => {
  let db: Connection;
  let Doc: Model<any>;
  let n = 0;
  const nextIds = (count: number) => Array.from({ length: count }, () => `d${String(n++).padStart(5, '0')}`);

  beforeAll(async () => {
    db = await connectMongo(process.env.TEST_MONGO_URL!, `t_obatch_${postgres ? 'pg' : 'up'}_${id}`);
    Doc = db.model(
      'Doc',
      new Schema({ _id: String, name: String, ...outboxFields }, { versionKey: false }),
    ) as unknown as Model<any>;
    new Outbox(bus, log).track(Doc); // declares the relay's index before syncIndexes, as a service does
    await Doc.create({ _id: 'first', name: 'makes the collection' });
    await syncIndexes(db);
    // A service's indexes over FerretDB's PostgreSQL (else each look-up by _id scans the table); only
    // the second store also clears through PostgreSQL.
    if (postgresUrl) await addPostgresIndexes(db, postgresUrl, log);
    if (postgres && postgresUrl) usePostgresPages(db, postgresUrl, log);
  });

  afterAll(async () => {
    await postgresPagesOf(db)?.close();
    await db?.dropDatabase();
    await db?.close();
  });

  /** The clearing writes for that many documents: one statement, or one bulk write per 16 documents. */
  const writesFor = (docs: number) => (postgres ? 1 : Math.ceil(docs / 16));

  /** How many clearing writes `run` makes: PostgreSQL statements, or bulk writes. */
  async function clearingWritesOf(run: () => Promise<void>): Promise<number> {
    const writes = postgres ? jest.spyOn(postgresPagesOf(db)!, 'clearOutboxes') : jest.spyOn(Doc, 'bulkWrite');
    try {
      await run();
      return writes.mock.calls.length;
    } finally {
      writes.mockRestore();
    }
  }

  const pendingOf = (ids: string[]) => Doc.countDocuments({ _id: { $in: ids }, outbox_pending: true });

  it('clears a batch of published documents with one write, leaving an event written meanwhile in place', async () => {
    const relay = new Outbox(bus, log, 100, 0, 60_000); // not started: the test runs its passes
    relay.track(Doc);
    const ids = nextIds(20);
    const firsts = ids.map((_, i) => created(`first-${i}`));
    await Doc.insertMany(ids.map((_id, i) => ({ _id, name: 'first', ...outboxOf([firsts[i]]) })));
    await Promise.all(ids.map((_id, i) => relay.flush(Doc, _id, [firsts[i]])));
    // Every other document is changed, with an event, after its first event went out and before it is cleared.
    const changed = ids.filter((_, i) => i % 2 === 0);
    const nexts = new Map(changed.map((_id) => [_id, created(`next-${_id}`)]));
    for (const [_id, next] of nexts) await Doc.updateOne({ _id }, { $set: { name: 'next', ...withEvents([next]) } });

    expect(await clearingWritesOf(() => relay.clearDue())).toBe(writesFor(ids.length));

    for (const _id of ids.filter((x) => !nexts.has(x)))
      expect(await Doc.findById(_id).lean()).toEqual({ _id, name: 'first', schema_version: 1 });
    for (const [_id, next] of nexts)
      expect(await Doc.findById(_id).lean()).toMatchObject({
        name: 'next',
        outbox_pending: true,
        outbox: { [next.id]: expect.any(Object) },
      });

    // The relay publishes the events written meanwhile and clears them: each event on the stream once.
    expect(await relay.sweep()).toBe(nexts.size);
    expect(await pendingOf(ids)).toBe(0);
    const counts = await onStream([...firsts, ...nexts.values()]);
    expect([...counts.values()].every((c) => c === 1)).toBe(true);
    await relay.stop();
  });

  it('publishes many documents flushed at once together, each exactly once and in its own order, then clears them', async () => {
    const { watched, stats } = watchedBus();
    const relay = new Outbox(watched, log, 100, 0, 60_000);
    relay.track(Doc);
    const ids = nextIds(many);
    // Every third document carries two events, which must reach the stream in the order they were written.
    const written = ids.map((_, i) => (i % 3 === 0 ? [created(`a-${i}`), created(`b-${i}`)] : [created(`a-${i}`)]));
    await Doc.insertMany(ids.map((_id, i) => ({ _id, name: 'many', ...outboxOf(written[i]) })));
    await Promise.all(ids.map((_id, i) => relay.flush(Doc, _id, written[i])));
    expect(stats.most).toBeGreaterThan(1); // in flight together, not one round trip after another

    const counts = await onStream(written.flat());
    expect([...counts.values()].every((c) => c === 1)).toBe(true);
    const order = new Map(events.all().map((e, i) => [e.id, i]));
    for (const pair of written.filter((w) => w.length === 2))
      expect(order.get(pair[0].id)!).toBeLessThan(order.get(pair[1].id)!);

    expect(await clearingWritesOf(() => relay.clearDue())).toBe(writesFor(ids.length));
    expect(await pendingOf(ids)).toBe(0);
    await relay.stop();
    expect(stats.attempted).toHaveLength(written.flat().length); // the stop's last pass published nothing again
  });

  it('the relay publishes a batch together; a publish that fails leaves its document’s events pending for the next pass', async () => {
    const ids = nextIds(30);
    const written = ids.map((_, i) => [created(`x-${i}`), created(`y-${i}`)]);
    await Doc.insertMany(ids.map((_id, i) => ({ _id, name: 'relayed', ...outboxOf(written[i]) })));
    // The first event of two documents fails: neither of their events may go out, nor be cleared.
    const broken = [ids[4], ids[17]];
    const failing = new Set(broken.map((b) => written[ids.indexOf(b)][0].id));
    const { watched, stats } = watchedBus(failing);
    const relay = new Outbox(watched, log, 100, 0, 60_000);
    relay.track(Doc);
    await expect(relay.sweep()).rejects.toThrow('JetStream did not answer');
    expect(stats.most).toBeGreaterThan(1);

    const fine = ids.filter((x) => !broken.includes(x));
    expect(await pendingOf(fine)).toBe(0); // published and settled: cleared, even though the pass failed
    await onStream(fine.flatMap((x) => written[ids.indexOf(x)]));
    for (const b of broken) {
      const [x, y] = written[ids.indexOf(b)];
      expect(await Doc.findById(b).lean()).toMatchObject({ outbox_pending: true, outbox: { [x.id]: {}, [y.id]: {} } });
      expect(stats.attempted).not.toContain(y.id); // never ahead of the event before it
    }

    // A flush that fails is left for the relay too, and does not reject.
    const late = nextIds(1)[0];
    const lateEvent = created('late');
    failing.add(lateEvent.id);
    await Doc.create({ _id: late, name: 'late', ...outboxOf([lateEvent]) });
    await expect(relay.flush(Doc, late, [lateEvent])).resolves.toBeUndefined();
    expect(await pendingOf([late])).toBe(1);

    // Once JetStream answers, the next pass publishes and clears them all, each event once.
    failing.clear();
    expect(await relay.sweep()).toBe(broken.length + 1);
    expect(await pendingOf([...ids, late])).toBe(0);
    const counts = await onStream([...written.flat(), lateEvent]);
    expect([...counts.values()].every((c) => c === 1)).toBe(true);
    const order = new Map(events.all().map((e, i) => [e.id, i]));
    for (const b of broken) {
      const [x, y] = written[ids.indexOf(b)];
      expect(order.get(x.id)!).toBeLessThan(order.get(y.id)!);
    }
    await relay.stop();
  });
});
