import { randomBytes } from 'node:crypto';
import type { Connection } from 'mongoose';
import {
  MIGRATIONS_COLLECTION,
  appliedMigrations,
  connectMongo,
  createLogger,
  runMigrations,
  stampSchemaVersion,
  type Migration,
} from '@licensing/runtime';

// The migration runner (runtime/store/migrations.ts) against the run's real FerretDB: each migration
// once across replicas starting together, a dead holder's lock taken over after its lease, and the
// schema_version stamp, atomic over FerretDB's PostgreSQL, applied to documents of the older shape.
const log = createLogger('migrations-test', 'silent');
const pg = process.env.TEST_FERRETDB_POSTGRESQL_URL ?? '';
const dbs: Connection[] = [];

async function freshDb(): Promise<Connection> {
  const db = await connectMongo(process.env.TEST_MONGO_URL!, `t_migr_${randomBytes(3).toString('hex')}`);
  dbs.push(db);
  return db;
}

afterAll(async () => {
  for (const db of dbs) {
    await db.dropDatabase().catch(() => undefined);
    await db.close();
  }
});

function counting(id: string, ran: string[], ms = 150): Migration {
  return {
    id,
    description: `test ${id}`,
    async up() {
      ran.push(id);
      await new Promise((r) => setTimeout(r, ms));
    },
  };
}

it('several replicas starting at once run each migration once, and all return when every one is recorded', async () => {
  const db = await freshDb();
  const ran: string[] = [];
  const list = [counting('0001-a', ran), counting('0002-b', ran), counting('0003-c', ran)];
  // Five "replicas", each with its own connection, as separate processes would have.
  const conns = [
    db,
    ...(await Promise.all([1, 2, 3, 4].map(() => connectMongo(process.env.TEST_MONGO_URL!, db.name)))),
  ];
  try {
    const reports = await Promise.all(conns.map((c) => runMigrations(c, list, { log, pollMs: 50 })));
    expect(ran).toEqual(['0001-a', '0002-b', '0003-c']);
    expect(reports.flatMap((r) => r.applied).sort()).toEqual(['0001-a', '0002-b', '0003-c']);
    for (const r of reports) expect(r.recorded).toEqual(['0001-a', '0002-b', '0003-c']);
  } finally {
    for (const c of conns.slice(1)) await c.close();
  }
  expect([...(await appliedMigrations(db))].sort()).toEqual(['0001-a', '0002-b', '0003-c']);
  expect(await db.collection(MIGRATIONS_COLLECTION).findOne({ _id: 'lock' } as never)).toBeNull();
  // Run again (the next start, a Job): nothing is applied twice.
  const again = await runMigrations(db, list, { log });
  expect(again.applied).toEqual([]);
  expect(ran).toHaveLength(3);
  // A later release adds one: only that one runs.
  const more = await runMigrations(db, [...list, counting('0004-d', ran)], { log });
  expect(more.applied).toEqual(['0004-d']);
});

it('a lock whose holder died is taken over once its lease ran out; a live one is waited for', async () => {
  const db = await freshDb();
  const coll = db.collection(MIGRATIONS_COLLECTION);
  await coll.insertOne({ _id: 'lock', owner: 'dead', expires_at: new Date(Date.now() + 400), host: 'x' } as never);
  const ran: string[] = [];
  const started = Date.now();
  const reports = await Promise.all(
    [1, 2, 3].map(() => runMigrations(db, [counting('0001-a', ran, 10)], { log, pollMs: 50 })),
  );
  expect(Date.now() - started).toBeGreaterThanOrEqual(350); // the live lease was respected
  expect(ran).toEqual(['0001-a']);
  expect(reports.flatMap((r) => r.applied)).toEqual(['0001-a']);
});

it('a migration that fails is not recorded, and runs again next time; a list out of order is refused', async () => {
  const db = await freshDb();
  let attempts = 0;
  const flaky: Migration = {
    id: '0001-flaky',
    description: 'fails once',
    async up() {
      attempts++;
      if (attempts === 1) throw new Error('store went away');
    },
  };
  await expect(runMigrations(db, [flaky], { log })).rejects.toThrow('store went away');
  expect(await appliedMigrations(db)).toEqual(new Set());
  expect((await runMigrations(db, [flaky], { log })).applied).toEqual(['0001-flaky']);
  await expect(runMigrations(db, [counting('0002-b', []), counting('0001-a', [])], { log })).rejects.toThrow(
    'out of order',
  );
});

it('the stamp gives every document of the older shape schema_version 1 and touches no other field', async () => {
  const db = await freshDb();
  const docs = Array.from({ length: 1200 }, (_, i) => ({ _id: `d${String(i).padStart(5, '0')}`, n: i, tags: ['a'] }));
  await db.collection('things').insertMany(docs as never);
  await db.collection('other').insertOne({ _id: 'v2', schema_version: 2, name: 'already newer' } as never);
  const report = await runMigrations(db, [stampSchemaVersion], { log, ferretdbPostgresUrl: pg });
  expect(report.applied).toEqual(['0001-schema-version']);
  const things = await db.collection('things').find({}).sort({ _id: 1 }).toArray();
  expect(things).toHaveLength(1200);
  expect(things.every((d, i) => d.schema_version === 1 && d.n === i && d.tags[0] === 'a')).toBe(true);
  expect(await db.collection('other').findOne({ _id: 'v2' } as never)).toEqual({
    _id: 'v2',
    schema_version: 2,
    name: 'already newer',
  });
  // FerretDB still filters and updates the stamped documents as usual.
  expect(await db.collection('things').countDocuments({ schema_version: 1 })).toBe(1200);
  await db.collection('things').updateOne({ _id: 'd00007' } as never, { $set: { n: -7 } });
  expect(await db.collection('things').findOne({ _id: 'd00007' } as never)).toMatchObject({ n: -7, schema_version: 1 });
});
