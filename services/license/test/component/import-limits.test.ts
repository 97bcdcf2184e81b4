import { randomBytes } from 'node:crypto';
import type { Connection } from 'mongoose';
import { AppError, connectMongo, createLogger, requestOrigin, syncIndexes, withCallScope } from '@licensing/runtime';
import type { CreateProductRequest, Product } from '@licensing/proto';
import { ImportRunner } from '../../src/transfer/jobs/import-runner';
import { licenseModels } from '../../src/store/models';
import { BulkLicenses } from '../../src/store/bulk-licenses';
import { licenseCore } from '../../src/use-cases/license-core';
import { type ExportDoc, type ImportDoc, ImportStore, importModels } from '../../src/transfer/store/imports';
import { createExport, finishExport } from '../../src/transfer/use-cases/exports';
import {
  appendImportChunk,
  createImport,
  getImport,
  IMPORT_LEASE_MS,
  startImport,
  type ImportDeps,
  type ProductAdmin,
} from '../../src/transfer/use-cases/imports';
import { KEY_REFUSED } from '../../src/transfer/use-cases/import-tally';
import { FakeClock, RecordingOutbox } from '../../../../test/support/fakes/common';

// The bounds one account's imports keep, against real FerretDB (the product service, a gRPC peer, is
// faked): a row another service or the store refuses is rejected and the run goes on; a run that stops
// on an error is counted, and the third fails the import; one import and one export per account at a
// time; accounts' imports taken in turn; keys held elsewhere refused with one message, 20 at most.

const log = createLogger('import-limits-test', 'silent');
const accountOf = (c: string) =>
  `acct_01JD8Z3K6Q2W4E5R6T7Y8V9X${c}${randomBytes(1).toString('hex').slice(0, 1).toUpperCase()}`;

const productOf = (account: string): Product => ({
  id: `prod_${account.slice(5)}`,
  account_id: account,
  name: 'Limits',
  description: '',
  created_at: new Date().toISOString(),
  policy: undefined,
  price: undefined,
  email_on_purchase: true,
});
const productsOf = (account: string, over: Partial<ProductAdmin> = {}): ProductAdmin => ({
  getProduct: async () => productOf(account),
  listProducts: async () => ({ data: [productOf(account)], page: { has_more: false, next_cursor: '' } }),
  createProduct: async (_req: CreateProductRequest): Promise<Product> => {
    throw new Error('not expected');
  },
  ...over,
});

let db: Connection;
let licenses: ReturnType<typeof licenseModels>;
let store: ImportStore;

beforeAll(async () => {
  db = await connectMongo(process.env.TEST_MONGO_URL!, `t_import_limits_${randomBytes(3).toString('hex')}`);
  licenses = licenseModels(db);
  store = new ImportStore(importModels(db));
  await syncIndexes(db);
});

afterAll(async () => {
  await db?.dropDatabase().catch(() => undefined);
  await db?.close();
});

function depsFor(account: string, clock: FakeClock, products = productsOf(account), imports = store): ImportDeps {
  return {
    licenses: licenseCore({ bulk: new BulkLicenses(licenses), outbox: new RecordingOutbox() }),
    imports,
    products,
    outbox: new RecordingOutbox(),
    clock,
    log,
  };
}

const row = (account: string, key: string, over: Record<string, unknown> = {}) =>
  JSON.stringify({ key, product_id: productOf(account).id, customer_email: 'row@example.com', ...over });

/** An import of these lines for the account, uploaded and started (not run). */
async function upload(deps: ImportDeps, account: string, lines: string[]) {
  const imp = await createImport(deps, account, 'jsonl');
  await appendImportChunk(deps, account, imp._id, 0, Buffer.from(`${lines.join('\n')}\n`));
  await startImport(deps, account, imp._id);
  return imp._id;
}

const keyOf = (prefix: string) => `${prefix}-${randomBytes(5).toString('hex')}`;

describe('a row refused is rejected, and the run goes on', () => {
  it('a product line or a product name the product service refuses rejects that row with its message', async () => {
    const account = accountOf('A');
    const clock = new FakeClock(new Date().toISOString());
    const products = productsOf(account, {
      createProduct: async (req) => {
        throw AppError.invalid('name', `name "${req.name}" is refused`);
      },
    });
    const deps = depsFor(account, clock, products);
    const id = await upload(deps, account, [
      JSON.stringify({ type: 'product', name: 'Refused' }),
      JSON.stringify({ key: keyOf('poison-name'), product_name: 'Refused too', customer_email: 'a@example.com' }),
      row(account, keyOf('fine')),
    ]);
    await new ImportRunner(deps, log).pass();
    expect(await getImport(deps, account, id)).toMatchObject({
      state: 'done',
      imported: 1,
      rejected: 2,
      row_errors: [
        { row: 1, message: 'product: name "Refused" is refused' },
        { row: 2, message: 'product: name "Refused too" is refused' },
      ],
    });
  });

  it('a customer_email with a NUL the store cannot hold rejects that row, naming the field', async () => {
    const account = accountOf('B');
    const clock = new FakeClock(new Date().toISOString());
    const deps = depsFor(account, clock);
    const id = await upload(deps, account, [
      row(account, keyOf('poison-nul'), { customer_email: 'ann\u0000@example.com' }),
      row(account, keyOf('fine')),
    ]);
    await new ImportRunner(deps, log).pass();
    expect(await getImport(deps, account, id)).toMatchObject({
      state: 'done',
      imported: 1,
      rejected: 1,
      row_errors: [
        { row: 1, message: 'customer_email must not contain control characters or unpaired surrogates (found U+0000)' },
      ],
    });
  });
});

