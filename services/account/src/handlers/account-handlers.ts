import type { Handlers } from '@licensing/runtime';
import type { Account, AccountServiceService, ApiKey } from '@licensing/proto';
import type { AccountDoc, ApiKeyDoc } from '../store/models';
import { createAccount, findAccount, updateAccount } from '../use-cases/accounts';
import { createApiKey, listApiKeys, regenerateApiKey, revokeApiKey, type IssuedKey } from '../use-cases/api-keys';
import { authenticate } from '../use-cases/authenticate';
import type { AccountDeps } from '../use-cases/deps';

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : '');

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

const withSecret = ({ key, secret }: IssuedKey) => ({ apiKey: toApiKey(key), secret });

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

// Proto to use case and back; the rules live in use-cases/ and domain/.
export function accountHandlers(deps: AccountDeps): AccountHandlers {
  return {
    async createAccount(req) {
      const { account, ...issued } = await createAccount(deps, req);
      return { account: toAccount(account), ...withSecret(issued) };
    },
    getAccount: async (req) => toAccount(await findAccount(deps, req.id)),
    updateAccount: async (req) => toAccount(await updateAccount(deps, req)),
    createApiKey: async (req) => withSecret(await createApiKey(deps, req)),
    revokeApiKey: async (req) => toApiKey(await revokeApiKey(deps, req)),
    regenerateApiKey: async (req) => withSecret(await regenerateApiKey(deps, req)),

    async listApiKeys(req) {
      const { items, page } = await listApiKeys(deps, req.accountId, req.page);
      return { data: items.map(toApiKey), page };
    },

    async authenticate(req) {
      const { account, key } = await authenticate(deps, req.secret);
      return { account: toAccount(account), keyId: key._id, scope: key.scope };
    },
  };
}
