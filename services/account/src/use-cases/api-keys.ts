import { AppError, isId, newId, untilUncontended } from '@licensing/runtime';
import { mayGrant, roleOfScope, type ApiKeyRole, type KeyScope, type PageRequest } from '@licensing/proto';
import { checkKeyName, checkKeyRole } from '../domain/account';
import { MAX_LIVE_KEYS, digestApiKey, generateApiKey } from '../domain/api-key';
import { apiKeyCreated, apiKeyRevoked } from '../events/api-key-events';
import type { ApiKeyDoc } from '../store/models';
import type { AccountDeps } from './deps';

/** A new key and its secret: the only time the secret is shown. */
export interface IssuedKey {
  key: Omit<ApiKeyDoc, 'outbox'>;
  secret: string;
}

/** Who did it, for the audit trail: a dashboard user's e-mail, or the operator CLI. */
const actorOf = (actor: string | undefined) => (actor ? actor.slice(0, 254) : 'operator');

// Always scoped to an account: a key id alone must never be enough to revoke someone's key.
const requireAccount = (accountId: string) => {
  if (!accountId)
    throw AppError.invalid('account_id', 'account_id is required: revocation is always scoped to an account');
  return accountId;
};

/**
 * Stores a new key (only its digest), with api_key.created in the same write, within the account's
 * cap of live keys (`maxLive`; conflict when it is reached).
 */
export async function issueKey(
  { store, outbox, clock, pepper }: AccountDeps,
  accountId: string,
  { scope, role }: { scope: KeyScope; role: ApiKeyRole },
  name: string,
  actor: string,
  maxLive = MAX_LIVE_KEYS,
): Promise<IssuedKey> {
  const now = clock.now();
  const { secret, visiblePrefix } = generateApiKey(scope);
  const doc = {
    _id: newId('key'),
    account_id: accountId,
    prefix: visiblePrefix,
    digest: digestApiKey(secret, pepper.current.pepper),
    pepper_id: pepper.current.id,
    scope,
    role,
    name,
    created_at: now,
    last_used_at: null,
    revoked_at: null,
    created_by: actor,
    revoked_by: null,
  };
  const stored = await untilUncontended(() => store.insertKey(doc, [apiKeyCreated(doc, now)], maxLive));
  if (stored === 'full')
    throw new AppError(
      'conflict',
      `this account already has ${MAX_LIVE_KEYS} live API keys, the most it may have; revoke one it no longer needs first`,
    );
  if (stored === 'contended')
    throw new AppError('conflict', 'other API keys are being created for this account at this moment; retry');
  outbox.flush(store.models.ApiKey, doc._id);
  return { key: stored, secret };
}

async function revoke(
  { store, outbox, clock }: AccountDeps,
  accountId: string,
  keyId: string,
  actor: string,
): Promise<ApiKeyDoc> {
  const now = clock.now();
  const revoked = await store.revokeKey(keyId, accountId, now, actor, (k) => apiKeyRevoked(k, now));
  if (revoked) {
    outbox.flush(store.models.ApiKey, revoked._id);
    return revoked;
  }
  // Already revoked is success (idempotent); absent or another account's is 404.
  const existing = await store.findKey(keyId, accountId);
  if (!existing) throw AppError.notFound('API key');
  return existing;
}

/** A new key of an existing account. */
export async function createApiKey(
  deps: AccountDeps,
  req: { account_id: string; scope: string; role?: string; name: string; actor?: string; actor_role?: string },
): Promise<IssuedKey> {
  const access = checkKeyRole(req, req.actor_role);
  const name = checkKeyName(req.name);
  if (!(await deps.store.findAccount(req.account_id))) throw AppError.notFound('account');
  return issueKey(deps, req.account_id, access, name, actorOf(req.actor));
}

