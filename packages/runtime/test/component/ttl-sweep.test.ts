import { randomBytes } from 'node:crypto';
import { Schema, type Connection, type Model } from 'mongoose';
import {
  addPostgresIndexes,
  connectMongo,
  createLogger,
  postgresPagesOf,
  sweepExpired,
  syncIndexes,
  ttlIndexesOf,
  unusedByFerretdb,
  usePostgresPages,
} from '@licensing/runtime';

// The TTL sweep every service runs over FerretDB (runtime/src/store/ttl-sweep.ts), against real FerretDB:
// what a TTL index lets expire is deleted in bounded batches, and nothing that has not expired goes.

interface Token {
  _id: string;
  expires_at: Date;
}
interface Claim {
  _id: string;
  created_at: Date;
}

const postgresUrl = process.env.TEST_FERRETDB_POSTGRESQL_URL;
const log = createLogger('test', 'silent');
const now = new Date();
const ago = (ms: number) => new Date(now.getTime() - ms);
let db: Connection;
let Tokens: Model<Token>;
let Claims: Model<Claim>;

beforeAll(async () => {
  db = await connectMongo(process.env.TEST_MONGO_URL!, `t_ttl_${randomBytes(3).toString('hex')}`);
  Tokens = db.model<Token>(
    'Token',
    new Schema<Token>(
      { _id: String, expires_at: { type: Date, index: { expireAfterSeconds: 0 } } },
      { versionKey: false, collection: 'tokens' },
    ),
  );
  Claims = db.model<Claim>(
    'Claim',
    new Schema<Claim>(
      { _id: String, created_at: { type: Date, index: { expireAfterSeconds: 3600 } } },
      { versionKey: false, collection: 'claims' },
    ),
  );
  // A model without a TTL index is never touched.
  db.model('Keep', new Schema({ _id: String, expires_at: Date }, { versionKey: false, collection: 'keeps' }));
  // As a service starts: over FerretDB only the unique indexes go to FerretDB (it refuses TTL options).
  await syncIndexes(db, postgresUrl ? unusedByFerretdb : undefined);
  await Tokens.insertMany([
    ...Array.from({ length: 5 }, (_, i) => ({ _id: `old_${i}`, expires_at: ago(1000 * (i + 1)) })),
    { _id: 'live', expires_at: new Date(now.getTime() + 60_000) },
  ]);
  await Claims.insertMany([
    { _id: 'stale', created_at: ago(3_601_000) },
    { _id: 'fresh', created_at: ago(3_599_000) },
  ]);
  await db.collection('keeps').insertOne({ _id: 'k' as never, expires_at: ago(86_400_000) });
  if (postgresUrl) {
    await addPostgresIndexes(db, postgresUrl, log);
    usePostgresPages(db, postgresUrl, log);
  }
});

afterAll(async () => {
  await postgresPagesOf(db)?.close();
  await db?.dropDatabase();
  await db?.close();
});

it('finds the TTL indexes the models declare, and only those', () => {
  const found = ttlIndexesOf(db).map((t) => `${t.model.collection.collectionName}.${t.field}:${t.expireAfterSeconds}`);
  expect(found.sort()).toEqual(['claims.created_at:3600', 'tokens.expires_at:0']);
});

it('deletes what expired in bounded batches, and keeps the rest', async () => {
  // A batch of 2 per index: the five old tokens take three passes; the stale claim goes in the first.
  expect(await sweepExpired(ttlIndexesOf(db), now, 2)).toBe(3);
  expect(await Tokens.countDocuments({})).toBe(4);
  expect(await sweepExpired(ttlIndexesOf(db), now, 2)).toBe(2);
  expect(await sweepExpired(ttlIndexesOf(db), now, 2)).toBe(1);
  expect(await sweepExpired(ttlIndexesOf(db), now, 2)).toBe(0);
  expect((await Tokens.find({}).lean()).map((t) => t._id)).toEqual(['live']);
  expect((await Claims.find({}).lean()).map((c) => c._id)).toEqual(['fresh']);
  expect(await db.collection('keeps').countDocuments({})).toBe(1);
});
