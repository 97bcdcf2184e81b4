import type { Clock, Outbox } from '@licensing/runtime';
import type { ProductStore } from '../store/queries';

/** What the product use cases work with; main.ts gives the real ones, unit tests fakes. */
export interface ProductDeps {
  store: ProductStore;
  /** Publishes at once the events a write recorded (the relay retries what this misses). */
  outbox: Pick<Outbox, 'flush'>;
  clock: Clock;
}
