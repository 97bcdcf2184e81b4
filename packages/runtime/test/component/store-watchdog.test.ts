import { randomBytes } from 'node:crypto';
import { Schema, type Connection, type Model } from 'mongoose';
import { connectMongo, createLogger, Metrics, StoreWatchdog } from '@licensing/runtime';
import { HoldingProxy } from '../../../../test/support/holding-proxy';
import { eventually } from '../../../../test/support/eventually';

// The store watchdog against real FerretDB, through a link the test cuts: while the store is
// unreachable it leaves the client alone; once the store answers TCP again and the driver has
// found no server for long enough, it reconnects the same client and every model works again.

interface Note {
  _id: string;
  text: string;
}

let proxy: HoldingProxy;
let db: Connection;
let Notes: Model<Note>;
let watchdog: StoreWatchdog;
const metrics = new Metrics('watchdog-test');
const dbName = `t_watchdog_${randomBytes(3).toString('hex')}`;

beforeAll(async () => {
  const store = new URL(process.env.TEST_MONGO_URL!);
  proxy = await HoldingProxy.start({ host: store.hostname, port: Number(store.port) });
  const url = `mongodb://${proxy.address}/`;
  db = await connectMongo(url, dbName);
  Notes = db.model<Note>('Note', new Schema<Note>({ _id: String, text: String }));
  await Notes.create({ _id: 'n1', text: 'kept' });
  // A short interval and threshold; passes are driven by the test with its own clock.
  watchdog = new StoreWatchdog(db, url, createLogger('watchdog-test', 'silent'), metrics, {
    intervalMs: 500,
    reconnectAfterMs: 1_000,
  });
});

afterAll(async () => {
  proxy?.restore();
  await db?.dropDatabase().catch(() => undefined);
  await db?.close();
  await proxy?.stop();
});

/** Whether the model can read the note now: 'ok' or 'failed'. */
const readNote = () =>
  Notes.findById('n1')
    .lean()
    .then(
      () => 'ok',
      () => 'failed',
    );

const reconnects = async () =>
  (await metrics.registry.getSingleMetric('licensing_store_reconnects_total')?.get())?.values[0]?.value ?? 0;

it('leaves the client alone while the store answers nobody (a real outage)', async () => {
  let clock = Date.now();
  await watchdog.pass(() => clock);
  proxy.cut();
  try {
    await eventually(async () => expect(await readNote()).toBe('failed'));
    clock += 60_000;
    await watchdog.pass(() => clock);
    expect(await reconnects()).toBe(0);
  } finally {
    proxy.restore();
  }
  // The driver finds the store again by itself: pings succeed, nothing to heal.
  await eventually(async () => expect((await Notes.findById('n1').lean())?.text).toBe('kept'), { timeoutMs: 20_000 });
  clock += 60_000;
  await watchdog.pass(() => clock);
  expect(await reconnects()).toBe(0);
}, 60_000);

it('reconnects a client that finds no server while the store answers others, and its models work again', async () => {
  let clock = Date.now();
  await watchdog.pass(() => clock);
  // A client broken behind the connection's back, as the stuck monitor leaves it: the store is fine.
  await db.getClient().close(true);
  expect(await readNote()).toBe('failed');
  // Not yet silent long enough: nothing.
  await watchdog.pass(() => clock);
  expect(await reconnects()).toBe(0);
  clock += 60_000;
  await watchdog.pass(() => clock);
  expect(await reconnects()).toBe(1);
  // The same models on the same connection.
  await eventually(async () => expect((await Notes.findById('n1').lean())?.text).toBe('kept'), { timeoutMs: 20_000 });
}, 60_000);
