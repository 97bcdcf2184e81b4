import { AppError } from '@licensing/runtime';
import { policyRules, validUntil, type LicenseOverrides, type Policy, type PolicySnapshot } from '@licensing/proto';
import { expiryBucket } from './expiry';
import type { LicenseRecord } from './license';

// Per-licence terms: a licence may have its own max_activations, lease_seconds and expiry over its
// product's policy. The stored policy of a licence is its effective one (the product's snapshot with
// these applied), so every reader (the verdict here and in the gateways' caches, activations,
// heartbeats, licence files) sees the licence's own terms without knowing of them; the overrides are
// also kept apart, so a renewal, which takes the product's policy anew, can apply them again.
//
// The rules: an override equal to the product's policy is no override (it is dropped); a renewal keeps
// max_activations and lease_seconds and replaces an overridden expiry with the renewal's new one (as
// does a subscription's change, which sets the expiry); lease_seconds on a node-locked policy makes the
// licence floating, and null on a floating one makes it node-locked.

/** The policy fields a licence may have of its own (both nullable numbers). */
export const OVERRIDABLE = ['max_activations', 'lease_seconds'] as const;
export type OverridableField = (typeof OVERRIDABLE)[number];

/** A licence's own terms as stored (absent: the policy's). */
export interface StoredOverrides {
  max_activations?: number | null;
  lease_seconds?: number | null;
  /** null: perpetual. */
  expires_at?: Date | null;
}

/** Terms as a request asks for them, checked: plain JSON (what an Idempotency-Key's request is compared by). */
export interface AskedTerms {
  max_activations?: number | null;
  lease_seconds?: number | null;
  /** ISO 8601; null: perpetual. */
  expires_at?: string | null;
}

