import { randomBytes } from 'node:crypto';
import type { Connection } from 'mongoose';
import { connectMongo, createLogger, syncIndexes } from '@licensing/runtime';
import type { CreateProductRequest, ListProductsRequest, Product } from '@licensing/proto';
import { ImportRunner } from '../../src/transfer/jobs/import-runner';
import { licenseModels } from '../../src/store/models';
import { BulkLicenses } from '../../src/store/bulk-licenses';
import { licenseCore } from '../../src/use-cases/license-core';
import { ImportStore, importModels } from '../../src/transfer/store/imports';
import {
  appendImportChunk,
  createImport,
  getImport,
  IMPORT_LEASE_MS,
  startImport,
  type ImportDeps,
} from '../../src/transfer/use-cases/imports';
import { FakeClock, RecordingOutbox } from '../../../../test/support/fakes/common';

// An import job that dies half-way (here: its checkpoint write fails after a batch was written, as a
// process killed between the two would leave it) is taken over once its lease runs out, continues from
// its checkpoint, and counts every row once: the rows written after the checkpoint are recognised by the
// import and row they carry. Against real FerretDB.

const log = createLogger('import-resume-test', 'silent');
const account = 'acct_01JD8Z3K6Q2W4E5R6T7Y8V9X0P';
const product: Product = {
  id: 'prod_01JD8Z3K6Q2W4E5R6T7Y8V9X0P',
  account_id: account,
  name: 'Resumed',
  description: '',
  created_at: new Date().toISOString(),
  policy: undefined,
  price: undefined,
  email_on_purchase: true,
};
const products = {
  getProduct: async () => product,
  listProducts: async (_req: ListProductsRequest) => ({ data: [product], page: { has_more: false, next_cursor: '' } }),
  createProduct: async (_req: CreateProductRequest): Promise<Product> => {
    throw new Error('not expected');
  },
};

let db: Connection;
let licenses: ReturnType<typeof licenseModels>;
let models: ReturnType<typeof importModels>;

beforeAll(async () => {
  db = await connectMongo(process.env.TEST_MONGO_URL!, `t_import_resume_${randomBytes(3).toString('hex')}`);
  licenses = licenseModels(db);
  models = importModels(db);
  await syncIndexes(db);
});

afterAll(async () => {
  await db?.dropDatabase().catch(() => undefined);
  await db?.close();
});

function depsWith(clock: FakeClock, imports: ImportStore): ImportDeps {
  return {
    licenses: licenseCore({ bulk: new BulkLicenses(licenses), outbox: new RecordingOutbox() }),
    imports,
    products,
    outbox: new RecordingOutbox(),
    clock,
    log,
  };
}

it('resumes after a crash from its checkpoint, importing and counting each row once', async () => {
  const clock = new FakeClock(new Date().toISOString());
  const store = new ImportStore(models);
  const deps = depsWith(clock, store);
  const rows = 2500;
  const lines = Array.from({ length: rows }, (_, i) =>
    JSON.stringify({
      key: `resume-key-${String(i).padStart(6, '0')}`,
      product_id: product.id,
      customer_email: `r${i}@example.com`,
      ...(i % 100 === 0 ? { activations: [{ fingerprint: `m-${i}` }] } : {}),
    }),
  );
  const file = Buffer.from(`${lines.join('\n')}\n`);
  const imp = await createImport(deps, account, 'jsonl');
  const piece = Math.ceil(file.length / 3);
  for (let seq = 0; seq < 3; seq++)
    await appendImportChunk(deps, account, imp._id, seq, file.subarray(seq * piece, (seq + 1) * piece));
  await startImport(deps, account, imp._id);

  // The first run: its checkpoints are the total, then batch 1; the one after batch 2 never lands.
  let checkpoints = 0;
  const dying = Object.create(store) as ImportStore;
  dying.checkpoint = async (...args: Parameters<ImportStore['checkpoint']>) => {
    if (++checkpoints === 3) throw new Error('killed');
    return store.checkpoint(...args);
  };
  await new ImportRunner({ ...deps, imports: dying }, log).pass();
  const half = await getImport(deps, account, imp._id);
  // The run that stopped on an error is counted (the third such run fails the import).
  expect(half).toMatchObject({ state: 'running', checkpoint_row: 1000, imported: 1000, total: rows, failed_runs: 1 });
  expect(await db.model('License').countDocuments({})).toBe(2000);

  // While its lease runs, nobody takes the job over.
  const runner = new ImportRunner(deps, log);
  await runner.pass();
  expect((await getImport(deps, account, imp._id)).checkpoint_row).toBe(1000);

  // After it, another run does, from the checkpoint.
  clock.advance(IMPORT_LEASE_MS + 1000);
  await runner.pass();
  const done = await getImport(deps, account, imp._id);
  expect(done).toMatchObject({ state: 'done', total: rows, imported: rows, skipped: 0, rejected: 0, row_errors: [] });
  expect(done.epoch).toBe(2);
  expect(await db.model('License').countDocuments({})).toBe(rows);
  expect(await db.model('Activation').countDocuments({})).toBe(rows / 100);
  // The file's pieces are gone once it is done.
  expect(await db.model('ImportChunk').countDocuments({ owner_id: imp._id })).toBe(0);
});

it('two runs claiming one import at once: one gets it', async () => {
  const clock = new FakeClock(new Date().toISOString());
  const store = new ImportStore(models);
  const deps = depsWith(clock, store);
  const imp = await createImport(deps, account, 'csv');
  await appendImportChunk(deps, account, imp._id, 0, Buffer.from('key,product_id,customer_email\n'));
  const started = await startImport(deps, account, imp._id);
  const claims = await Promise.all([store.claim(started, clock.now(), 1000), store.claim(started, clock.now(), 1000)]);
  expect(claims.filter((c) => c !== null)).toEqual([1]);
});
