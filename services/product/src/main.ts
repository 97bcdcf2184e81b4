import { LicenseServiceClient, ProductServiceService } from '@licensing/proto';
import {
  createClient,
  internalCredential,
  runMain,
  startService,
  type ServiceRecipe,
  type StartOptions,
} from '@licensing/runtime';
import { productSchema, type ProductConfig } from './config';
import { productHandlers } from './handlers/product-handlers';
import { releaseHandlers } from './handlers/release-handlers';
import { signingHandlers } from './handlers/signing-handlers';
import { uploadGrantHandlers } from './handlers/upload-grant-handlers';
import { masterKey } from './domain/signing';
import { SigningKeyStore, signingKeyModel } from './store/signing-keys';
import { productDeletionModel, productModel } from './store/models';
import { ProductDeletionStore } from './store/deletions';
import { ProductStore } from './store/queries';
import { ReleaseStore, releaseModel } from './store/releases';
import { UploadGrantStore, uploadGrantModel } from './store/upload-grants';
import { SigningKeys } from './use-cases/signing-keys';
import { productAccess } from './access';
import { resealSigningKeys } from './jobs/reseal';

export const productService: ServiceRecipe<typeof productSchema> = {
  name: 'product',
  schema: productSchema,
  async setup(ctx) {
    const store = new ProductStore(productModel(ctx.db));
    ctx.outbox.track(store.Product);
    const releases = new ReleaseStore(releaseModel(ctx.db));
    ctx.outbox.track(releases.Release);
    const grants = new UploadGrantStore(uploadGrantModel(ctx.db));
    const keys = new SigningKeyStore(signingKeyModel(ctx.db));
    const deletions = new ProductDeletionStore(productDeletionModel(ctx.db));
    ctx.outbox.track(deletions.Deletion);
    // Asked only when a product is deleted: whether it has licences (the licence service owns them).
    const licenses = createClient(
      LicenseServiceClient,
      ctx.config.LICENSE_GRPC_ADDR,
      internalCredential('product', ctx.config, ctx.tracing),
    );
    const signing = new SigningKeys({
      products: store,
      keys,
      master: masterKey(ctx.config.SIGNING_KEY_SECRET),
      clock: ctx.clock,
    });
    ctx.grpc.add(
      ProductServiceService,
      {
        ...productHandlers({
          store,
          outbox: ctx.outbox,
          clock: ctx.clock,
          releases,
          keys,
          deletions,
          licenses: licenses.call,
        }),
        ...signingHandlers(signing),
        ...releaseHandlers({ releases, products: store, outbox: ctx.outbox, clock: ctx.clock }),
        ...uploadGrantHandlers({ grants, releases, clock: ctx.clock }),
      },
      productAccess,
    );
    return async () => licenses.close();
  },
  jobs: {
    // `npm run admin -- reseal --service product`: moves every signing key to SIGNING_KEY_SECRET's current key.
    async reseal(ctx) {
      const keyring = masterKey(ctx.config.SIGNING_KEY_SECRET);
      const report = await resealSigningKeys(signingKeyModel(ctx.db), keyring, ctx.progress);
      return { key_id: keyring.currentId, ...report };
    },
  },
};

export const start = (opts?: StartOptions<ProductConfig>) => startService(productService, opts);

if (require.main === module) runMain('product-service', () => start());