/** ISO 8601 with a date, a time and a zone (what every answer writes): 2027-01-31T12:00:00Z. */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/** The moment an ISO 8601 time names, or null when it is not one. */
export function parseTime(text: string): Date | null {
  if (!ISO_TIME.test(text)) return null;
  // Some engines roll 30 February over into March: the date written must be one.
  const [year, month, day] = text.slice(0, 10).split('-').map(Number);
  const [hour, minute] = text.slice(11, 16).split(':').map(Number);
  if (month < 1 || month > 12 || day < 1 || day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return null;
  if (hour > 23 || minute > 59) return null;
  const at = new Date(text);
  return Number.isNaN(at.getTime()) ? null : at;
}

/** A nullable policy number within its rule's range (proto/rules/policy.ts), or the 400 naming it. */
function checkNumber(field: OverridableField, value: number | null): number | null {
  const rule = policyRules[field];
  if (value === null) return null;
  if (!Number.isInteger(value) || value < rule.min || value > rule.max)
    throw AppError.invalid(field, `${field} must be a whole number from ${rule.min} to ${rule.max}, or null`);
  return value;
}

/**
 * The terms a request asks for, checked before anything is read or written: numbers within the policy
 * rule's ranges, an expiry that is a time (and, for a new licence, in the future). Undefined: none asked.
 */
export function checkTerms(asked: LicenseOverrides | undefined, now: Date, creating: boolean): AskedTerms | undefined {
  if (!asked) return undefined;
  const out: AskedTerms = {};
  for (const field of OVERRIDABLE) {
    const given = asked[field];
    if (given) out[field] = checkNumber(field, given.value ?? null);
  }
  if (asked.expires_at !== undefined) {
    if (asked.expires_at === '') out.expires_at = null;
    else {
      const at = parseTime(asked.expires_at);
      if (!at)
        throw AppError.invalid('expires_at', 'expires_at must be an ISO 8601 time (2027-01-31T12:00:00Z), or null');
      if (creating && at.getTime() <= now.getTime())
        throw AppError.invalid('expires_at', 'expires_at must be in the future');
      out.expires_at = at.toISOString();
    }
  }
  return Object.keys(out).length ? out : undefined;
}

/** The policy a licence holds: its product's snapshot with the licence's own numbers over it. */
export function effectivePolicy(snapshot: PolicySnapshot, overrides: StoredOverrides | undefined): PolicySnapshot {
  const out = { ...snapshot };
  for (const field of OVERRIDABLE)
    if (overrides && overrides[field] !== undefined) out[field] = overrides[field] as number | null;
  return out;
}

/** The overrides that differ from the product's policy (`policy`): an equal one is none. The expiry is kept. */
export function differing(overrides: StoredOverrides, policy: Pick<Policy, OverridableField>): StoredOverrides {
  const out: StoredOverrides = {};
  for (const field of OVERRIDABLE)
    if (overrides[field] !== undefined && overrides[field] !== policy[field]) out[field] = overrides[field];
  if (overrides.expires_at !== undefined) out.expires_at = overrides.expires_at;
  return out;
}

/** What a renewal keeps: the numbers, not the expiry (the renewal's new one replaces it). */
export function keptByRenewal(overrides: StoredOverrides | undefined): StoredOverrides {
  const { expires_at: _, ...kept } = overrides ?? {};
  return kept;
}

/** The new state of a licence given `asked` terms over its product's current `policy` (nothing else changes). */
export function withTerms(
  licence: Pick<LicenseRecord, 'status' | 'expires_at' | 'policy' | 'subscription' | 'expired_notified'> & {
    overrides?: StoredOverrides;
  },
  asked: AskedTerms,
  policy: Pick<Policy, OverridableField>,
  now: Date,
): Pick<LicenseRecord, 'policy'> &
  Partial<Pick<LicenseRecord, 'expires_at' | 'grace_ends_at' | 'expiry_bucket' | 'expired_notified'>> & {
    overrides: StoredOverrides;
  } {
  const merged: StoredOverrides = { ...(licence.overrides ?? {}) };
  for (const field of OVERRIDABLE) if (asked[field] !== undefined) merged[field] = asked[field];
  if (asked.expires_at !== undefined) merged.expires_at = asked.expires_at === null ? null : new Date(asked.expires_at);
  const overrides = differing(merged, policy);
  // The numbers asked are what the licence holds from now, whether or not they differ from the product's.
  const next = { ...licence, policy: effectivePolicy(licence.policy, { ...overrides, ...numbersOf(asked) }) };
  if (asked.expires_at === undefined) return { policy: next.policy, overrides };
  const expires_at = merged.expires_at ?? null;
  // Filed again for the expiry sweep: a past expiry is announced at once, a later one when its grace ends.
  const graceEnds = validUntil({ ...next, expires_at, subscription: licence.subscription });
  return {
    policy: next.policy,
    overrides,
    expires_at,
    grace_ends_at: graceEnds,
    expired_notified: false,
    expiry_bucket: expiryBucket(graceEnds, false, now),
  };
}

const numbersOf = (asked: AskedTerms): StoredOverrides =>
  Object.fromEntries(OVERRIDABLE.filter((f) => asked[f] !== undefined).map((f) => [f, asked[f]]));

/** A licence's overrides as the contract shows them (absent ones absent; null as a value-less number). */
export function overridesToContract(overrides: StoredOverrides | undefined): LicenseOverrides {
  const out: LicenseOverrides = { max_activations: undefined, lease_seconds: undefined, expires_at: undefined };
  for (const field of OVERRIDABLE)
    if (overrides?.[field] !== undefined) out[field] = { value: overrides[field] ?? undefined };
  if (overrides?.expires_at !== undefined)
    out.expires_at = overrides.expires_at ? new Date(overrides.expires_at).toISOString() : '';
  return out;
}

/** An active machine as the excess rule sees it: when it was last seen (or activated, if never since). */
export interface SeenMachine {
  _id: string;
  created_at: Date;
  last_seen_at?: Date | null;
}

const seenAt = (a: SeenMachine) => (a.last_seen_at ?? a.created_at).getTime();

/**
 * The machines to free so that `max` remain: the longest-unseen first (by last heartbeat or validation,
 * else activation), the older activation first on a tie. None when they fit or the limit is gone.
 */
export function excessMachines<T extends SeenMachine>(active: readonly T[], max: number | null): T[] {
  if (max === null || active.length <= max) return [];
  const order = [...active].sort((a, b) => seenAt(a) - seenAt(b) || a.created_at.getTime() - b.created_at.getTime());
  return order.slice(0, active.length - max);
}
