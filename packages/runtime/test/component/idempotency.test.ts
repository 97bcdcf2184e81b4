import { randomBytes } from 'node:crypto';
import type { Connection } from 'mongoose';
import {
  AppError,
  connectMongo,
  idempotencyModel,
  idempotent,
  remainingMs,
  requestHash,
  syncIndexes,
  withCallScope,
  IDEMPOTENCY_LEASE_MS,
  IDEMPOTENCY_TTL_SECONDS,
  type IdempotentRun,
} from '@licensing/runtime';
import { eventually } from '../../../../test/support/eventually';

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

const conflict = { code: 'conflict' };

/** What a process that died in the middle of a run leaves behind: an in-flight record nobody renews. */
async function abandoned(key: string, request: unknown, at: Date, resultId = 'res_1') {
  await model.create({
    _id: `acct:${key}`,
    request_hash: requestHash(request),
    state: 'in_flight',
    created_at: at,
    owner: 'a-run-that-died',
    lease_until: new Date(at.getTime() + IDEMPOTENCY_LEASE_MS),
    rev: 'rev-of-the-dead-run',
    result_id: resultId,
  });
}

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
  await expect(idempotent(model, 'acct', 'k3', { a: 1 }, async () => 'dup')).rejects.toMatchObject(conflict);
  release();
  expect(await slow).toBe('done');
});

it('lets a failed request be retried with the same key, and with another body', async () => {
  await expect(
    idempotent(model, 'acct', 'k4', {}, async () => Promise.reject(new AppError('not_found', 'x'))),
  ).rejects.toBeInstanceOf(AppError);
  expect(await idempotent(model, 'acct', 'k4', {}, async () => 'ok')).toBe('ok');
  await expect(
    idempotent(model, 'acct', 'k4b', { a: 1 }, async () => Promise.reject(new Error('x'))),
  ).rejects.toThrow();
  expect(await idempotent(model, 'acct', 'k4b', { a: 2 }, async () => 'other body')).toBe('other body');
});

it('treats a key older than 24 h as new, even without a TTL monitor', async () => {
  const past = new Date(Date.now() - (IDEMPOTENCY_TTL_SECONDS + 60) * 1000);
  await idempotent(model, 'acct', 'k5', { a: 1 }, async () => 'old', { now: past });
  expect(await idempotent(model, 'acct', 'k5', { a: 2 }, async () => 'new')).toBe('new');
});

describe('the record of a run is kept whatever the caller’s deadline', () => {
  // A run held up until its call's deadline has passed (a slow product look-up): its store operations
  // would now be refused; the record of how it ended must not be.
  it('a run that failed after the deadline: the retry runs at once (no 409)', async () => {
    const key = `late-fail-${randomBytes(3).toString('hex')}`;
    await expect(
      withCallScope('held', Date.now() + 200, () =>
        idempotent(model, 'acct', key, { a: 1 }, async () => {
          await eventually(() => expect(remainingMs()).toBeLessThanOrEqual(0), { intervalMs: 10 });
          throw new AppError('service_unavailable', 'the product service did not answer in time');
        }),
      ),
    ).rejects.toMatchObject({ code: 'service_unavailable' });
    expect(await idempotent(model, 'acct', key, { a: 1 }, async () => 'retried')).toBe('retried');
  });

  it('a run that succeeded after the deadline: its answer is recorded and replayed', async () => {
    const key = `late-ok-${randomBytes(3).toString('hex')}`;
    let runs = 0;
    const run = async () => {
      await eventually(() => expect(remainingMs()).toBeLessThanOrEqual(0), { intervalMs: 10 });
      return { n: ++runs };
    };
    expect(await withCallScope('held', Date.now() + 200, () => idempotent(model, 'acct', key, { a: 1 }, run))).toEqual({
      n: 1,
    });
    expect(await idempotent(model, 'acct', key, { a: 1 }, async () => ({ n: ++runs }))).toEqual({ n: 1 });
    expect(runs).toBe(1);
  });
});

