import { AppError, isId, type Handlers } from '@licensing/runtime';
import type { LicenseServiceService } from '@licensing/proto';
import type { LicenseModels } from '../store/models';
import { productHasLicences } from '../store/product-licences';

/** What HasLicenses reads: the licences, the batches still issuing, and this instance's product cache. */
export interface ProductLicenceDeps {
  models: Pick<LicenseModels, 'License'>;
  /** Whether a licence batch of the product is still issuing (the transfer module's). */
  issuingFor(accountId: string, productId: string): Promise<boolean>;
  /** Forgets the product here, so the issuance that follows reads it afresh (archived, as the deletion made it). */
  products: { evict(accountId: string, productId: string): void };
}

// The product service's one question before it deletes a product: does it have licences (or a batch
// still making some)? Yes or no, nothing about them.
export function productLicenceHandlers(
  deps: ProductLicenceDeps,
): Pick<Handlers<typeof LicenseServiceService>, 'hasLicenses'> {
  return {
    async hasLicenses(req) {
      if (!req.account_id || req.account_id.length > 64) throw AppError.invalid('account_id', 'account_id is required');
      if (!isId('prod', req.product_id))
        throw AppError.invalid('product_id', 'product_id must be a product id (prod_…)');
      deps.products.evict(req.account_id, req.product_id);
      const [licences, issuing] = await Promise.all([
        productHasLicences(deps.models, req.account_id, req.product_id),
        deps.issuingFor(req.account_id, req.product_id),
      ]);
      return { has_licenses: licences || issuing };
    },
  };
}
