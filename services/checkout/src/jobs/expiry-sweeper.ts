import type { Clock, Outbox } from '@licensing/runtime';
import type { CheckoutStore } from '../store/queries';
import type { Completion } from '../use-cases/completion';
import { checkoutExpired } from '../events/checkout-events';

/**
 * Expired hosted-page form tokens deleted per sweep, in batches: a bound on one sweep's work (and its
 * time holding the store), while far above what the per-address page throttle lets visitors create
 * between two sweeps (every 30 s by default), so the collection cannot outgrow the pruning.
 */
export const PAGE_TOKEN_PRUNE_BATCH = 500;
export const PAGE_TOKEN_PRUNE_BATCHES = 20;

/**
 * Marks open sessions past their expiry as expired (checkout.expired once
 * each), finishes sessions that were paid but whose licence was not yet
 * issued (a crash between the two), and forgets expired page tokens, old
 * webhook signatures and refunds of payments that never became ours. main.ts runs sweep() as a PeriodicTask.
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
    await this.store.pruneExpiredPendingRefunds(now);
    await this.prunePageTokens(now);
    return n + (await this.completion.finishPaid());
  }

  /** Up to PAGE_TOKEN_PRUNE_BATCHES batches of expired form tokens; the rest (if any) next time. */
  async prunePageTokens(now: Date): Promise<number> {
    let pruned = 0;
    for (let batch = 0; batch < PAGE_TOKEN_PRUNE_BATCHES; batch++) {
      const n = await this.store.prunePageTokens(now, PAGE_TOKEN_PRUNE_BATCH);
      pruned += n;
      if (n < PAGE_TOKEN_PRUNE_BATCH) break;
    }
    return pruned;
  }
}
