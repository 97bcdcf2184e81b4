import { AppError } from '@licensing/runtime';
import {
  API_KEY_NAME_MAX_LENGTH,
  API_KEY_ROLES,
  isApiKeyRole,
  isOneOf,
  keyScopes,
  mayGrant,
  plans,
  roleOfScope,
  type ApiKeyRole,
  type KeyScope,
  type Plan,
} from '@licensing/proto';

export function checkAccountName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed) throw AppError.invalid('name', 'name is required');
  if (trimmed.length > API_KEY_NAME_MAX_LENGTH)
    throw AppError.invalid('name', `name must be at most ${API_KEY_NAME_MAX_LENGTH} characters`);
  return trimmed;
}

export function checkPlan(plan: string): Plan {
  if (!plan) return 'free';
  if (!isOneOf(plans, plan)) throw AppError.invalid('plan', `plan must be one of ${plans.join(', ')}`);
  return plan;
}

export function checkScope(scope: string): KeyScope {
  if (!scope) return 'full';
  if (!isOneOf(keyScopes, scope)) throw AppError.invalid('scope', `scope must be one of ${keyScopes.join(', ')}`);
  return scope;
}

/**
 * A new key's scope and role from what was asked (either, both, or neither: a full admin key), within
 * what its creator may give (`actorRole`; none for the operator): never a role above the creator's.
 */
export function checkKeyRole(
  asked: { scope: string; role?: string },
  actorRole: string | undefined,
): { scope: KeyScope; role: ApiKeyRole } {
  if (asked.role && !isApiKeyRole(asked.role))
    throw AppError.invalid('role', `role must be one of ${API_KEY_ROLES.join(', ')}`);
  const scope = checkScope(asked.scope || (asked.role === 'validate' ? 'validate' : 'full'));
  const role = (asked.role || roleOfScope(scope)) as ApiKeyRole;
  if ((role === 'validate') !== (scope === 'validate'))
    throw AppError.invalid('role', `a ${scope}-scope key cannot have the role ${role}: a validate key is an app's key`);
  if (actorRole && !mayGrant(actorRole, role))
    throw new AppError(
      'forbidden',
      `a key of role ${actorRole} cannot create a key of role ${role}: that role is above its own`,
    );
  return { scope, role };
}

export function checkKeyName(name: string): string {
  const trimmed = name.trim();
  if (trimmed.length > 100) throw AppError.invalid('name', 'name must be at most 100 characters');
  return trimmed;
}

/** last_used_at is a hint, not an audit trail: write it at most once a minute per key. */
export const LAST_USED_RESOLUTION_MS = 60_000;

export function shouldTouchLastUsed(lastUsedAt: Date | null | undefined, now: Date): boolean {
  return !lastUsedAt || now.getTime() - lastUsedAt.getTime() >= LAST_USED_RESOLUTION_MS;
}

/** Highest override an operator may set; far above any plan, low enough to catch typos. */
export const LIMIT_MAX = 1_000_000;

/** An override is a whole number of requests; 0 removes it (back to the plan's default). */
export function checkLimitOverride(field: string, value: number): number | null {
  if (!Number.isInteger(value) || value < 0 || value > LIMIT_MAX)
    throw AppError.invalid(field, `${field} must be a whole number from 0 (plan default) to ${LIMIT_MAX}`);
  return value === 0 ? null : value;
}
