import { AppError } from '@licensing/runtime';
import { asSeenAt, checkExpire } from '../domain/session';
import type { PaymentProvider } from '../domain/payments';
import { checkoutExpired } from '../events/checkout-events';
import type { SessionDoc } from '../store/models';
import type { CheckoutDeps } from './deps';
import { findSession } from './read-sessions';

/** Ends an open session (checkout.expired once); an expired one is answered as it is, a complete one refused. */
export async function expireSession(
  { store, outbox, clock, provider }: CheckoutDeps & { provider: PaymentProvider },
  accountId: string,
  id: string,
): Promise<SessionDoc> {
  const s = await findSession(store, accountId, id);
  const now = clock.now();
  checkExpire(s, now);
  // Stripe's session is expired first, so the buyer can no longer pay there; if they just did, 409.
  if (
    s.status === 'open' &&
    s.provider === 'stripe' &&
    s.provider_session_id &&
    !(await provider.cancel(s.provider_session_id))
  ) {
    throw new AppError('conflict', 'the checkout session was just paid on Stripe: it cannot be expired');
  }
  if (s.status === 'open' && (await store.markExpired(s._id, checkoutExpired(s, now))))
    outbox.flush(store.models.Session, s._id);
  return asSeenAt(await findSession(store, accountId, id), now);
}
