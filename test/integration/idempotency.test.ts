import { randomBytes } from 'node:crypto';
import type { Connection } from 'mongoose';
import {
  AppError,
  connectMongo,
  idempotencyModel,
  idempotent,
  syncIndexes,
  IDEMPOTENCY_TTL_SECONDS,
} from '@licensing/runtime';
import { eventually } from '../support/eventually';

let db: Connection;
let model: ReturnType<typeof idempotencyModel>;

beforeAll(async () => {
  db = await connectMongo(process.env.TEST_MONGO_URL!, `t_idem_${randomBytes(3).toString('hex')}`);
  model = idempotencyModel(db);
  await syncIndexes(db); // FerretDB has no TTL index: falls back to a plain one
});

afterAll(async () => {
  await db?.dropDatabase();
  await db?.close();
});

it('runs once and replays the stored answer for the same request', async () => {
  let runs = 0;
  const run = async () => ({ n: ++runs });
  expect(await idempotent(model, 'acct', 'k1', { a: 1 }, run)).toEqual({ n: 1 });
  expect(await idempotent(model, 'acct', 'k1', { a: 1 }, run)).toEqual({ n: 1 });
  expect(runs).toBe(1);
});

it('refuses the same key with another request (422 code) and while in flight (409 code)', async () => {
  await idempotent(model, 'acct', 'k2', { a: 1 }, async () => 'first');
  await expect(idempotent(model, 'acct', 'k2', { a: 2 }, async () => 'second')).rejects.toMatchObject({
    code: 'idempotency_key_reused',
  });
  let release!: () => void;
  let started = false;
  const slow = idempotent(model, 'acct', 'k3', { a: 1 }, () => {
    started = true;
    return new Promise<string>((r) => {
      release = () => r('done');
    });
  });
  await eventually(() => expect(started).toBe(true)); // the first request holds the key
  await expect(idempotent(model, 'acct', 'k3', { a: 1 }, async () => 'dup')).rejects.toMatchObject({
    code: 'conflict',
  });
  release();
  expect(await slow).toBe('done');
});

it('forgets a failed request so it can be retried with the same key', async () => {
  await expect(
    idempotent(model, 'acct', 'k4', {}, async () => Promise.reject(new AppError('not_found', 'x'))),
  ).rejects.toBeInstanceOf(AppError);
  expect(await idempotent(model, 'acct', 'k4', {}, async () => 'ok')).toBe('ok');
});

it('treats a key older than 24 h as new, even without a TTL monitor', async () => {
  const past = new Date(Date.now() - (IDEMPOTENCY_TTL_SECONDS + 60) * 1000);
  await idempotent(model, 'acct', 'k5', { a: 1 }, async () => 'old', past);
  expect(await idempotent(model, 'acct', 'k5', { a: 2 }, async () => 'new')).toBe('new');
});