it('a run that stops on an error is retried once its lease lapses, and the third fails the import with the error', async () => {
  const account = accountOf('C');
  const clock = new FakeClock(new Date().toISOString());
  const products = productsOf(account, {
    getProduct: async () => {
      throw new AppError('service_unavailable', 'the product service did not answer');
    },
  });
  const deps = depsFor(account, clock, products);
  const id = await upload(deps, account, [row(account, keyOf('outage'))]);
  const runner = new ImportRunner(deps, log);
  await runner.pass();
  expect(await getImport(deps, account, id)).toMatchObject({ state: 'running', failed_runs: 1 });
  // Not again while its lease runs.
  await runner.pass();
  expect(await getImport(deps, account, id)).toMatchObject({ state: 'running', failed_runs: 1 });
  clock.advance(IMPORT_LEASE_MS + 1000);
  await runner.pass();
  expect(await getImport(deps, account, id)).toMatchObject({ state: 'running', failed_runs: 2 });
  clock.advance(IMPORT_LEASE_MS + 1000);
  await runner.pass();
  const failed = await getImport(deps, account, id);
  expect(failed).toMatchObject({
    state: 'failed',
    failed_runs: 3,
    failure: 'the import stopped on an error 3 times: the product service did not answer',
  });
  expect(failed.finished_at).not.toBeNull();
  expect(await store.models.ImportChunk.countDocuments({ owner_id: id })).toBe(0);
  // Nothing is left for a runner to take.
  clock.advance(IMPORT_LEASE_MS + 1000);
  expect((await store.runnable(clock.now())).map((d) => d._id)).not.toContain(id);
});

