import type { Model } from 'mongoose';
import type { PageRequest, PageInfo } from '@licensing/proto';

/**
 * Newest-first cursor pagination over time-ordered string ids: the cursor is
 * the last id of the previous page, so the next page is `_id < cursor`. One
 * extra row is read to know whether there is more.
 */
export async function listPage<T extends { _id: string }>(
  // biome-ignore lint/suspicious/noExplicitAny: any collection with string ids pages the same way
  model: Model<any>,
  filter: Record<string, unknown>,
  page: PageRequest | undefined,
): Promise<{ items: T[]; page: PageInfo }> {
  const limit = Math.min(Math.max(page?.limit || 20, 1), 100);
  const query = page?.startingAfter ? { ...filter, _id: { $lt: page.startingAfter } } : filter;
  const rows = (await model
    .find(query)
    .sort({ _id: -1 })
    .limit(limit + 1)
    .lean()) as unknown as T[];
  const hasMore = rows.length > limit;
  const items = hasMore ? rows.slice(0, limit) : rows;
  return { items, page: { hasMore, nextCursor: hasMore ? items[items.length - 1]._id : '' } };
}
