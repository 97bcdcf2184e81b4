import type { ProductServiceService } from '@licensing/proto';
import type { AccessPolicyOf } from '@licensing/runtime';

/**
 * Who may call what on the product service: the gateway everything but signing and making upload grants
 * (products, archiving and deleting them, their keys, their releases and the releases' files, and
 * redeeming a grant to store its file); the licence and checkout services only read products (and the licence service signs licence
 * files); the web component's dashboard products, keys and releases, and the grants it hands browsers.
 */
export const productAccess: AccessPolicyOf<typeof ProductServiceService> = {
  gateway: [
    'createProduct',
    'getProduct',
    'listProducts',
    'updateProduct',
    // POST /api/v1/products/{id}/archive|unarchive, DELETE /api/v1/products/{id}.
    'archiveProduct',
    'unarchiveProduct',
    'deleteProduct',
    'listSigningKeys',
    'rotateSigningKey',
    'createRelease',
    'getRelease',
    'listReleases',
    'publishRelease',
    'yankRelease',
    'deleteRelease',
    // Release files: the gateway stores them, counts their downloads and serves the update feeds.
    'addArtifact',
    'recordDownload',
    'findReleases',
    // PUT /api/v1/uploads/{token}: the grant is the upload's only credential.
    'redeemUploadGrant',
  ],
  // Imports match products by name and create the missing ones.
  license: ['getProduct', 'signPayload', 'listProducts', 'createProduct'],
  checkout: ['getProduct'],
  // The product's name and email_on_purchase, for the purchase e-mail.
  notification: ['getProduct'],
  // The web component's dashboard: the products and their signing keys, their releases (a browser's
  // upload goes to the gateway with a grant made here), and the releases a licence may download.
  web: [
    'createProduct',
    'getProduct',
    'listProducts',
    'updateProduct',
    'archiveProduct',
    'unarchiveProduct',
    'deleteProduct',
    'listSigningKeys',
    'rotateSigningKey',
    'createRelease',
    'getRelease',
    'listReleases',
    'publishRelease',
    'yankRelease',
    'deleteRelease',
    'createUploadGrant',
    'findReleases',
  ],
};
