import { AppError, pageInOrder } from '@licensing/runtime';
import type { ListReleasesRequest, PageInfo } from '@licensing/proto';
import { checkChannelFilter, checkStatusFilter } from '../domain/release';
import { newestFirst } from '../domain/release-version';
import type { ReleaseDoc, ReleaseStore } from '../store/releases';
import type { ReleaseDeps } from './deps';
import { findProduct } from './read-products';

/** A release of this account; another account's is not found, the same as one that does not exist. */
export async function findRelease(store: ReleaseStore, accountId: string, id: string): Promise<ReleaseDoc> {
  const doc = await store.find(accountId, id);
  if (!doc) throw AppError.notFound('release');
  return doc;
}

/**
 * A product's releases, newest version first, filtered by channel and status, a page at a time. The
 * order is by version precedence, which no index holds, so the product's whole list is read (only
 * what orders and filters it; a product has at most releaseLimits.per_product releases) and paged in
 * memory; then the page's releases are read whole.
 */
export async function listReleases(
  { releases, products }: ReleaseDeps,
  req: ListReleasesRequest,
): Promise<{ items: ReleaseDoc[]; page: PageInfo }> {
  const channel = checkChannelFilter(req.channel);
  const status = checkStatusFilter(req.status);
  await findProduct(products, req.account_id, req.product_id);
  const ordered = newestFirst(await releases.summaries(req.account_id, req.product_id));
  const found = pageInOrder(
    ordered,
    (r) => r._id,
    req.page,
    (r) => (!channel || r.channel === channel) && (!status || r.status === status),
  );
  if (!found) throw AppError.invalid('starting_after', 'starting_after is no release of this product (deleted since?)');
  const docs = new Map(
    (
      await releases.byIds(
        req.account_id,
        found.items.map((r) => r._id),
      )
    ).map((d) => [d._id, d]),
  );
  // A draft deleted between the two reads is left out of its page.
  return { items: found.items.flatMap((r) => docs.get(r._id) ?? []), page: found.page };
}
