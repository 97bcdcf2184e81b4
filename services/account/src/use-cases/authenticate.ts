import { AppError } from '@licensing/runtime';
import { shouldTouchLastUsed } from '../domain/account';
import { candidateDigests, parseApiKey } from '../domain/api-key';
import type { AccountDoc, ApiKeyDoc } from '../store/models';
import type { AccountDeps } from './deps';

/** The account and live key an API key secret belongs to; last_used_at is touched at most once a minute. */
export async function authenticate(
  { store, clock, pepper, log }: AccountDeps,
  secret: string,
): Promise<{ account: AccountDoc; key: ApiKeyDoc }> {
  // Shape and checksum first: garbage never reaches the database.
  if (!parseApiKey(secret)) throw new AppError('unauthorized', 'the API key is malformed');
  // The current pepper first; older ones (a rotation under way) only when it finds nothing.
  let key: ApiKeyDoc | null = null;
  for (const candidate of candidateDigests(secret, pepper)) {
    key = await store.findKeyByDigest(candidate.digest);
    if (key) break;
  }
  if (!key || key.revoked_at) throw new AppError('unauthorized', 'the API key is unknown or revoked');
  const account = await store.findAccount(key.account_id);
  if (!account) throw new AppError('unauthorized', 'the API key is unknown or revoked');
  const now = clock.now();
  if (shouldTouchLastUsed(key.last_used_at, now)) {
    store.touchLastUsed(key._id, now).catch((err) => log.warn({ err }, 'could not record last_used_at'));
  }
  return { account, key };
}
