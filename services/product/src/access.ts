import type { ProductServiceService } from '@licensing/proto';
import type { AccessPolicyOf } from '@licensing/runtime';

/**
 * Who may call what on the product service: the gateway everything but signing (products, their keys
 * and their releases); the licence and checkout services only read products (and the licence service
 * signs licence files).
 */
export const productAccess: AccessPolicyOf<typeof ProductServiceService> = {
  gateway: [
    'createProduct',
    'getProduct',
    'listProducts',
    'updateProduct',
    'listSigningKeys',
    'rotateSigningKey',
    'createRelease',
    'getRelease',
    'listReleases',
    'publishRelease',
    'yankRelease',
    'deleteRelease',
  ],
  // Imports match products by name and create the missing ones.
  license: ['getProduct', 'signPayload', 'listProducts', 'createProduct'],
  checkout: ['getProduct'],
  // The product's name and email_on_purchase, for the purchase e-mail.
  notification: ['getProduct'],
  // The web component's dashboard: the products and their signing keys.
  web: ['createProduct', 'getProduct', 'listProducts', 'updateProduct', 'listSigningKeys', 'rotateSigningKey'],
};
