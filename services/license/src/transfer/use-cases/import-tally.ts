import { accountLimits } from '@licensing/proto';
import { MAX_IMPORT_ERRORS } from '../domain/import-rows';
import type { ImportDoc } from '../store/imports';

/**
 * What a row whose key another account holds (or held, before a reroll) is told: the same words
 * whichever it is, and nothing about that account.
 */
export const KEY_REFUSED =
  'key refused: keys are unique across the whole system, and this one cannot be given to this account';
/**
 * Rows of one import refused so (KEY_REFUSED) beyond which the import fails: an honest file of an
 * account's own keys has next to none, and trying keys one by one is not a way to learn which exist.
 */
export const MAX_REFUSED_KEYS = accountLimits.import_refused_keys;

/** An import's counts as its checkpoint stores them. */
export type TallyFields = Pick<ImportDoc, 'imported' | 'skipped' | 'rejected' | 'row_errors' | 'checkpoint_row'> & {
  row_notices: NonNullable<ImportDoc['row_notices']>;
  refused_keys: number;
};

/**
 * The counts of one import run: what each row came to. A batch's rejections and notices are kept apart
 * and added to the import's in row order when the batch is closed (rows are settled out of order:
 * new keys first, then those already stored).
 */
export class ImportTally {
  readonly fields: TallyFields;
  private batchErrors: { row: number; message: string }[] = [];
  private batchNotices: { row: number; message: string }[] = [];

  constructor(doc: ImportDoc) {
    this.fields = {
      imported: doc.imported,
      skipped: doc.skipped,
      rejected: doc.rejected,
      row_errors: [...doc.row_errors],
      row_notices: [...(doc.row_notices ?? [])],
      checkpoint_row: doc.checkpoint_row,
      refused_keys: doc.refused_keys ?? 0,
    };
  }

  imported(): void {
    this.fields.imported++;
  }

  skipped(): void {
    this.fields.skipped++;
  }

  reject(row: number, message: string): void {
    this.fields.rejected++;
    this.batchErrors.push({ row, message });
  }

  /** A row skipped for a reason, or imported with a change. */
  notice(row: number, message: string): void {
    this.batchNotices.push({ row, message });
  }

  /** A row refused for a key held elsewhere (KEY_REFUSED); past MAX_REFUSED_KEYS the import fails. */
  refuseKey(row: number): void {
    this.fields.refused_keys++;
    this.reject(row, KEY_REFUSED);
  }

  /** Whether the rows refused their key went past MAX_REFUSED_KEYS. */
  get tooManyRefusedKeys(): boolean {
    return this.fields.refused_keys > MAX_REFUSED_KEYS;
  }

  /** The batch's rejections and notices added in row order (the first MAX_IMPORT_ERRORS kept); the checkpoint moved past `last`. */
  closeBatch(last: number): void {
    for (const e of this.batchErrors.sort((a, b) => a.row - b.row))
      if (this.fields.row_errors.length < MAX_IMPORT_ERRORS) this.fields.row_errors.push(e);
    this.batchErrors = [];
    for (const n of this.batchNotices.sort((a, b) => a.row - b.row))
      if (this.fields.row_notices.length < MAX_IMPORT_ERRORS) this.fields.row_notices.push(n);
    this.batchNotices = [];
    this.fields.checkpoint_row = Math.max(this.fields.checkpoint_row, last);
  }
}
