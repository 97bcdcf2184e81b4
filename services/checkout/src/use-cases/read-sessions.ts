import { AppError, isId } from '@licensing/runtime';
import { checkoutStatuses, isOneOf, type PageRequest } from '@licensing/proto';
import { asSeenAt } from '../domain/session';
import type { SessionDoc } from '../store/models';
import type { CheckoutStore } from '../store/queries';
import type { CheckoutDeps } from './deps';

/** A session of this account as stored; a malformed id or another account's is not found. */
export async function findSession(store: CheckoutStore, accountId: string, id: string): Promise<SessionDoc> {
  const s = isId('cs', id) ? await store.find(accountId, id) : null;
  if (!s) throw AppError.notFound('checkout session');
  return s;
}

/** The session as the caller sees it now (past its expiry it reads as expired). */
export async function getSession({ store, clock }: CheckoutDeps, accountId: string, id: string): Promise<SessionDoc> {
  return asSeenAt(await findSession(store, accountId, id), clock.now());
}

/** One page of the account's sessions, optionally of one status, as seen now. */
export async function listSessions(
  { store, clock }: CheckoutDeps,
  accountId: string,
  status: string,
  page: PageRequest | undefined,
) {
  const wanted = isOneOf(checkoutStatuses, status) ? status : '';
  if (status && !wanted) throw AppError.invalid('status', `status must be one of ${checkoutStatuses.join(', ')}`);
  const now = clock.now();
  const { items, page: next } = await store.list(accountId, wanted, page, now);
  return { items: items.map((s) => asSeenAt(s, now)), page: next };
}
