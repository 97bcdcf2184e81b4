import { randomBytes } from 'node:crypto';
import { Schema, type Connection, type Model } from 'mongoose';
import { Client } from 'pg';
import {
  addPostgresIndexes,
  connectMongo,
  countMatching,
  createLogger,
  idsAmongSql,
  listPage,
  newId,
  pageSql,
  postgresPagesOf,
  usePostgresPages,
} from '@licensing/runtime';

// Pages and counts over the development store, against real FerretDB: over
// PostgreSQL (as in CI) PostgreSQL picks each page's ids from an index
// (runtime/src/store/postgres/pages.ts); whatever the path, every page and count must
// be exactly what FerretDB's own evaluation of the filter says (the oracle here).

interface Thing {
  _id: string;
  account_id: string;
  product_id: string;
  status: string;
  grace_ends_at: Date | null;
  note?: string;
}

const postgresUrl = process.env.TEST_FERRETDB_POSTGRESQL_URL;
const log = createLogger('test', 'silent');
let db: Connection;
let Things: Model<Thing>;
const now = new Date();
const accounts = ['acct_a', 'acct_b'];

beforeAll(async () => {
  db = await connectMongo(process.env.TEST_MONGO_URL!, `t_pages_${randomBytes(3).toString('hex')}`);
  const schema = new Schema<Thing>(
    {
      _id: String,
      account_id: String,
      product_id: String,
      status: String,
      grace_ends_at: { type: Date, default: null },
      note: String,
    },
    { versionKey: false, collection: 'things' },
  );
  schema.index({ account_id: 1, _id: -1 });
  schema.index({ account_id: 1, product_id: 1, _id: -1 });
  Things = db.model<Thing>('Thing', schema);
  await Things.syncIndexes();
  // 240 things over two accounts, three products, statuses, and grace ends that are past, future, null or missing.
  const docs = Array.from({ length: 240 }, (_, i) => {
    const doc: Record<string, unknown> = {
      _id: newId('thg', now.getTime() - 240_000 + i * 1000),
      account_id: accounts[i % 2],
      product_id: `prod_${i % 3}`,
      status: ['active', 'suspended', 'revoked'][i % 5 === 0 ? 1 : i % 7 === 0 ? 2 : 0],
      grace_ends_at: i % 4 === 0 ? null : new Date(now.getTime() + (i % 3 === 0 ? -1 : 1) * 86_400_000 * (1 + (i % 9))),
    };
    if (i % 11 === 0) delete doc.grace_ends_at;
    if (i % 13 === 0) doc.note = 'x';
    return doc;
  });
  await Things.insertMany(docs);
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

const filters: Record<string, unknown>[] = [
  { account_id: 'acct_a' },
  { account_id: 'acct_b', product_id: 'prod_1' },
  { account_id: 'acct_a', status: 'suspended' },
  { account_id: 'acct_a', status: 'active', $or: [{ grace_ends_at: null }, { grace_ends_at: { $gt: now } }] },
  { account_id: 'acct_b', status: 'active', grace_ends_at: { $lte: now } },
  { account_id: 'acct_a', status: { $ne: 'active' } },
  { account_id: 'acct_a', note: { $ne: null } },
  { account_id: 'acct_a', note: { $in: ['x'] } }, // not translated: answered by FerretDB
  { account_id: 'acct_nobody' },
];

/** Every id of a filter, walking pages of `limit` through listPage. */
async function walk(filter: Record<string, unknown>, limit: number): Promise<string[]> {
  const ids: string[] = [];
  let startingAfter = '';
  for (let pages = 0; pages < 100; pages++) {
    const { items, page } = await listPage<Thing>(Things, filter, { limit, starting_after: startingAfter });
    ids.push(...items.map((t) => t._id));
    if (!page.has_more) return ids;
    startingAfter = page.next_cursor;
  }
  throw new Error('more than 100 pages');
}

describe('newest-first pages and counts on the development store', () => {
  it.each(filters.map((f) => [JSON.stringify(f), f]))('%s: every page and the count match the store', async (_, f) => {
    const filter = f as Record<string, unknown>;
    const expected = (await Things.find(filter, { _id: 1 }).sort({ _id: -1 }).lean()).map((t) => t._id);
    expect(await walk(filter, 7)).toEqual(expected);
    expect(await walk(filter, 100)).toEqual(expected);
    expect(await countMatching(Things, filter)).toBe(await Things.countDocuments(filter));
  });

  it('over PostgreSQL, a deep page is read from the page index, not by decoding every match', async () => {
    const pages = postgresPagesOf(db);
    if (!postgresUrl) {
      // Over SQLite there is nothing to ask: pages come from FerretDB itself (checked above).
      expect(pages).toBeUndefined();
      return;
    }
    const table = await pages!.tableOf('things');
    const sql = pageSql(db.name, table!, { account_id: 'acct_a', _id: { $lt: newId('thg', now.getTime()) } }, 21)!;
    const pg = new Client({ connectionString: postgresUrl });
    await pg.connect();
    try {
      await pg.query('SET enable_seqscan = off'); // the test table is small: show what PostgreSQL can use
      const plan = (await pg.query(`EXPLAIN ${sql.text}`, sql.params)).rows.map((r) => r['QUERY PLAN']).join('\n');
      expect(plan).toMatch(/Index Scan Backward using \S+_page/);
      expect(plan).not.toMatch(/Sort/);
    } finally {
      await pg.end();
    }
  });
});

describe('which of some ids a collection holds (idsAmong)', () => {
  it('answers exactly the ids stored, in one statement on the _id index', async () => {
    const pages = postgresPagesOf(db);
    if (!postgresUrl) {
      expect(pages).toBeUndefined();
      return;
    }
    const stored = (await Things.find({}, { _id: 1 }).limit(5).lean()).map((t) => t._id);
    const asked = [...stored, 'thg_not_there', '"quoted"', "it's", 'x\\y'];
    expect((await pages!.idsAmong('things', asked)).sort()).toEqual([...stored].sort());
    expect(await pages!.idsAmong('things', [])).toEqual([]);
    expect(await pages!.idsAmong('no_such_collection', stored)).toEqual([]);
    const table = await pages!.tableOf('things');
    const sql = idsAmongSql(db.name, table!, asked);
    const pg = new Client({ connectionString: postgresUrl });
    await pg.connect();
    try {
      await pg.query('SET enable_seqscan = off');
      const plan = (await pg.query(`EXPLAIN ${sql.text}`, sql.params)).rows.map((r) => r['QUERY PLAN']).join('\n');
      expect(plan).toMatch(/Index (Only )?Scan|Bitmap Index Scan/);
    } finally {
      await pg.end();
    }
  });
});
