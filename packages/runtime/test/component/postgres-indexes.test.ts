import { randomBytes } from 'node:crypto';
import { Schema, type Connection } from 'mongoose';
import { Client } from 'pg';
import { addPostgresIndexes, connectMongo, createLogger, syncIndexes, unusedByFerretdb } from '@licensing/runtime';

// A service starting on an empty database over FerretDB/PostgreSQL: its collections get their
// PostgreSQL indexes at once, even when none of its MongoDB indexes is one FerretDB creates (the
// product and checkout services). FerretDB would otherwise create the database on the first write,
// racing the index step, which then found no schema or no metadata table.

const postgresUrl = process.env.TEST_FERRETDB_POSTGRESQL_URL;
const log = createLogger('test', 'silent');
let db: Connection;
let pg: Client;

beforeAll(async () => {
  db = await connectMongo(process.env.TEST_MONGO_URL!, `t_idx_${randomBytes(3).toString('hex')}`);
  if (postgresUrl) {
    pg = new Client({ connectionString: postgresUrl });
    await pg.connect();
  }
});

afterAll(async () => {
  await db?.dropDatabase();
  await db?.close();
  await pg?.end();
});

it('an empty database with only non-unique indexes has its collections, and over PostgreSQL their GIN and page indexes, before any write', async () => {
  const schema = new Schema({ _id: String, account_id: String, email: String }, { collection: 'gadgets' });
  schema.index({ account_id: 1, _id: -1 });
  schema.index({ email: 1 });
  db.model('Gadget', schema);
  await syncIndexes(db, postgresUrl ? unusedByFerretdb : undefined);
  expect((await db.db!.listCollections().toArray()).map((c) => c.name)).toContain('gadgets');
  if (!postgresUrl) return; // over SQLite FerretDB keeps the declared indexes itself
  await addPostgresIndexes(db, postgresUrl, log);
  const { rows } = await pg.query<{ indexdef: string }>('SELECT indexdef FROM pg_indexes WHERE schemaname = $1', [
    db.name,
  ]);
  const defs = rows.map((r) => r.indexdef).join('\n');
  expect(defs).toContain("USING gin (((_jsonb -> 'account_id'::text)))");
  expect(defs).toContain("USING gin (((_jsonb -> 'email'::text)))");
  // The newest-first page index: account, then _id as text.
  expect(defs).toContain("USING btree (((_jsonb -> 'account_id'::text)), ((_jsonb ->> '_id'::text)) COLLATE \"C\")");
});
