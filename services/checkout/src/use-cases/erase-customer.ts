import { AppError, checkEmail } from '@licensing/runtime';
import { EMAIL_MAX_LENGTH } from '@licensing/proto';
import type { CheckoutStore } from '../store/queries';
import type { SubscriptionStore } from '../store/subscriptions';

/** What an erasure needs of the sessions' store. */
export type SessionErasure = Pick<
  CheckoutStore,
  'sessionsWithoutLowerCaseEmail' | 'giveLowerCaseEmail' | 'sessionsOfCustomer' | 'replaceCustomerEmail'
>;
/** What an erasure needs of the subscriptions' store. */
export type SubscriptionErasure = Pick<SubscriptionStore, 'subscriptionsOfCustomer' | 'replaceCustomerEmail'>;

/** Sessions read per batch: each batch is one indexed read. */
const BATCH = 200;

/**
 * Replaces a customer's e-mail on the account's checkout sessions and subscriptions with the placeholder
 * (the gateway's DELETE /api/v1/customers/{email}); the number of sessions and subscriptions changed.
 * Idempotent: a second call finds none. No event: a session's or subscription's events were published
 * when they happened, and nothing caches them (a subscription's later events name the placeholder).
 * Subscriptions always had customer_email_lc (their list filters on it), so they are found on its index.
 *
 * Sessions are found on (account_id, customer_email_lc). Those stored before that field existed are
 * given it first, in bounded batches: the first erasure of an account reads its older sessions once,
 * and after that there are none.
 */
export async function eraseCustomer(
  { sessions: store, subscriptions }: { sessions: SessionErasure; subscriptions: SubscriptionErasure },
  req: { account_id: string; email: string; placeholder: string },
): Promise<number> {
  const email = req.email.trim().toLowerCase();
  if (!email || email.length > EMAIL_MAX_LENGTH)
    throw AppError.invalid('email', `email must be an e-mail address of at most ${EMAIL_MAX_LENGTH} characters`);
  const placeholder = checkEmail('placeholder', req.placeholder);
  if (placeholder.toLowerCase().includes(email))
    throw AppError.invalid('placeholder', 'the placeholder must not contain the e-mail');

  for (let after = ''; ; ) {
    const older = await store.sessionsWithoutLowerCaseEmail(req.account_id, after, BATCH);
    for (const s of older) await store.giveLowerCaseEmail(s._id, s.customer_email ?? '');
    if (older.length < BATCH) break;
    after = older[older.length - 1]._id;
  }

  let erased = 0;
  for (let after = ''; ; ) {
    const ids = await store.sessionsOfCustomer(req.account_id, email, after, BATCH);
    for (const id of ids) if (await store.replaceCustomerEmail(id, email, placeholder)) erased++;
    if (ids.length < BATCH) break;
    after = ids[ids.length - 1];
  }
  for (let after = ''; ; ) {
    const ids = await subscriptions.subscriptionsOfCustomer(req.account_id, email, after, BATCH);
    for (const id of ids) if (await subscriptions.replaceCustomerEmail(id, email, placeholder)) erased++;
    if (ids.length < BATCH) break;
    after = ids[ids.length - 1];
  }
  return erased;
}
