import type { CallOptions, Clock, Outbox } from '@licensing/runtime';
import type { GetProductRequest, Product } from '@licensing/proto';
import type { LicenseCache, RetiredKeyLookup } from '../caches/license-cache';
import type { LicenseDoc } from '../store/models';
import type { LicenseStore } from '../store/queries';

export interface ProductLookup {
  getProduct(req: GetProductRequest, opts?: CallOptions): Promise<Product>;
  /** The product as stored now, past any memory (the product cache has it; the gRPC client is always fresh). */
  getFreshProduct?(req: GetProductRequest, opts?: CallOptions): Promise<Product>;
}

/** What the licence use cases work with; main.ts gives the real ones, unit tests fakes. */
export interface LicenseDeps {
  store: LicenseStore;
  /** Publishes at once the events a write recorded (the relay retries what this misses). */
  outbox: Pick<Outbox, 'flush'>;
  clock: Clock;
  /** The product service (through the product cache): a licence takes its product's policy, and answers with its current entitlements. */
  products: ProductLookup;
  /**
   * This instance's licence cache (exact through license.* events), where a hot path may read a licence
   * instead of the store: the heartbeat. Absent: the store is read.
   */
  licenses?: Pick<LicenseCache, 'read'>;
  /** Keys replaced by rerolls (store/retired-keys.ts): a licence credential still in its grace resolves. */
  retired?: RetiredKeyLookup;
}

/** A licence as written, and the moment it was (its effective status is derived from that moment). */
export interface LicenseAt {
  doc: Omit<LicenseDoc, 'outbox'>;
  now: Date;
}
