import type { Model } from 'mongoose';
import type { PageRequest, PageInfo } from '@licensing/proto';
import { postgresPagesOf } from './postgres';

// biome-ignore lint/suspicious/noExplicitAny: any collection with string ids pages the same way
type AnyModel = Model<any>;

/**
 * Newest-first cursor pagination over time-ordered string ids: the cursor is
 * the last id of the previous page, so the next page is `_id < cursor`. One
 * extra row is read to know whether there is more.
 *
 * Over FerretDB with PostgreSQL (the development store) PostgreSQL picks the
 * page's ids from an index and the documents are read by _id (postgres/pages.ts),
 * because FerretDB itself would decode and sort every match; over MongoDB the
 * plain query is served by the declared index.
 */
export async function listPage<T extends { _id: string }>(
  model: AnyModel,
  filter: Record<string, unknown>,
  page: PageRequest | undefined,
): Promise<{ items: T[]; page: PageInfo }> {
  const limit = pageLimit(page);
  const query = page?.starting_after ? { ...filter, _id: { $lt: page.starting_after } } : filter;
  const found = (await viaPostgres<T>(model, query, limit)) ?? (await viaStore<T>(model, query, limit));
  return { items: found.items, page: { has_more: found.hasMore, next_cursor: found.hasMore ? found.last : '' } };
}

/** The size of the page a request asks for: 20 unless given, from 1 to 100 (every list's). */
export const pageLimit = (page: PageRequest | undefined): number => Math.min(Math.max(page?.limit || 20, 1), 100);

/**
 * A page of a list held in memory in an order that is not its ids' (a product's releases, newest
 * version first), with the same cursor as listPage: the id of the previous page's last item. The
 * cursor is looked for in `ordered`, the whole list before `keep` filters it, so an item that left the
 * filter since (a draft published meanwhile) still marks the place. Undefined: the cursor is in no
 * place of the list (its item was deleted since, or it names none of this list).
 */
export function pageInOrder<T>(
  ordered: readonly T[],
  idOf: (item: T) => string,
  page: PageRequest | undefined,
  keep: (item: T) => boolean = () => true,
): { items: T[]; page: PageInfo } | undefined {
  const limit = pageLimit(page);
  const from = page?.starting_after ? ordered.findIndex((item) => idOf(item) === page.starting_after) + 1 : 0;
  if (from === 0 && page?.starting_after) return undefined;
  const items: T[] = [];
  let hasMore = false;
  for (const item of ordered.slice(from)) {
    if (!keep(item)) continue;
    if (items.length === limit) {
      hasMore = true;
      break;
    }
    items.push(item);
  }
  return { items, page: { has_more: hasMore, next_cursor: hasMore ? idOf(items[items.length - 1]) : '' } };
}

/** One page: its documents, whether more follow, and the id the next page starts after. */
interface Found<T> {
  items: T[];
  hasMore: boolean;
  last: string;
}

async function viaStore<T extends { _id: string }>(
  model: AnyModel,
  query: Record<string, unknown>,
  limit: number,
): Promise<Found<T>> {
  const rows = (await model
    .find(query)
    .sort({ _id: -1 })
    .limit(limit + 1)
    .lean()) as unknown as T[];
  const items = rows.slice(0, limit);
  return { items, hasMore: rows.length > limit, last: items[items.length - 1]?._id ?? '' };
}

async function viaPostgres<T extends { _id: string }>(
  model: AnyModel,
  query: Record<string, unknown>,
  limit: number,
): Promise<Found<T> | null> {
  const pages = postgresPagesOf(model.db);
  if (!pages) return null;
  const ids = await pages.newestIds(model.collection.collectionName, query, limit + 1);
  if (!ids) return null;
  recordShape(model, 'find', query, { sort: { _id: -1 } });
  const window = ids.slice(0, limit);
  // Each read repeats the filter, so a document changed since PostgreSQL listed it is left out (as MongoDB
  // would); the cursor still moves past it, so the next page neither repeats nor skips anything.
  const docs = await Promise.all(
    window.map((id) => model.findOne({ ...query, _id: id }).lean() as unknown as Promise<T | null>),
  );
  return {
    items: docs.filter((d): d is NonNullable<typeof d> => d !== null),
    hasMore: ids.length > limit,
    last: window[window.length - 1] ?? '',
  };
}

/** How many documents match (countDocuments), counted by PostgreSQL where pages.ts can. */
export async function countMatching(model: AnyModel, filter: Record<string, unknown>): Promise<number> {
  const pages = postgresPagesOf(model.db);
  const counted = pages ? await pages.count(model.collection.collectionName, filter) : null;
  if (counted === null) return model.countDocuments(filter).exec();
  recordShape(model, 'countDocuments', filter);
  return counted;
}

/**
 * The query as the code means it, for the query-shape log (query-shapes.ts), which
 * sees only what reaches the store: in tests over PostgreSQL these queries never do,
 * and MongoDB must still have an index for them.
 */
export function recordShape(
  model: AnyModel,
  method: string,
  filter: Record<string, unknown>,
  options: object = {},
): void {
  const debug = model.db.get('debug') as unknown;
  if (typeof debug === 'function') debug(model.collection.collectionName, method, filter, options);
}
