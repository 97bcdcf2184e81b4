import { emailListOf, eraseFromItems } from '../../domain/erasure';
import type { TransferErasure } from '../../use-cases/license-core';
import type { LicenseBatchStore } from '../store/batches';
import type { ImportStore } from '../store/imports';
import { deleteExportFile, type ExportFiles } from './exports';

// An erasure of a customer (the licence core's use-cases/erase-customer.ts) reaches what the transfer
// module holds through this: the items of licence batches and the files of finished exports.

/** Licence batches read at a time: each carries up to 1,000 items. */
const BATCHES_AT_ONCE = 20;
/** Finished exports read at a time (an account has a few: each is downloadable for 24 hours). */
const EXPORTS_AT_ONCE = 20;

/** What an erasure needs of the export files' store. */
export type ExportErasure = ExportFiles & Pick<ImportStore, 'finishedExports'>;

/** What an erasure needs of the licence batches' store. */
export type BatchErasure = Pick<
  LicenseBatchStore,
  'batchesWithoutEmailList' | 'giveEmailList' | 'batchesOfCustomer' | 'replaceItemEmails'
>;

/** The table the licence core's erasure calls. */
export function transferErasure(batches: BatchErasure, exports: ExportErasure): TransferErasure {
  return {
    eraseFromBatches: (accountId, email, placeholder) => eraseFromBatches(batches, accountId, email, placeholder),
    deleteFinishedExports: (accountId, now) => deleteFinishedExports(exports, accountId, now),
  };
}

/**
 * The e-mail replaced in the items of the account's batches; how many batches changed. Batches are found
 * on (account_id, customer_emails_lc); those stored before that list existed are given it first, in
 * bounded reads: the first erasure of an account reads its older batches once, and after that none.
 */
async function eraseFromBatches(
  batches: BatchErasure,
  accountId: string,
  email: string,
  placeholder: string,
): Promise<number> {
  for (let after = ''; ; ) {
    const older = await batches.batchesWithoutEmailList(accountId, after, BATCHES_AT_ONCE);
    for (const b of older) await batches.giveEmailList(b._id, emailListOf(b.items));
    if (older.length < BATCHES_AT_ONCE) break;
    after = older[older.length - 1]._id;
  }
  let changed = 0;
  for (let after = ''; ; ) {
    const found = await batches.batchesOfCustomer(accountId, email, after, BATCHES_AT_ONCE);
    for (const b of found) {
      const next = eraseFromItems(b.items, email, placeholder);
      // Listed but no item holds it (written back by a run): the list is corrected all the same.
      if (await batches.replaceItemEmails(b._id, email, next?.items ?? b.items, next?.emails ?? emailListOf(b.items)))
        changed++;
    }
    if (found.length < BATCHES_AT_ONCE) break;
    after = found[found.length - 1]._id;
  }
  return changed;
}

/**
 * Deletes the files of the account's finished exports: reading a file for the e-mail would mean reading up
 * to 2 GiB, and it is there for 24 hours only. Each leaves `done`, so the next read finds the ones after it.
 */
async function deleteFinishedExports(exports: ExportErasure, accountId: string, now: Date): Promise<void> {
  for (;;) {
    const found = await exports.finishedExports(accountId, EXPORTS_AT_ONCE);
    for (const doc of found) await deleteExportFile(exports, doc, now);
    if (found.length < EXPORTS_AT_ONCE) return;
  }
}
