import { isId, type Handlers } from '@licensing/runtime';
import type { LicenseServiceService } from '@licensing/proto';
import type { ProductLookup } from '../use-cases/deps';
import { issuableProduct } from '../use-cases/product-sales';

type CreateLicense = Pick<Handlers<typeof LicenseServiceService>, 'createLicense'>;

/**
 * createLicense refusing (409) a new licence of an archived product, for every caller but the checkout
 * service: a session paid before its product was archived still gets its licence (the payment was
 * taken; new sessions of an archived product are refused where they are opened). A product id that is
 * no id is left to createLicense, which names the field (400). The product is read through the product
 * cache, which the issuance reads next anyway.
 */
export function refusingArchivedProducts<H extends CreateLicense>(handlers: H, products: ProductLookup): H {
  const issue = handlers.createLicense;
  return {
    ...handlers,
    async createLicense(req, call) {
      if (call.caller !== 'checkout' && isId('prod', req.product_id))
        await issuableProduct(products, req.account_id, req.product_id);
      return issue(req, call);
    },
  };
}
