import { AppError, newId, type Handlers, type ServiceContext } from '@licensing/runtime';
import type { Account, ApiKey, AccountServiceService } from '@licensing/proto';
import {
  checkAccountName,
  checkKeyName,
  checkLimitOverride,
  checkPlan,
  checkScope,
  shouldTouchLastUsed,
} from '../domain/account';
import { digestApiKey, generateApiKey, parseApiKey, type Scope } from '../domain/api-key';
import { accountUpdated } from '../events/account-events';
import { apiKeyCreated, apiKeyRevoked } from '../events/api-key-events';
import type { AccountDoc, ApiKeyDoc } from '../store/models';
import type { AccountStore } from '../store/queries';
import type { AccountConfig } from '../config';

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : '');

/** Who did it, for the audit trail: a dashboard user's e-mail, or the operator CLI. */
const actorOf = (actor: string | undefined) => (actor ? actor.slice(0, 254) : 'operator');

export const toAccount = (doc: AccountDoc): Account => ({
  id: doc._id,
  name: doc.name,
  plan: doc.plan,
  createdAt: iso(doc.created_at),
  perMinuteLimit: doc.per_minute_limit ?? 0,
  perHourLimit: doc.per_hour_limit ?? 0,
});

const toApiKey = (doc: Omit<ApiKeyDoc, 'digest'>): ApiKey => ({
  id: doc._id,
  accountId: doc.account_id,
  prefix: doc.prefix,
  scope: doc.scope,
  name: doc.name,
  createdAt: iso(doc.created_at),
  lastUsedAt: iso(doc.last_used_at),
  revokedAt: iso(doc.revoked_at),
  createdBy: doc.created_by,
  revokedBy: doc.revoked_by ?? '',
});

type AccountHandlers = Pick<
  Handlers<typeof AccountServiceService>,
  | 'createAccount'
  | 'getAccount'
  | 'updateAccount'
  | 'createApiKey'
  | 'revokeApiKey'
  | 'regenerateApiKey'
  | 'listApiKeys'
  | 'authenticate'
>;

export function accountHandlers(ctx: ServiceContext<AccountConfig>, store: AccountStore): AccountHandlers {
  const pepper = ctx.config.API_KEY_PEPPER;
  const notFound = () => AppError.notFound('account');
  const requireAccount = (accountId: string) => {
    if (!accountId)
      throw AppError.invalid('account_id', 'account_id is required: revocation is always scoped to an account');
    return accountId;
  };

  async function issueKey(accountId: string, scope: Scope, name: string, actor: string) {
    const now = ctx.clock.now();
    const { secret, visiblePrefix } = generateApiKey(scope);
    const doc = {
      _id: newId('key'),
      account_id: accountId,
      prefix: visiblePrefix,
      digest: digestApiKey(secret, pepper),
      scope,
      name,
      created_at: now,
      last_used_at: null,
      revoked_at: null,
      created_by: actor,
      revoked_by: null,
    };
    await store.insertKey(doc, [apiKeyCreated(doc, now)]);
    ctx.outbox.flush(store.models.ApiKey, doc._id);
    return { apiKey: toApiKey(doc), secret };
  }

  async function revoke(accountId: string, keyId: string, actor: string) {
    const now = ctx.clock.now();
    const revoked = await store.revokeKey(keyId, accountId, now, actor, (k) => apiKeyRevoked(k, now));
    if (revoked) {
      ctx.outbox.flush(store.models.ApiKey, revoked._id);
      return toApiKey(revoked);
    }
    // Already revoked is success (idempotent); absent or another account's is 404.
    const existing = await store.findKey(keyId, accountId);
    if (!existing) throw AppError.notFound('API key');
    return toApiKey(existing);
  }

  return {
    async createAccount(req) {
      const account: AccountDoc = {
        _id: newId('acct'),
        name: checkAccountName(req.name),
        plan: checkPlan(req.plan),
        per_minute_limit: null,
        per_hour_limit: null,
        created_at: ctx.clock.now(),
      };
      await store.insertAccount(account);
      const { apiKey, secret } = await issueKey(account._id, 'full', 'default', 'operator');
      return { account: toAccount(account), apiKey, secret };
    },

    async getAccount(req) {
      const account = await store.findAccount(req.id);
      if (!account) throw notFound();
      return toAccount(account);
    },

    async updateAccount(req) {
      const changes: Partial<Pick<AccountDoc, 'plan' | 'per_minute_limit' | 'per_hour_limit'>> = {};
      if (req.plan !== undefined) changes.plan = req.plan ? checkPlan(req.plan) : checkPlan('none');
      if (req.perMinuteLimit !== undefined)
        changes.per_minute_limit = checkLimitOverride('per_minute_limit', req.perMinuteLimit);
      if (req.perHourLimit !== undefined)
        changes.per_hour_limit = checkLimitOverride('per_hour_limit', req.perHourLimit);
      if (Object.keys(changes).length === 0)
        throw new AppError('invalid_request', 'nothing to change: give a plan or a limit');
      const now = ctx.clock.now();
      const updated = await store.updateAccount(req.id, changes, (after) => accountUpdated(after, now));
      if (!updated) throw notFound();
      ctx.outbox.flush(store.models.Account, req.id);
      return toAccount(updated);
    },

    async createApiKey(req) {
      const scope = checkScope(req.scope);
      const name = checkKeyName(req.name);
      if (!(await store.findAccount(req.accountId))) throw notFound();
      return issueKey(req.accountId, scope, name, actorOf(req.actor));
    },

    // Always scoped to an account: a key id alone must never be enough to revoke someone's key.
    revokeApiKey: async (req) => revoke(requireAccount(req.accountId), req.keyId, actorOf(req.actor)),

    async regenerateApiKey(req) {
      const accountId = requireAccount(req.accountId);
      const old = await store.findKey(req.keyId, accountId);
      if (!old) throw AppError.notFound('API key');
      if (old.revoked_at) throw new AppError('conflict', 'this API key is already revoked; generate a new one instead');
      // New key first: if the revocation then fails, the caller has two keys, never none.
      const fresh = await issueKey(old.account_id, old.scope, old.name, actorOf(req.actor));
      await revoke(accountId, old._id, actorOf(req.actor));
      return fresh;
    },

    async listApiKeys(req) {
      const { items, page } = await store.listKeys(req.accountId, req.page);
      return { data: items.map(toApiKey), page };
    },

    async authenticate(req) {
      // Shape and checksum first: garbage never reaches the database.
      if (!parseApiKey(req.secret)) throw new AppError('unauthorized', 'the API key is malformed');
      const key = await store.findKeyByDigest(digestApiKey(req.secret, pepper));
      if (!key || key.revoked_at) throw new AppError('unauthorized', 'the API key is unknown or revoked');
      const account = await store.findAccount(key.account_id);
      if (!account) throw new AppError('unauthorized', 'the API key is unknown or revoked');
      const now = ctx.clock.now();
      if (shouldTouchLastUsed(key.last_used_at, now)) {
        store.touchLastUsed(key._id, now).catch((err) => ctx.log.warn({ err }, 'could not record last_used_at'));
      }
      return { account: toAccount(account), keyId: key._id, scope: key.scope };
    },
  };
}
