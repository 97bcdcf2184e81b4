import type { Model } from 'mongoose';
import { recordShape } from './pagination';
import { postgresPagesOf } from './postgres';

// biome-ignore lint/suspicious/noExplicitAny: any collection with string ids and a date field
type AnyModel = Model<any>;

/**
 * Deletes up to `limit` documents whose date `field` is before `bound` and that match `also` (a clean-up
 * of expired tokens, sessions, telemetry): a pass costs the same however much is stored. On MongoDB, a
 * read of their ids on the field's index, then those ids. Over FerretDB's PostgreSQL, which passes
 * neither the range nor the `$in` down to SQL (each would decode the whole collection), one DELETE on
 * the field's B-tree (postgres/pages.ts deleteBelow; the model declares a single-field index on
 * `field`). How many went.
 */
export async function deleteBefore(
  model: AnyModel,
  field: string,
  bound: Date,
  limit: number,
  also: Record<string, unknown> = {},
): Promise<number> {
  const filter = { ...also, [field]: { $lt: bound } };
  const pages = postgresPagesOf(model.db);
  const deleted = pages ? await pages.deleteBelow(model.collection.collectionName, field, bound, limit, also) : null;
  if (deleted !== null) {
    recordShape(model, 'deleteMany', filter);
    return deleted;
  }
  const found = (await model.find(filter, { _id: 1 }).limit(limit).lean().exec()) as unknown as { _id: string }[];
  if (!found.length) return 0;
  const res = await model.deleteMany({ _id: { $in: found.map((d) => d._id) } });
  return res.deletedCount;
}

/** deleteBefore in batches of `batch` until none is left: how many went. */
export async function deleteAllBefore(
  model: AnyModel,
  field: string,
  bound: Date,
  batch: number,
  also: Record<string, unknown> = {},
): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await deleteBefore(model, field, bound, batch, also);
    total += n;
    if (n < batch) return total;
  }
}
