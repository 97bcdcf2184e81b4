import type { CallOptions, Clock, Outbox } from '@licensing/runtime';
import type { HasLicensesRequest, HasLicensesResponse } from '@licensing/proto';
import type { ProductDeletionStore } from '../store/deletions';
import type { ProductStore } from '../store/queries';
import type { SigningKeyStore } from '../store/signing-keys';
import type { ReleaseStore } from '../store/releases';
import type { UploadGrantStore } from '../store/upload-grants';

/** What the product use cases work with; main.ts gives the real ones, unit tests fakes. */
export interface ProductDeps {
  store: ProductStore;
  /** Publishes at once the events a write recorded (the relay retries what this misses). */
  outbox: Pick<Outbox, 'flush'>;
  clock: Clock;
}

/** The licence service, asked whether a product has licences (it owns them; this service never reads them). */
export interface LicenceQuestion {
  hasLicenses(req: HasLicensesRequest, opts?: CallOptions): Promise<HasLicensesResponse>;
}

/** What archiving, unarchiving and deleting a product work with, besides the products. */
export interface ProductStateDeps extends ProductDeps {
  releases: Pick<ReleaseStore, 'hasAtLeast'>;
  keys: Pick<SigningKeyStore, 'removeOf'>;
  deletions: Pick<ProductDeletionStore, 'Deletion' | 'insert'>;
  licenses: LicenceQuestion;
}

/** What the release use cases work with: their store, and the products they belong to. */
export interface ReleaseDeps {
  releases: ReleaseStore;
  products: ProductStore;
  /** Publishes at once the events a write recorded (the relay retries what this misses). */
  outbox: Pick<Outbox, 'flush'>;
  clock: Clock;
}

/** What the upload grants work with: their store, and the releases they open to an upload. */
export interface UploadGrantDeps {
  grants: UploadGrantStore;
  releases: ReleaseStore;
  clock: Clock;
}
