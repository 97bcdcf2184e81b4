import type { ProductServiceService } from '@licensing/proto';
import type { AccessPolicyOf } from '@licensing/runtime';

/** Who may call what on the product service: the licence and checkout services only read products (and the licence service signs licence files). */
export const productAccess: AccessPolicyOf<typeof ProductServiceService> = {
  gateway: ['createProduct', 'getProduct', 'listProducts', 'updateProduct', 'listSigningKeys', 'rotateSigningKey'],
  // Imports match products by name and create the missing ones.
  license: ['getProduct', 'signPayload', 'listProducts', 'createProduct'],
  checkout: ['getProduct'],
  // The product's name and email_on_purchase, for the purchase e-mail.
  notification: ['getProduct'],
};
