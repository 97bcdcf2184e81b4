import type { Model } from 'mongoose';

/**
 * At most this many statements in one update command. FerretDB 1.24 over PostgreSQL runs the
 * statements of an update command at once, each with PostgreSQL connections of its own, and past
 * about fifty of them every client of the store stalls: measured on a quiet machine, an update
 * command of 64 updates of existing documents had no answer after 20 s, and a read on another
 * connection waited as long (48 answered in 0.1 s; the outbox's own measure: 40 fine, 80 unfinished
 * after two minutes). A batch of 8 costs the same per statement as one of 48 (about 1–2 ms each), and
 * leaves room for the other services' commands on the same store. Real MongoDB has no such limit;
 * the cost is a few more round trips there.
 */
export const MAX_UPDATES_PER_COMMAND = 8;

// biome-ignore lint/suspicious/noExplicitAny: any model's documents
type AnyModel = Model<any>;

/** On the error of a bulkUpdate that failed part of the way: the statements before it were applied. */
const APPLIED = Symbol('statements applied before the failure');

/**
 * A bulk write of many updates (upserts included) as commands of MAX_UPDATES_PER_COMMAND statements,
 * one after another, unordered within each: for the writes whose count follows the traffic (a flush of
 * validation counts names every licence validated since the last). A failed command stops it with its
 * own error (so store-errors.ts still tells what it was), marked with how many statements, from the
 * first, the commands before it applied (appliedBefore), so a caller that retries keeps only the
 * rest (what the failed command itself applied is unknown, as for any unordered bulk write).
 */
export async function bulkUpdate(model: AnyModel, ops: Parameters<AnyModel['bulkWrite']>[0]): Promise<void> {
  for (let i = 0; i < ops.length; i += MAX_UPDATES_PER_COMMAND) {
    try {
      await model.bulkWrite(ops.slice(i, i + MAX_UPDATES_PER_COMMAND), { ordered: false });
    } catch (err) {
      if (err && typeof err === 'object') (err as { [APPLIED]?: number })[APPLIED] = i;
      throw err;
    }
  }
}

/** How many statements, from the first, a failed bulkUpdate applied (0 for any other error). */
export const appliedBefore = (err: unknown): number =>
  (err && typeof err === 'object' ? (err as { [APPLIED]?: number })[APPLIED] : undefined) ?? 0;
