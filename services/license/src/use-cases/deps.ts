import type { CallOptions, Clock, Outbox } from '@licensing/runtime';
import type { GetProductRequest, Product } from '@licensing/proto';
import type { LicenseDoc } from '../store/models';
import type { LicenseStore } from '../store/queries';

export interface ProductLookup {
  getProduct(req: GetProductRequest, opts?: CallOptions): Promise<Product>;
}

/** What the licence use cases work with; main.ts gives the real ones, unit tests fakes. */
export interface LicenseDeps {
  store: LicenseStore;
  /** Publishes at once the events a write recorded (the relay retries what this misses). */
  outbox: Pick<Outbox, 'flush'>;
  clock: Clock;
  /** The product service: a licence takes its product's policy. */
  products: ProductLookup;
}

/** A licence as written, and the moment it was (its effective status is derived from that moment). */
export interface LicenseAt {
  doc: Omit<LicenseDoc, 'outbox'>;
  now: Date;
}
