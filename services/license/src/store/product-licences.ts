import type { LicenseModels } from './models';
import { QUERY_MAX_MS } from './store-base';

/**
 * Whether the account has a licence of this product: one read of the (account_id, product_id, _id)
 * index, limited to one document (never a count). What the product service asks before it deletes a
 * product (HasLicenses); a deleted licence is gone and no longer counts.
 */
export async function productHasLicences(
  models: Pick<LicenseModels, 'License'>,
  accountId: string,
  productId: string,
): Promise<boolean> {
  const one = await models.License.findOne({ account_id: accountId, product_id: productId }, { _id: 1 })
    .maxTimeMS(QUERY_MAX_MS)
    .lean<{ _id: string }>()
    .exec();
  return one !== null;
}
