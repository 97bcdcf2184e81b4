import { randomBytes } from 'node:crypto';
import { Schema, type Connection, type Model } from 'mongoose';
import { ProductServiceClient, ProductServiceService } from '@licensing/proto';
import {
  connectMongo,
  createClient,
  createLogger,
  GrpcServer,
  Metrics,
  READ_MAX_MS,
  remainingMs,
  tokenDigest,
  withCallScope,
  type Handlers,
} from '@licensing/runtime';
import { eventually } from '../../../../test/support/eventually';

// Bounded work per call, against real FerretDB and a real gRPC server: every
// read carries maxTimeMS no larger than what is left of its call, and a
// handler whose caller has given up stops at its next store operation.

interface Note {
  _id: string;
  text: string;
}

let db: Connection;
let Notes: Model<Note>;

beforeAll(async () => {
  db = await connectMongo(process.env.TEST_MONGO_URL!, `t_deadline_${randomBytes(3).toString('hex')}`);
  Notes = db.model<Note>('Note', new Schema<Note>({ _id: String, text: String }));
});

afterAll(async () => {
  await db?.dropDatabase();
  await db?.close();
});

describe('store operations', () => {
  it('a read inside a call gets maxTimeMS no larger than the time left; outside a call, READ_MAX_MS', async () => {
    const inCall = Notes.find({ text: 'x' });
    await withCallScope('r1', Date.now() + 2000, () => inCall.exec());
    expect(inCall.getOptions().maxTimeMS).toBeGreaterThan(0);
    expect(inCall.getOptions().maxTimeMS).toBeLessThanOrEqual(2000);

    const outside = Notes.countDocuments({});
    await outside.exec();
    expect(outside.getOptions().maxTimeMS).toBe(READ_MAX_MS);

    const asked = Notes.findOne({ _id: 'n' }).maxTimeMS(50);
    await withCallScope('r2', Date.now() + 5000, () => asked.exec());
    expect(asked.getOptions().maxTimeMS).toBe(50); // a smaller limit of its own is kept
  });

  it('nothing is sent once the deadline has passed: reads and writes are refused with service_unavailable', async () => {
    const late = Date.now() - 1;
    await expect(
      withCallScope('r3', late, () => Notes.create({ _id: 'late-insert', text: 'x' })),
    ).rejects.toMatchObject({ code: 'service_unavailable' });
    await expect(
      withCallScope('r4', late, () => Notes.updateOne({ _id: 'late-insert' }, { text: 'y' }).exec()),
    ).rejects.toMatchObject({ code: 'service_unavailable' });
    await expect(withCallScope('r5', late, () => Notes.find({}).exec())).rejects.toMatchObject({
      code: 'service_unavailable',
    });
    expect(await Notes.findById('late-insert').lean()).toBeNull();
  });
});

describe('a gRPC handler', () => {
  it('stops at its next store operation once its caller has given up, and writes nothing', async () => {
    const token = randomBytes(16).toString('hex');
    const server = new GrpcServer({
      callers: `gateway=${tokenDigest(token)}`,
      log: createLogger('deadline-test', 'silent'),
      metrics: new Metrics('deadline-test'),
    });
    let outcome = 'pending';
    server.add(
      ProductServiceService,
      {
        // Stands for a handler held up by a slow dependency until its caller's deadline has passed, as this
        // server counts it (from when the call reached it: under load that is later than the client's own);
        // then it writes.
        async getProduct(req) {
          if (req.id === 'held')
            await eventually(() => expect(remainingMs()).toBeLessThanOrEqual(0), { timeoutMs: 10_000, intervalMs: 10 });
          try {
            await Notes.create({ _id: req.id, text: 'written' });
            outcome = 'wrote';
          } catch (err) {
            outcome = (err as { code?: string }).code ?? 'error';
            throw err;
          }
          return {} as never;
        },
      } as Partial<Handlers<typeof ProductServiceService>> as Handlers<typeof ProductServiceService>,
      { gateway: ['getProduct'] },
    );
    const port = await server.listen('127.0.0.1', 0);
    const { call, close } = createClient(ProductServiceClient, `127.0.0.1:${port}`, { caller: 'gateway', token });
    try {
      await expect(call.getProduct({ account_id: 'acct', id: 'held' }, { timeoutMs: 300 })).rejects.toMatchObject({
        code: 'service_unavailable',
      });
      // As long as the handler may be held (its own wait, above), and then some: a loaded machine's server sees the deadline late.
      await eventually(() => expect(outcome).not.toBe('pending'), { timeoutMs: 15_000 });
      expect(outcome).toBe('service_unavailable');
      expect(await Notes.findById('held').lean()).toBeNull();

      // The same handler with time to spare does write: the refusal above was the deadline's.
      await call.getProduct({ account_id: 'acct', id: 'in-time' });
      expect(await Notes.findById('in-time').lean()).toMatchObject({ text: 'written' });
    } finally {
      close();
      await server.shutdown(1000);
    }
  });
});
