import { AppError } from '@licensing/runtime';
import { isOneOf, keyScopes, plans, type KeyScope, type Plan } from '@licensing/proto';

export function checkAccountName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed) throw AppError.invalid('name', 'name is required');
  if (trimmed.length > 100) throw AppError.invalid('name', 'name must be at most 100 characters');
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
