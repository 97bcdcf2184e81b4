import type { FindReleasesRequest } from '@licensing/proto';
import { checkOfferQuery, isOffered, offered } from '../domain/release-offer';
import type { ReleaseDoc } from '../store/releases';
import type { ReleaseDeps } from './deps';
import { findProduct } from './read-products';

/**
 * The published releases of one of the account's products that a grant covers, newest version first:
 * what an update feed offers. Version order is in no index, so the product's published releases are
 * read (only what chooses among them; a product has at most releaseLimits.per_product releases), chosen
 * in memory, and then the chosen ones read whole.
 */
export async function findReleases(
  { releases, products }: ReleaseDeps,
  req: FindReleasesRequest,
): Promise<ReleaseDoc[]> {
  const query = checkOfferQuery(req);
  await findProduct(products, req.account_id, req.product_id);
  const chosen = offered(await releases.publishedOffers(req.account_id, req.product_id), query);
  const docs = new Map(
    (
      await releases.byIds(
        req.account_id,
        chosen.map((r) => r._id),
      )
    ).map((d) => [d._id, d]),
  );
  // A release yanked between the two reads is no longer offered.
  return chosen.flatMap((r) => {
    const doc = docs.get(r._id);
    return doc && isOffered(doc, query) ? [doc] : [];
  });
}
