import { AppError, checkEmail, newId } from '@licensing/runtime';
import { checkAccountName, checkLimitOverride, checkPlan } from '../domain/account';
import { accountUpdated, settingsUpdated } from '../events/account-events';
import type { AccountDoc } from '../store/models';
import { issueKey, type IssuedKey } from './api-keys';
import type { AccountDeps } from './deps';

const notFound = () => AppError.notFound('account');

/** A new account (operator CLI) with its first full-scope key, named "default". */
export async function createAccount(
  deps: AccountDeps,
  req: { name: string; plan: string },
): Promise<IssuedKey & { account: AccountDoc }> {
  const account: AccountDoc = {
    _id: newId('acct'),
    name: checkAccountName(req.name),
    plan: checkPlan(req.plan),
    per_minute_limit: null,
    per_hour_limit: null,
    created_at: deps.clock.now(),
  };
  await deps.store.insertAccount(account);
  const { key, secret } = await issueKey(deps, account._id, { scope: 'full', role: 'admin' }, 'default', 'operator');
  return { account, key, secret };
}

export async function findAccount({ store }: Pick<AccountDeps, 'store'>, id: string): Promise<AccountDoc> {
  const account = await store.findAccount(id);
  if (!account) throw notFound();
  return account;
}

/** The account's own settings (the dashboard's Settings page), as opposed to the operator's plan and limits. */
const SETTINGS = ['support_email', 'require_mfa'] as const;

/**
 * Changes the plan and/or the rate limit overrides (0 = the plan's default), with account.updated, and
 * the vendor's settings, with settings.updated (the audit log's, naming what changed).
 */
export async function updateAccount(
  { store, outbox, clock }: AccountDeps,
  req: {
    id: string;
    plan?: string;
    per_minute_limit?: number;
    per_hour_limit?: number;
    support_email?: string;
    require_mfa?: boolean;
  },
): Promise<AccountDoc> {
  const changes: Partial<
    Pick<AccountDoc, 'plan' | 'per_minute_limit' | 'per_hour_limit' | 'support_email' | 'require_mfa'>
  > = {};
  if (req.support_email !== undefined)
    changes.support_email = req.support_email.trim() ? checkEmail('support_email', req.support_email) : '';
  if (req.require_mfa !== undefined) changes.require_mfa = req.require_mfa;
  if (req.plan !== undefined) changes.plan = req.plan ? checkPlan(req.plan) : checkPlan('none');
  if (req.per_minute_limit !== undefined)
    changes.per_minute_limit = checkLimitOverride('per_minute_limit', req.per_minute_limit);
  if (req.per_hour_limit !== undefined)
    changes.per_hour_limit = checkLimitOverride('per_hour_limit', req.per_hour_limit);
  if (Object.keys(changes).length === 0)
    throw new AppError('invalid_request', 'nothing to change: give a plan, a limit, a support_email or require_mfa');
  const now = clock.now();
  const settings = SETTINGS.filter((name) => name in changes);
  const operator = Object.keys(changes).some((name) => !(SETTINGS as readonly string[]).includes(name));
  const updated = await store.updateAccount(req.id, changes, (after) => [
    // Gateways follow account.updated for the plan and limits; it is also what the account's webhooks see.
    ...(operator || settings.includes('support_email') ? [accountUpdated(after, now)] : []),
    ...(settings.length ? [settingsUpdated(after._id, settings, now)] : []),
  ]);
  if (!updated) throw notFound();
  outbox.flush(store.models.Account, req.id);
  return updated;
}