/** Revokes a key of this account, with api_key.revoked; revoking it again answers it as it is. */
export async function revokeApiKey(
  deps: AccountDeps,
  req: { account_id: string; key_id: string; actor?: string; actor_role?: string },
): Promise<ApiKeyDoc> {
  const accountId = requireAccount(req.account_id);
  if (req.actor_role) {
    // A key or a member revokes only keys of a role it could give.
    const key = await deps.store.findKey(req.key_id, accountId);
    if (!key) throw AppError.notFound('API key');
    if (!mayGrant(req.actor_role, roleOfKey(key)))
      throw new AppError(
        'forbidden',
        `a key of role ${req.actor_role} cannot revoke a key of role ${roleOfKey(key)}: that role is above its own`,
      );
  }
  return revoke(deps, accountId, req.key_id, actorOf(req.actor));
}

/** A key's role: its own, or (made before keys had roles) its scope's. */
export const roleOfKey = (key: Pick<ApiKeyDoc, 'role' | 'scope'>): ApiKeyRole => key.role ?? roleOfScope(key.scope);

/** A new key with the old one's scope and name, then the old one revoked. */
export async function regenerateApiKey(
  deps: AccountDeps,
  req: { account_id: string; key_id: string; actor?: string },
): Promise<IssuedKey> {
  const accountId = requireAccount(req.account_id);
  const old = await deps.store.findKey(req.key_id, accountId);
  if (!old) throw AppError.notFound('API key');
  if (old.revoked_at) throw new AppError('conflict', 'this API key is already revoked; generate a new one instead');
  // New key first: if the revocation then fails, the caller has two keys, never none. So a
  // regeneration may take one place over the cap (the old key's), for as long as both are live.
  const fresh = await issueKey(
    deps,
    old.account_id,
    { scope: old.scope, role: roleOfKey(old) },
    old.name,
    actorOf(req.actor),
    MAX_LIVE_KEYS + 1,
  );
  await revoke(deps, accountId, old._id, actorOf(req.actor));
  return fresh;
}

/** One key of this account, by id (never by searching a page of them); another account's is not found. */
export async function getApiKey(
  { store }: Pick<AccountDeps, 'store'>,
  req: { account_id: string; key_id: string },
): Promise<ApiKeyDoc> {
  const accountId = requireAccount(req.account_id);
  const key = isId('key', req.key_id) ? await store.findKey(req.key_id, accountId) : null;
  if (!key) throw AppError.notFound('API key');
  return key;
}

/** Live keys (or, with `revoked`, revoked ones), newest first, a page at a time; with the live count and the cap. */
export async function listApiKeys(
  { store }: Pick<AccountDeps, 'store'>,
  accountId: string,
  page: PageRequest | undefined,
  revoked = false,
) {
  const [found, live] = await Promise.all([store.listKeys(accountId, page, revoked), store.countLiveKeys(accountId)]);
  return { ...found, live, max: MAX_LIVE_KEYS };
}

/** Revocations revoke-all runs at once (the store is shared with every other request). */
const REVOKE_ALL_PARALLEL = 10;

/**
 * Revokes every live key of the account, each with its own api_key.revoked (so every gateway evicts
 * each from its auth cache at once), page by page through all of them. A key created while this runs
 * may survive it (its id is past the pages already read). Answers how many this call revoked.
 */
export async function revokeAllApiKeys(
  deps: AccountDeps,
  req: { account_id: string; actor?: string },
): Promise<number> {
  const accountId = requireAccount(req.account_id);
  const { store, outbox, clock } = deps;
  if (!(await store.findAccount(accountId))) throw AppError.notFound('account');
  const actor = actorOf(req.actor);
  let revoked = 0;
  let cursor = '';
  for (;;) {
    const { items, page } = await store.listKeys(accountId, { limit: 100, starting_after: cursor });
    // A few at a time: each revocation is its own conditional write with its own event. Should one
    // fail, those before it stay revoked and calling this again revokes the rest.
    for (let i = 0; i < items.length; i += REVOKE_ALL_PARALLEL) {
      const now = clock.now();
      const done = await Promise.all(
        items
          .slice(i, i + REVOKE_ALL_PARALLEL)
          .map((k) => store.revokeKey(k._id, accountId, now, actor, (key) => apiKeyRevoked(key, now))),
      );
      for (const key of done) {
        if (!key) continue; // revoked meanwhile by someone else
        outbox.flush(store.models.ApiKey, key._id);
        revoked++;
      }
    }
    if (!page.has_more) return revoked;
    cursor = page.next_cursor;
  }
}
