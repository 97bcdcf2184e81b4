import type { Clock, Outbox } from '@licensing/runtime';
import type { CheckoutStore } from '../store/queries';
import type { Completion } from '../use-cases/completion';
import { checkoutExpired } from './checkout-events';

/**
 * Marks open sessions past their expiry as expired (checkout.expired once
 * each), and finishes sessions that were paid but whose licence was not yet
 * issued (a crash between the two). main.ts runs sweep() as a PeriodicTask.
 */
export class CheckoutExpirySweeper {
  constructor(
    private readonly store: CheckoutStore,
    private readonly outbox: Pick<Outbox, 'flush'>,
    private readonly clock: Clock,
    private readonly completion: Completion,
  ) {}

  async sweep(): Promise<number> {
    const now = this.clock.now();
    let n = 0;
    for (const s of await this.store.dueForExpiry(now, 200)) {
      if (await this.store.markExpired(s._id, checkoutExpired(s, now))) {
        this.outbox.flush(this.store.models.Session, s._id);
        n++;
      }
    }
    await this.store.pruneDeliveries(new Date(now.getTime() - 600_000));
    return n + (await this.completion.finishPaid());
  }
}
