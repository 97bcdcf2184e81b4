import { randomBytes } from 'node:crypto';
import type { Connection } from 'mongoose';
import { connectMongo, syncIndexes } from '@licensing/runtime';
import { checkoutModels } from '../../src/store/models';
import { CheckoutStore } from '../../src/store/queries';

// The hosted checkout page's form tokens against real FerretDB: expired ones
// are pruned, a bounded number at a time, oldest first; live ones stay usable.
const id = randomBytes(3).toString('hex');
let db: Connection;
let store: CheckoutStore;

beforeAll(async () => {
  db = await connectMongo(process.env.TEST_MONGO_URL!, `t_pagetokens_${id}`);
  store = new CheckoutStore(checkoutModels(db));
  await syncIndexes(db);
});

afterAll(async () => {
  await db?.dropDatabase().catch(() => undefined);
  await db?.close();
});

it('prunes at most the limit of expired tokens per call, oldest first, and never a live one', async () => {
  const now = new Date('2030-01-01T00:00:00Z');
  const at = (s: number) => new Date(now.getTime() + s * 1000);
  for (let i = 0; i < 5; i++) await store.addPageToken(`expired-${i}`, 'cs_a', at(-100 + i));
  await store.addPageToken('just-expired', 'cs_a', now);
  await store.addPageToken('live', 'cs_a', at(60));

  expect(await store.prunePageTokens(now, 4)).toBe(4);
  const left = async () =>
    (await store.models.PageToken.find({}, { _id: 1 }).sort({ expires_at: 1 }).lean<{ _id: string }[]>()).map(
      (t) => t._id,
    );
  expect(await left()).toEqual(['expired-4', 'just-expired', 'live']);
  expect(await store.prunePageTokens(now, 4)).toBe(2);
  expect(await store.prunePageTokens(now, 4)).toBe(0);
  expect(await left()).toEqual(['live']);
  expect(await store.pageTokenValid('live', 'cs_a', now)).toBe(true);
});

it('serves the prune from an index on expires_at', async () => {
  const indexes = await store.models.PageToken.collection.indexes();
  expect(indexes.map((i) => Object.keys(i.key))).toContainEqual(['expires_at']);
});
