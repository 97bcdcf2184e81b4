import { AppError } from '@licensing/runtime';
import { shouldTouchLastUsed } from '../domain/account';
import { digestApiKey, parseApiKey } from '../domain/api-key';
import type { AccountDoc, ApiKeyDoc } from '../store/models';
import type { AccountDeps } from './deps';

/** The account and live key an API key secret belongs to; last_used_at is touched at most once a minute. */
export async function authenticate(
  { store, clock, pepper, log }: AccountDeps,
  secret: string,
): Promise<{ account: AccountDoc; key: ApiKeyDoc }> {
  // Shape and checksum first: garbage never reaches the database.
  if (!parseApiKey(secret)) throw new AppError('unauthorized', 'the API key is malformed');
  const key = await store.findKeyByDigest(digestApiKey(secret, pepper));
  if (!key || key.revoked_at) throw new AppError('unauthorized', 'the API key is unknown or revoked');
  const account = await store.findAccount(key.account_id);
  if (!account) throw new AppError('unauthorized', 'the API key is unknown or revoked');
  const now = clock.now();
  if (shouldTouchLastUsed(key.last_used_at, now)) {
    store.touchLastUsed(key._id, now).catch((err) => log.warn({ err }, 'could not record last_used_at'));
  }
  return { account, key };
}
