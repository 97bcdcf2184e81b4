import { randomBytes } from 'node:crypto';
import type { Connection } from 'mongoose';
import { connectMongo, quietIdlePools } from '@licensing/runtime';

// packages/runtime/src/store/idle-pools.ts: an idle service's connection pool no longer wakes every 100 ms,
// against real FerretDB. If a driver upgrade renames what is patched, the first test fails: look again at
// whether the driver still wakes its pools, and drop or adapt the patch.

type Pool = { minPoolSizeTimer?: NodeJS.Timeout; totalConnectionCount: number };
const poolsOf = (db: Connection): Pool[] => {
  const topology = (db.getClient() as unknown as { topology: { s: { servers: Map<string, { pool: Pool }> } } })
    .topology;
  return [...topology.s.servers.values()].map((s) => s.pool);
};

let db: Connection;

beforeAll(async () => {
  db = await connectMongo(process.env.TEST_MONGO_URL!, `t_pools_${randomBytes(3).toString('hex')}`);
});

afterAll(async () => {
  await db?.close();
});

it('the driver still has the check it patches, and the patch is on', () => {
  expect(quietIdlePools()).toBe(true);
});

it('a pool with no minimum keeps no timer armed, and serves queries as before', async () => {
  const things = db.collection('things');
  await things.insertOne({ n: 1 });
  expect(await things.countDocuments({})).toBe(1);
  const pools = poolsOf(db);
  expect(pools.length).toBeGreaterThan(0);
  for (const pool of pools) {
    expect(pool.totalConnectionCount).toBeGreaterThan(0);
    // The driver arms this every 100 ms for as long as the pool lives; patched, it is never armed.
    expect(pool.minPoolSizeTimer).toBeUndefined();
  }
  await Promise.all(Array.from({ length: 20 }, (_, i) => things.insertOne({ n: i + 2 })));
  expect(await things.countDocuments({})).toBe(21);
});
