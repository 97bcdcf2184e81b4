import { AppError, checkEmail, newId } from '@licensing/runtime';
import { checkAccountName, checkLimitOverride, checkPlan } from '../domain/account';
import { accountUpdated } from '../events/account-events';
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

/** Changes the plan and/or the rate limit overrides (0 = the plan's default), with account.updated. */
export async function updateAccount(
  { store, outbox, clock }: AccountDeps,
  req: { id: string; plan?: string; per_minute_limit?: number; per_hour_limit?: number; support_email?: string },
): Promise<AccountDoc> {
  const changes: Partial<Pick<AccountDoc, 'plan' | 'per_minute_limit' | 'per_hour_limit' | 'support_email'>> = {};
  if (req.support_email !== undefined)
    changes.support_email = req.support_email.trim() ? checkEmail('support_email', req.support_email) : '';
  if (req.plan !== undefined) changes.plan = req.plan ? checkPlan(req.plan) : checkPlan('none');
  if (req.per_minute_limit !== undefined)
    changes.per_minute_limit = checkLimitOverride('per_minute_limit', req.per_minute_limit);
  if (req.per_hour_limit !== undefined)
    changes.per_hour_limit = checkLimitOverride('per_hour_limit', req.per_hour_limit);
  if (Object.keys(changes).length === 0)
    throw new AppError('invalid_request', 'nothing to change: give a plan, a limit or a support_email');
  const now = clock.now();
  const updated = await store.updateAccount(req.id, changes, (after) => accountUpdated(after, now));
  if (!updated) throw notFound();
  outbox.flush(store.models.Account, req.id);
  return updated;
}
