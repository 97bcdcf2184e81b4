import type { Clock, Outbox } from '@licensing/runtime';
import type { ProductStore } from '../store/queries';
import type { ReleaseStore } from '../store/releases';
import type { UploadGrantStore } from '../store/upload-grants';

/** What the product use cases work with; main.ts gives the real ones, unit tests fakes. */
export interface ProductDeps {
  store: ProductStore;
  /** Publishes at once the events a write recorded (the relay retries what this misses). */
  outbox: Pick<Outbox, 'flush'>;
  clock: Clock;
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
