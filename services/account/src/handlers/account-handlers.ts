import { AppError, checkEmail, type Handlers } from '@licensing/runtime';
import type { Account, AccountServiceService, ApiKey } from '@licensing/proto';
import type { AccountDoc, ApiKeyDoc } from '../store/models';
import { createAccount, findAccount, updateAccount } from '../use-cases/accounts';
import {
  createApiKey,
  getApiKey,
  listApiKeys,
  regenerateApiKey,
  revokeAllApiKeys,
  revokeApiKey,
  type IssuedKey,
  roleOfKey,
} from '../use-cases/api-keys';
import { authenticate } from '../use-cases/authenticate';
import type { AccountDeps } from '../use-cases/deps';

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : '');

export const toAccount = (doc: AccountDoc): Account => ({
  id: doc._id,
  name: doc.name,
  plan: doc.plan,
  created_at: iso(doc.created_at),
  per_minute_limit: doc.per_minute_limit ?? 0,
  per_hour_limit: doc.per_hour_limit ?? 0,
  support_email: doc.support_email ?? '',
  require_mfa: doc.require_mfa === true,
});

const toApiKey = (doc: Omit<ApiKeyDoc, 'digest' | 'slot_key'>): ApiKey => ({
  id: doc._id,
  account_id: doc.account_id,
  prefix: doc.prefix,
  scope: doc.scope,
  role: roleOfKey(doc),
  name: doc.name,
  created_at: iso(doc.created_at),
  last_used_at: iso(doc.last_used_at),
  revoked_at: iso(doc.revoked_at),
  created_by: doc.created_by,
  revoked_by: doc.revoked_by ?? '',
});

const withSecret = ({ key, secret }: IssuedKey) => ({ api_key: toApiKey(key), secret });

type AccountHandlers = Pick<
  Handlers<typeof AccountServiceService>,
  | 'createAccount'
  | 'getAccount'
  | 'updateAccount'
  | 'setSupportEmail'
  | 'createApiKey'
  | 'revokeApiKey'
  | 'regenerateApiKey'
  | 'getApiKey'
  | 'listApiKeys'
  | 'revokeAllApiKeys'
  | 'authenticate'
  | 'setRequireMfa'
>;

/** Invites the owner member of an account the operator makes (use-cases/members.ts); absent: no mail, none. */
export interface OwnerInvitations {
  /** Whether invitations can be mailed (checked before the account is made: nothing half-made). */
  mails: boolean;
  invite(accountId: string, email: string): Promise<{ _id: string }>;
}

// Proto to use case and back; the rules live in use-cases/ and domain/.
export function accountHandlers(deps: AccountDeps, owners?: OwnerInvitations): AccountHandlers {
  return {
    async createAccount(req) {
      const ownerEmail = req.owner_email ? checkEmail('owner_email', req.owner_email) : '';
      if (ownerEmail && !owners?.mails)
        throw new AppError('forbidden', 'this server sends no e-mail (MAIL_URL): the owner cannot be invited');
      const { account, ...issued } = await createAccount(deps, req);
      const owner = ownerEmail ? await owners!.invite(account._id, ownerEmail) : null;
      return { account: toAccount(account), ...withSecret(issued), owner_member_id: owner?._id ?? '' };
    },
    getAccount: async (req) => toAccount(await findAccount(deps, req.id)),
    updateAccount: async (req) => toAccount(await updateAccount(deps, req)),
    setSupportEmail: async (req) =>
      toAccount(await updateAccount(deps, { id: req.account_id, support_email: req.support_email })),
    setRequireMfa: async (req) =>
      toAccount(await updateAccount(deps, { id: req.account_id, require_mfa: req.require_mfa })),
    createApiKey: async (req) => withSecret(await createApiKey(deps, req)),
    revokeApiKey: async (req) => toApiKey(await revokeApiKey(deps, req)),
    regenerateApiKey: async (req) => withSecret(await regenerateApiKey(deps, req)),

    getApiKey: async (req) => toApiKey(await getApiKey(deps, req)),

    async listApiKeys(req) {
      const { items, page, live, max } = await listApiKeys(deps, req.account_id, req.page, req.revoked ?? false);
      return { data: items.map(toApiKey), page, live_keys: live, max_live_keys: max };
    },

    revokeAllApiKeys: async (req) => ({ revoked: await revokeAllApiKeys(deps, req) }),

    async authenticate(req) {
      const { account, key } = await authenticate(deps, req.secret);
      return { account: toAccount(account), key_id: key._id, scope: key.scope, role: roleOfKey(key) };
    },
  };
}
