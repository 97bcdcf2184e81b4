import { randomBytes } from 'node:crypto';
import type { Connection } from 'mongoose';
import { connectMongo, newId, syncIndexes } from '@licensing/runtime';
import { batchModels, LicenseBatchStore } from '../../src/transfer/store/batches';
import { licenseModels } from '../../src/store/models';
import { LicenseStore } from '../../src/store/queries';
import { BulkLicenses } from '../../src/store/bulk-licenses';
import { licenseCore } from '../../src/use-cases/license-core';
import { type ExportDoc, ImportStore, importModels } from '../../src/transfer/store/imports';
import { eraseCustomer } from '../../src/use-cases/erase-customer';
import { transferErasure } from '../../src/transfer/use-cases/erasure';
import {
  dropExpiredExports,
  EXPIRED_EXPORTS_PER_PASS,
  readExportChunk,
  type ExportDeps,
} from '../../src/transfer/use-cases/exports';
import { FakeClock, RecordingOutbox } from '../../../../test/support/fakes/common';

// Export files are deleted once past their 24 hours, however many there are (each pass takes the next
// ones: a deleted file's export is stored `expired` and never read again), and an erasure of a customer
// deletes the files of the account's finished exports, which may hold the customer's e-mail. On FerretDB.

const accountA = 'acct_01JD8Z3K6Q2W4E5R6T7Y8V9XAA';
const accountB = 'acct_01JD8Z3K6Q2W4E5R6T7Y8V9XBB';
const HOUR = 3600_000;

let db: Connection;
let imports: ImportStore;
let licenses: ReturnType<typeof licenseModels>;

beforeAll(async () => {
  db = await connectMongo(process.env.TEST_MONGO_URL!, `t_export_files_${randomBytes(3).toString('hex')}`);
  imports = new ImportStore(importModels(db));
  licenses = licenseModels(db);
  await syncIndexes(db);
});

afterAll(async () => {
  await db?.dropDatabase().catch(() => undefined);
  await db?.close();
});

/** A finished export of one piece holding `line`, whose file expires at `expiresAt`. */
async function finishedExport(accountId: string, expiresAt: Date, line: string): Promise<ExportDoc> {
  const finished = new Date(expiresAt.getTime() - 24 * HOUR);
  const doc: ExportDoc = {
    _id: newId('exp'),
    account_id: accountId,
    state: 'done',
    chunks: 1,
    bytes: Buffer.byteLength(line),
    counts: { license: 1 },
    failure: '',
    lease_until: null,
    created_at: finished,
    updated_at: finished,
    finished_at: finished,
    expires_at: expiresAt,
  };
  await imports.createExport(doc);
  await imports.putChunk(doc._id, 0, Buffer.from(line), true);
  return doc;
}

const piecesOf = (ids: string[]) => imports.models.ExportChunk.countDocuments({ owner_id: { $in: ids } }).exec();
const statesOf = async (ids: string[]) =>
  (
    await imports.models.Export.find({ _id: { $in: ids } }, { state: 1 })
      .lean<ExportDoc[]>()
      .exec()
  ).map((d) => d.state);

it('deletes the file of every export past its 24 hours, more than one pass takes, and none of the others', async () => {
  const clock = new FakeClock(new Date().toISOString());
  const now = clock.now();
  const expired: string[] = [];
  for (let i = 0; i < EXPIRED_EXPORTS_PER_PASS + 5; i++)
    expired.push((await finishedExport(accountB, new Date(now.getTime() - HOUR - i), '{"type":"product"}\n'))._id);
  const fresh = await finishedExport(accountB, new Date(now.getTime() + HOUR), '{"type":"product"}\n');
  const deps = { imports, clock } as unknown as ExportDeps;

  const passes: number[] = [];
  for (let pass = 0; pass < 5; pass++) passes.push(await dropExpiredExports(deps));
  expect(passes).toEqual([EXPIRED_EXPORTS_PER_PASS, 5, 0, 0, 0]);
  expect(await piecesOf(expired)).toBe(0);
  expect(new Set(await statesOf(expired))).toEqual(new Set(['expired']));
  // The one still within its 24 hours keeps its file and downloads.
  expect(await piecesOf([fresh._id])).toBe(1);
  expect((await readExportChunk(deps, accountB, fresh._id, 0)).toString()).toBe('{"type":"product"}\n');
  // An expired one is gone: 404, not a piece.
  await expect(readExportChunk(deps, accountB, expired[0], 0)).rejects.toMatchObject({ code: 'not_found' });
}, 120_000);

it("an erasure of a customer deletes the files of the account's finished exports, and no other account's", async () => {
  const clock = new FakeClock(new Date().toISOString());
  const later = new Date(clock.now().getTime() + 20 * HOUR);
  const line = '{"type":"license","customer_email":"bob@example.com"}\n';
  const ofA = [await finishedExport(accountA, later, line), await finishedExport(accountA, later, line)];
  const ofB = await finishedExport(accountB, later, line);
  const store = new LicenseStore(licenses);
  const erasing = {
    store,
    outbox: new RecordingOutbox(),
    clock,
    transfer: transferErasure(new LicenseBatchStore(batchModels(db)), imports),
  };

  await eraseCustomer(erasing, {
    account_id: accountA,
    email: 'Bob@example.com',
    placeholder: 'erased-1@erased.invalid',
  });

  expect(await piecesOf(ofA.map((d) => d._id))).toBe(0);
  expect(await statesOf(ofA.map((d) => d._id))).toEqual(['expired', 'expired']);
  const deps = {
    imports,
    clock,
    licenses: licenseCore({ bulk: new BulkLicenses(store.models), outbox: new RecordingOutbox() }),
  } as unknown as ExportDeps;
  await expect(readExportChunk(deps, accountA, ofA[0]._id, 0)).rejects.toMatchObject({ code: 'not_found' });
  // Another account's customer of that address is not this account's: its export stays.
  expect(await piecesOf([ofB._id])).toBe(1);
  expect(await statesOf([ofB._id])).toEqual(['done']);
});
