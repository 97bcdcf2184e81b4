import { randomBytes } from 'node:crypto';
import type { Connection } from 'mongoose';
import {
  addPostgresIndexes,
  connectMongo,
  createLogger,
  postgresPagesOf,
  syncIndexes,
  usePostgresPages,
} from '@licensing/runtime';
import type { CreateProductRequest, Product } from '@licensing/proto';
import { ImportRunner } from '../../src/transfer/jobs/import-runner';
import { licenseModels } from '../../src/store/models';
import { BulkLicenses } from '../../src/store/bulk-licenses';
import { type LicenseCore, licenseCore } from '../../src/use-cases/license-core';
import { ImportStore, importModels } from '../../src/transfer/store/imports';
import { RetiredKeyStore } from '../../src/store/retired-keys';
import {
  appendImportChunk,
  createImport,
  getImport,
  IMPORT_LEASE_MS,
  startImport,
  type ImportDeps,
} from '../../src/transfer/use-cases/imports';
import { KEY_REFUSED as TAKEN } from '../../src/transfer/use-cases/import-tally';
import { FakeClock, RecordingOutbox } from '../../../../test/support/fakes/common';

// A key a reroll took from a licence stays taken (retired_keys): an import row holding it is refused.
// Here the races, against real FerretDB: a reroll that retires the key between the import's read of
// retired_keys and its insert (the read after the insert takes the licence back), and an import that
// died right after such an insert (the resumed run takes it back). The reroll is its two writes
// (use-cases/reroll-license.ts): the claim in retired_keys, then the licence's new key.

const log = createLogger('import-retired-keys-test', 'silent');
const productOf = (account: string): Product => ({
  id: `prod_${account.slice(5)}`,
  account_id: account,
  name: 'Retired keys',
  description: '',
  created_at: new Date().toISOString(),
  policy: undefined,
  price: undefined,
  email_on_purchase: true,
});
const productsOf = (account: string) => ({
  getProduct: async () => productOf(account),
  listProducts: async () => ({ data: [productOf(account)], page: { has_more: false, next_cursor: '' } }),
  createProduct: async (_req: CreateProductRequest): Promise<Product> => {
    throw new Error('not expected');
  },
});
const theirs = 'acct_01JD8Z3K6Q2W4E5R6T7Y8V9X0A';
const ours = 'acct_01JD8Z3K6Q2W4E5R6T7Y8V9X0B';

let db: Connection;
let licenses: ReturnType<typeof licenseModels>;
let store: ImportStore;

beforeAll(async () => {
  db = await connectMongo(process.env.TEST_MONGO_URL!, `t_import_retired_${randomBytes(3).toString('hex')}`);
  licenses = licenseModels(db);
  store = new ImportStore(importModels(db));
  await syncIndexes(db);
  // As the licence service runs over FerretDB's PostgreSQL: retired_keys is read by SQL on its _id index.
  const postgresUrl = process.env.TEST_FERRETDB_POSTGRESQL_URL;
  if (postgresUrl) {
    await addPostgresIndexes(db, postgresUrl, log);
    usePostgresPages(db, postgresUrl, log);
  }
});

afterAll(async () => {
  await postgresPagesOf(db)?.close();
  await db?.dropDatabase().catch(() => undefined);
  await db?.close();
});

function depsFor(
  account: string,
  clock: FakeClock,
  imported = licenseCore({ bulk: new BulkLicenses(licenses), outbox: new RecordingOutbox() }),
): ImportDeps {
  return {
    licenses: imported,
    imports: store,
    products: productsOf(account),
    outbox: new RecordingOutbox(),
    clock,
    log,
  };
}

/** An import of these keys for the account, uploaded and started (not run). */
async function upload(deps: ImportDeps, account: string, keys: string[]) {
  const lines = keys.map((key) =>
    JSON.stringify({ key, product_id: productOf(account).id, customer_email: 'row@example.com' }),
  );
  const imp = await createImport(deps, account, 'jsonl');
  await appendImportChunk(deps, account, imp._id, 0, Buffer.from(`${lines.join('\n')}\n`));
  await startImport(deps, account, imp._id);
  return imp._id;
}