describe('one import and one export per account at a time', () => {
  it('a second import while one waits or runs is 409; another account is not held up; once done, the next is taken', async () => {
    const account = accountOf('D');
    const other = accountOf('E');
    const clock = new FakeClock(new Date().toISOString());
    const deps = depsFor(account, clock);
    const first = await createImport(deps, account, 'jsonl');
    const refused = createImport(deps, account, 'jsonl');
    await expect(refused).rejects.toMatchObject({
      code: 'conflict',
      message: `this account already has an import waiting or running (${first._id}): an account runs 1 import at a time; send the next once it is done or failed`,
    });
    // Two at once: one gets the place.
    const otherDeps = depsFor(other, clock);
    const both = await Promise.allSettled([
      createImport(otherDeps, other, 'csv'),
      createImport(otherDeps, other, 'csv'),
    ]);
    expect(both.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(both.filter((r) => r.status === 'rejected')).toHaveLength(1);

    // Still uploading, then running: held.
    await appendImportChunk(deps, account, first._id, 0, Buffer.from(`${row(account, keyOf('one'))}\n`));
    await startImport(deps, account, first._id);
    await expect(createImport(deps, account, 'jsonl')).rejects.toMatchObject({ code: 'conflict' });
    await new ImportRunner(depsFor(account, clock), log).pass();
    expect(await getImport(deps, account, first._id)).toMatchObject({ state: 'done' });
    const next = await createImport(deps, account, 'jsonl');
    expect(next._id).not.toBe(first._id);
  });

  it('a second export while one runs is 409; once it finished, the next is taken', async () => {
    const account = accountOf('F');
    const clock = new FakeClock(new Date().toISOString());
    const deps = {
      licenses: licenseCore({ bulk: new BulkLicenses(licenses), outbox: new RecordingOutbox() }),
      imports: store,
      outbox: new RecordingOutbox(),
      clock,
    };
    const first = await createExport(deps, account);
    await expect(createExport(deps, account)).rejects.toMatchObject({
      code: 'conflict',
      message: `this account already has an export running (${first._id}): an account runs 1 export at a time; start the next once it is done or failed`,
    });
    await createExport(deps, accountOf('G')); // another account's
    await finishExport(deps, account, first._id, '');
    await expect(createExport(deps, account)).resolves.toMatchObject({ state: 'running' });
  });

  it("a new import or export is stored with the audit log's import.created or export.created, who asked on it, and published at once", async () => {
    const account = accountOf('N');
    const clock = new FakeClock(new Date().toISOString());
    const outbox = new RecordingOutbox();
    const deps = { ...depsFor(account, clock), outbox };
    // As the licence service serves the gateway's call: who asked comes in its metadata, onto the call's scope.
    const origin = requestOrigin({ type: 'api_key', id: 'key_importer' }, '198.51.100.7', 'importer/1.0');
    const asked = <T>(fn: () => Promise<T>) =>
      withCallScope('req_transfer', Number.POSITIVE_INFINITY, fn, undefined, origin);
    const imp = await asked(() => createImport(deps, account, 'csv'));
    const exp = await asked(() => createExport(deps, account));

    const pendingIn = (doc: { outbox?: object; outbox_pending?: boolean } | null) => {
      expect(doc?.outbox_pending).toBe(true);
      return Object.values(doc?.outbox ?? {});
    };
    expect(pendingIn(await store.models.Import.findById(imp._id).lean<ImportDoc>())).toEqual([
      expect.objectContaining({
        id: expect.stringMatching(/^evt_/),
        type: 'import.created',
        account_id: account,
        request_id: 'req_transfer',
        origin,
        data: { import: { id: imp._id, format: 'csv' } },
      }),
    ]);
    expect(pendingIn(await store.models.Export.findById(exp._id).lean<ExportDoc>())).toEqual([
      expect.objectContaining({
        type: 'export.created',
        account_id: account,
        origin,
        data: { export: { id: exp._id } },
      }),
    ]);
    expect(outbox.flushed).toEqual([
      { model: 'Import', id: imp._id },
      { model: 'Export', id: exp._id },
    ]);
  });
});

it("accounts' imports are taken in turn: a small one is done long before a big one started earlier", async () => {
  const big = accountOf('H');
  const small = accountOf('J');
  const clock = new FakeClock(new Date().toISOString());
  const finished: string[] = [];
  const watching = Object.create(store) as ImportStore;
  watching.checkpoint = async (id, epoch, set) => {
    if (set.state === 'done') finished.push(id);
    return store.checkpoint(id, epoch, set);
  };
  const bigDeps = depsFor(big, clock, productsOf(big), watching);
  const bigId = await upload(
    bigDeps,
    big,
    Array.from({ length: 3000 }, (_, i) =>
      row(big, `turns-big-${String(i).padStart(5, '0')}-${bigDeps.clock.now().getTime()}`),
    ),
  );
  clock.advance(1000);
  const smallDeps = depsFor(small, clock, productsOf(small), watching);
  const smallId = await upload(smallDeps, small, [row(small, keyOf('turns-small'))]);

  // One runner for both accounts (each import knows its account; the products fake answers for both).
  const products: ProductAdmin = {
    getProduct: async (req) => productOf(req.account_id),
    listProducts: async (req) => ({ data: [productOf(req.account_id)], page: { has_more: false, next_cursor: '' } }),
    createProduct: async () => {
      throw new Error('not expected');
    },
  };
  await new ImportRunner({ ...bigDeps, products }, log).pass();
  expect(finished.filter((id) => id === bigId || id === smallId)).toEqual([smallId, bigId]);
  expect(await getImport(bigDeps, big, bigId)).toMatchObject({ state: 'done', imported: 3000 });
  expect(await getImport(smallDeps, small, smallId)).toMatchObject({ state: 'done', imported: 1 });
});

describe('keys held by another account', () => {
  const holder = accountOf('K');
  const held = Array.from({ length: 21 }, (_, i) => `held-elsewhere-${i}-${randomBytes(4).toString('hex')}`);

  beforeAll(async () => {
    const clock = new FakeClock(new Date().toISOString());
    const deps = depsFor(holder, clock);
    const id = await upload(
      deps,
      holder,
      held.map((k) => row(holder, k)),
    );
    await new ImportRunner(deps, log).pass();
    expect(await getImport(deps, holder, id)).toMatchObject({ state: 'done', imported: held.length });
  });

  it('are refused with one message that says nothing of that account; 20 such rows are borne', async () => {
    const account = accountOf('L');
    const clock = new FakeClock(new Date().toISOString());
    const deps = depsFor(account, clock);
    const id = await upload(deps, account, [
      ...held.slice(0, 20).map((k) => row(account, k)),
      row(account, keyOf('own')),
    ]);
    await new ImportRunner(deps, log).pass();
    const done = await getImport(deps, account, id);
    expect(done).toMatchObject({ state: 'done', imported: 1, rejected: 20, refused_keys: 20 });
    expect(new Set(done.row_errors.map((e) => e.message))).toEqual(new Set([KEY_REFUSED]));
  });

  it('more than 20 such rows in one import fail it', async () => {
    const account = accountOf('M');
    const clock = new FakeClock(new Date().toISOString());
    const deps = depsFor(account, clock);
    const id = await upload(deps, account, [row(account, keyOf('own')), ...held.map((k) => row(account, k))]);
    await new ImportRunner(deps, log).pass();
    const failed = await getImport(deps, account, id);
    expect(failed).toMatchObject({
      state: 'failed',
      rejected: 21,
      refused_keys: 21,
      failure: `more than 20 rows were refused their key ("${KEY_REFUSED}"): the import is stopped (the rows before stay imported)`,
    });
    expect(await store.models.ImportChunk.countDocuments({ owner_id: id })).toBe(0);
  });
});