describe('leases', () => {
  it('an in-flight record no live run owns is 409 until its lease ends, then taken over with the same result id', async () => {
    const start = new Date();
    await abandoned('k6', { a: 1 }, start);
    const seen: IdempotentRun[] = [];
    const run = async (r: IdempotentRun) => {
      seen.push(r);
      return 'finished by the retry';
    };
    await expect(
      idempotent(model, 'acct', 'k6', { a: 1 }, run, { now: new Date(start.getTime() + IDEMPOTENCY_LEASE_MS - 1000) }),
    ).rejects.toMatchObject(conflict);
    expect(seen).toEqual([]);
    const after = new Date(start.getTime() + IDEMPOTENCY_LEASE_MS + 1);
    expect(await idempotent(model, 'acct', 'k6', { a: 1 }, run, { now: after })).toBe('finished by the retry');
    // The dead run may have created its result: the retry is told where it would be.
    expect(seen).toEqual([{ resultId: 'res_1', resumed: true }]);
    expect(await idempotent(model, 'acct', 'k6', { a: 1 }, run, { now: after })).toBe('finished by the retry');
    expect(seen).toHaveLength(1);
  });

  it('many requests taking over the same abandoned record: exactly one runs, the others get 409', async () => {
    const start = new Date(Date.now() - IDEMPOTENCY_LEASE_MS - 1000);
    await abandoned('k7', { a: 1 }, start);
    let runs = 0;
    const outcomes = await Promise.allSettled(
      Array.from({ length: 12 }, () =>
        idempotent(model, 'acct', 'k7', { a: 1 }, async () => {
          runs++;
          return 'one';
        }),
      ),
    );
    expect(runs).toBe(1);
    for (const o of outcomes) {
      if (o.status === 'rejected') expect(o.reason).toMatchObject(conflict);
      else expect(o.value).toBe('one');
    }
    expect(await idempotent(model, 'acct', 'k7', { a: 1 }, async () => 'again')).toBe('one');
  });

  it('a live run renews its lease: retries stay 409 for many leases and never run it twice', async () => {
    // Short enough to see several leases pass, long enough for a renewal on a busy machine.
    const leaseMs = 1500;
    let runs = 0;
    let release!: () => void;
    const first = idempotent(
      model,
      'acct',
      'k8',
      { a: 1 },
      () => {
        runs++;
        return new Promise<string>((r) => {
          release = () => r('the first');
        });
      },
      { leaseMs },
    );
    await eventually(() => expect(runs).toBe(1));
    const until = Date.now() + 4 * leaseMs;
    let tries = 0;
    while (Date.now() < until || tries < 5) {
      tries++;
      await expect(
        idempotent(
          model,
          'acct',
          'k8',
          { a: 1 },
          async () => {
            runs++;
            return 'a second';
          },
          { leaseMs },
        ),
      ).rejects.toMatchObject(conflict);
    }
    release();
    expect(await first).toBe('the first');
    expect(runs).toBe(1);
  });

  it('a run that created its result and then failed: the retry gets the same result id to find it', async () => {
    const created = new Map<string, string>();
    const create =
      (fail: boolean) =>
      async ({ resultId, resumed }: IdempotentRun) => {
        if (resumed && created.has(resultId)) return created.get(resultId)!;
        if (!created.has(resultId)) created.set(resultId, `licence ${created.size + 1}`);
        if (fail) throw new AppError('service_unavailable', 'the store went away after the insert');
        return created.get(resultId)!;
      };
    const opts = { resultId: () => `lic_${randomBytes(4).toString('hex')}` };
    await expect(idempotent(model, 'acct', 'k9', { a: 1 }, create(true), opts)).rejects.toMatchObject({
      code: 'service_unavailable',
    });
    expect(await idempotent(model, 'acct', 'k9', { a: 1 }, create(false), opts)).toBe('licence 1');
    expect(created.size).toBe(1);
  });
});
