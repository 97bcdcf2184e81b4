import type { Plan } from '@licensing/proto';
import type { Principal } from './principal';

// What a request may spend. A vendor's own request spends "minute" and "hour"; app traffic spends
// "app_minute", the minute of the licence it names (if any) and "app_hour". Every budget a request
// spends must allow it:
//   "minute"         per API key (and per dashboard session): 100 by default
//   "app_minute"     per app credential (a validate-scope key, or one licence's "License"
//                    credential), on every request it sends: a validate key the larger of its
//                    minute and a twentieth of the app allowance (free 100, pro 500, enterprise
//                    5,000), a licence credential LICENSE_PER_MINUTE (60): naming a new licence
//                    each time never buys a fresh minute
//   "license_minute" per licence, on top of "app_minute" for app traffic that names a licence (a
//                    "License" credential always; a validate-scope key when the request names a
//                    licence key): 60 by default (LICENSE_PER_MINUTE), so one noisy copy of an app
//                    never starves the other licences sharing the app's validate key
//   "heartbeat"      per activation, instead of "app_minute" and "license_minute" for a heartbeat:
//                    10 a minute, at least four per lease of the shortest lease (30 s), so any number
//                    of floating seats on one licence stay alive
//   "unknown_minute" per app credential and client address: requests naming a licence no licence
//                    has (or a malformed key), a revoked licence, or an activation that does not
//                    exist spend it (30 a minute) and give their "app_hour" back; a revoked or
//                    unknown licence's own "License" credential spends only it. Once spent, that
//                    credential is refused from that address for the rest of the minute. Strangers
//                    holding a shipped validate key, or a revoked customer's app looping, never
//                    spend the vendor's "app_hour".
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
/** A validate key's own minute is at least this share of the app allowance (1/20: free 100, pro 500, enterprise 5,000). */
export const VALIDATE_KEY_MINUTE_SHARE = 20;
/** Heartbeats per activation and minute: four per lease of the shortest lease (30 s) is 8. */
export const HEARTBEATS_PER_MINUTE = 10;
/** Requests per app credential and address per minute naming unknown or revoked licences, or unknown activations. */
export const UNKNOWN_PER_MINUTE = 30;

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
  /** Per validate-scope key, per minute (a licence credential's own minute is licenseMinute). */
  validateKeyMinute: number;
  /** Per activation, per minute: heartbeats. */
  heartbeatMinute: number;
  /** Per app credential and address, per minute: requests naming what does not exist or is revoked. */
  unknownMinute: number;
}

/** The effective limits of a caller: overrides win over the plan. */
export function limitsFor(
  p: Pick<Principal, 'plan' | 'perMinuteOverride' | 'perHourOverride'>,
  licensePerMinute = DEFAULT_LICENSE_PER_MINUTE,
): AccountLimits {
  const hour = p.perHourOverride || PLAN_HOURLY_QUOTA[p.plan as Plan] || PLAN_HOURLY_QUOTA.free;
  const minute = p.perMinuteOverride || DEFAULT_PER_MINUTE;
  const appHour = hour * APP_ALLOWANCE_FACTOR;
  return {
    minute,
    hour,
    appHour,
    licenseMinute: licensePerMinute,
    validateKeyMinute: Math.max(minute, Math.ceil(appHour / VALIDATE_KEY_MINUTE_SHARE)),
    heartbeatMinute: HEARTBEATS_PER_MINUTE,
    unknownMinute: UNKNOWN_PER_MINUTE,
  };
}

/** App traffic: requests that spend the app allowance, not the account's hourly quota (a licence credential acts with the validate scope). */
export const isAppTraffic = (p: Pick<Principal, 'scope'>): boolean => p.scope === 'validate';

/** Validation answers that name nothing there: the request spends "unknown_minute", not "app_hour". */
export const namesNothing = (code: string): boolean => code === 'not_found' || code === 'revoked';

/** A budget's name, as the RateLimit headers and the rejection metric's `window` label give it. */
export type BudgetName =
  | 'minute'
  | 'app_minute'
  | 'license_minute'
  | 'heartbeat'
  | 'unknown_minute'
  | 'hour'
  | 'app_hour';

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
  if (b.name === 'app_minute')
    return `the per-minute limit of ${b.limit} requests for this app credential (validate-scope key or licence) was reached; retry in ${b.resetS} s`;
  if (b.name === 'heartbeat')
    return `the per-minute limit of ${b.limit} heartbeats for this activation was reached; retry in ${b.resetS} s`;
  if (b.name === 'unknown_minute')
    return `the per-minute limit of ${b.limit} requests naming unknown or revoked licences (or unknown activations) with this credential from this address was reached; retry in ${b.resetS} s`;
  if (b.name === 'license_minute')
    return `the per-minute limit of ${b.limit} requests for this licence was reached; retry in ${b.resetS} s (other licences are not affected)`;
  if (b.name === 'app_hour')
    return `the hourly allowance of ${b.limit} app requests (validate-scope keys and licence credentials) for this account (${plan} plan) was reached; retry in ${b.resetS} s`;
  return `the hourly quota of ${b.limit} requests for this account (${plan} plan) was reached; retry in ${b.resetS} s`;
}
