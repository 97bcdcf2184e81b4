import type { Plan } from '@licensing/proto';
import type { Principal } from '../auth/principal';

// What a request may spend. Every request spends two budgets, and both must allow it:
//   "minute"         per API key (and per dashboard session): 100 by default
//   "license_minute" per licence, instead of "minute" for app traffic that names a licence (a
//                    "License" credential always; a validate-scope key when the request names a
//                    licence key): 60 by default (LICENSE_PER_MINUTE), so one noisy copy of an app
//                    never starves the other licences sharing the app's validate key
//   "hour"           per account, by plan: free 100, pro 1,000, enterprise 10,000 (full-scope keys,
//                    the dashboard)
//   "app_hour"       per account, instead of "hour" for app traffic (validate-scope keys and
//                    licence credentials, which ship inside customers' apps): an hourly allowance of
//                    its own, ten times the hourly quota, that never spends the quota: anyone
//                    holding a copy of the app could otherwise lock the vendor out of the API.
// An operator may raise either for one account (a raised hour raises the app allowance with it).
// How they are counted: quota.ts; the headers that report them: headers.ts.

/** Each plan's hourly quota: a plan added to proto/rules/vocabulary.ts does not compile without one. */
export const PLAN_HOURLY_QUOTA: Record<Plan, number> = { free: 100, pro: 1000, enterprise: 10_000 };
/** App traffic's hourly allowance is this many times the account's hourly quota (free 1,000, pro 10,000, enterprise 100,000). */
export const APP_ALLOWANCE_FACTOR = 10;
export const DEFAULT_PER_MINUTE = 100;
/** Requests one licence may make per minute (the LICENSE_PER_MINUTE setting's default). */
export const DEFAULT_LICENSE_PER_MINUTE = 60;

/** The budgets of one account: which hourly budget a request spends depends on who sends it. */
export interface AccountLimits {
  /** Per API key (and per dashboard session), per minute. */
  minute: number;
  /** Per account, per hour: the vendor's own traffic (full-scope keys, the dashboard). */
  hour: number;
  /** Per account, per hour: app traffic (validate-scope keys, licence credentials). */
  appHour: number;
  /** Per licence, per minute: app traffic that names a licence. */
  licenseMinute: number;
}

/** The effective limits of a caller: overrides win over the plan. */
export function limitsFor(
  p: Pick<Principal, 'plan' | 'perMinuteOverride' | 'perHourOverride'>,
  licensePerMinute = DEFAULT_LICENSE_PER_MINUTE,
): AccountLimits {
  const hour = p.perHourOverride || PLAN_HOURLY_QUOTA[p.plan as Plan] || PLAN_HOURLY_QUOTA.free;
  return {
    minute: p.perMinuteOverride || DEFAULT_PER_MINUTE,
    hour,
    appHour: hour * APP_ALLOWANCE_FACTOR,
    licenseMinute: licensePerMinute,
  };
}

/** App traffic: requests that spend the app allowance, not the account's hourly quota (a licence credential acts with the validate scope). */
export const isAppTraffic = (p: Pick<Principal, 'scope'>): boolean => p.scope === 'validate';

/** A budget's name, as the RateLimit headers and the rejection metric's `window` label give it. */
export type BudgetName = 'minute' | 'license_minute' | 'hour' | 'app_hour';

/** The hourly budgets (per account); the others are per minute. */
export const isHourly = (name: BudgetName): boolean => name === 'hour' || name === 'app_hour';

/** A budget as one request left it: what the RateLimit headers and a 429 report. */
export interface BudgetState {
  name: BudgetName;
  limit: number;
  /** The length of its window (seconds). */
  windowS: number;
  remaining: number;
  /** Seconds until its window ends. */
  resetS: number;
}

/** The budget closest to running out: fewest requests left, then the later reset. */
export function bindingBudget(budgets: BudgetState[]): BudgetState {
  let best = budgets[0];
  for (const b of budgets)
    if (b.remaining < best.remaining || (b.remaining === best.remaining && b.resetS > best.resetS)) best = b;
  return best;
}

/** The detail of the 429 a spent budget answers. */
export function rejectionDetail(b: BudgetState, plan: string): string {
  if (b.name === 'minute')
    return `the per-minute limit of ${b.limit} requests for this API key was reached; retry in ${b.resetS} s`;
  if (b.name === 'license_minute')
    return `the per-minute limit of ${b.limit} requests for this licence was reached; retry in ${b.resetS} s (other licences are not affected)`;
  if (b.name === 'app_hour')
    return `the hourly allowance of ${b.limit} app requests (validate-scope keys and licence credentials) for this account (${plan} plan) was reached; retry in ${b.resetS} s`;
  return `the hourly quota of ${b.limit} requests for this account (${plan} plan) was reached; retry in ${b.resetS} s`;
}
