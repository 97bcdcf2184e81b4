import type { Clock, Outbox } from '@licensing/runtime';
import type { CheckoutStore } from '../store/queries';

/** What the session use cases work with; main.ts gives the real ones, unit tests fakes. */
export interface CheckoutDeps {
  store: CheckoutStore;
  /** Publishes at once the events a write recorded (the relay retries what this misses). */
  outbox: Pick<Outbox, 'flush'>;
  clock: Clock;
}