/** The reroll of the licence holding `key` (its two writes); answers the new key. */
async function reroll(key: string, clock: FakeClock): Promise<string> {
  const doc = await licenses.License.findOne({ key }).lean().exec();
  const newKey = `rerolled-${randomBytes(6).toString('hex')}`;
  const claimed = await new RetiredKeyStore(licenses).claim({
    _id: key,
    account_id: doc!.account_id,
    license_id: doc!._id,
    new_key: newKey,
    until: new Date(clock.now().getTime() + 3_600_000),
    created_at: clock.now(),
  });
  expect(claimed).toBe(true);
  await licenses.License.updateOne({ _id: doc!._id, key }, { $set: { key: newKey } });
  return newKey;
}

async function theirLicence(key: string, clock: FakeClock): Promise<string> {
  const deps = depsFor(theirs, clock);
  const id = await upload(deps, theirs, [key]);
  await new ImportRunner(deps, log).pass();
  expect(await getImport(deps, theirs, id)).toMatchObject({ state: 'done', imported: 1 });
  return (await licenses.License.findOne({ key }).lean().exec())!._id;
}

it('a reroll between the read of retired_keys and the insert: the licence is taken back and the row refused', async () => {
  const clock = new FakeClock(new Date().toISOString());
  const key = `race-key-${randomBytes(4).toString('hex')}`;
  const theirId = await theirLicence(key, clock);

  // The reroll lands right after the import read retired_keys (it found nothing) and before its insert.
  const real = licenseCore({ bulk: new BulkLicenses(licenses), outbox: new RecordingOutbox() });
  const racing = Object.create(real) as LicenseCore;
  let reads = 0;
  racing.retiredKeys = async (keys) => {
    const found = await real.retiredKeys(keys);
    if (++reads === 1) await reroll(key, clock);
    return found;
  };
  const deps = depsFor(ours, clock, racing);
  const id = await upload(deps, ours, ['race-neighbour-1', key, 'race-neighbour-2']);
  await new ImportRunner(deps, log).pass();

  expect(await getImport(deps, ours, id)).toMatchObject({
    state: 'done',
    imported: 2,
    rejected: 1,
    row_errors: [{ row: 2, message: TAKEN }],
  });
  // No licence of ours holds it, and theirs (with its new key) is untouched.
  expect(await licenses.License.countDocuments({ key })).toBe(0);
  expect(await licenses.License.countDocuments({ account_id: ours, key: /^race-neighbour-/ })).toBe(2);
  expect((await licenses.License.findOne({ _id: theirId }).lean().exec())?.account_id).toBe(theirs);
  // Its license.created was never stored to be published.
  const events = await store.models.ImportEvents.find({ import_id: id }).lean().exec();
  expect(JSON.stringify(events)).not.toContain(key);
  expect(JSON.stringify(events)).toContain('race-neighbour-1');
});

it('an import that died right after writing such a licence: the resumed run takes it back and refuses the row', async () => {
  const clock = new FakeClock(new Date().toISOString());
  const key = `crash-key-${randomBytes(4).toString('hex')}`;
  await theirLicence(key, clock);

  // The first run: the reroll lands after its read, and the run dies right after its insert.
  const real = licenseCore({ bulk: new BulkLicenses(licenses), outbox: new RecordingOutbox() });
  const dying = Object.create(real) as LicenseCore;
  dying.retiredKeys = async (keys) => {
    const found = await real.retiredKeys(keys);
    await reroll(key, clock);
    return found;
  };
  dying.insertImported = (docs, activations) =>
    real.insertImported(docs, activations, async () => {
      throw new Error('killed');
    });
  const deps = depsFor(ours, clock, dying);
  const id = await upload(deps, ours, [key]);
  await new ImportRunner(deps, log).pass();
  expect(await getImport(deps, ours, id)).toMatchObject({ state: 'running', failed_runs: 1 });
  expect(await licenses.License.countDocuments({ key, account_id: ours })).toBe(1);

  // Another run, once the lease ran out, from the checkpoint (row 0).
  clock.advance(IMPORT_LEASE_MS + 1000);
  const resumed = depsFor(ours, clock);
  await new ImportRunner(resumed, log).pass();
  expect(await getImport(resumed, ours, id)).toMatchObject({
    state: 'done',
    imported: 0,
    rejected: 1,
    row_errors: [{ row: 1, message: TAKEN }],
  });
  expect(await licenses.License.countDocuments({ key })).toBe(0);
});
