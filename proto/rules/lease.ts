import type { ActivationFacts } from './verdict';

// Floating seats (a policy with lease_seconds): an activation holds its slot while its lease runs, and
// each heartbeat (or re-activation) sets the lease to now + lease_seconds. A lapsed seat is still
// stored until it is reclaimed (when another machine needs its slot, or by the lapsed-seat sweep), but
// it no longer counts: validation with its fingerprint answers lease_expired, and max_activations
// counts the seats whose lease runs. Lapse is judged at the moment of asking, by the licence service
// and the gateway's cache alike, so no event is needed when a lease runs out.

/** A licence's floating seats: fingerprint → when its lease ends (epoch ms). Node-locked activations are absent. */
export type Leases = ReadonlyMap<string, number>;

/** The active activations a validation compares against (a Set in the gateway, an array in the service). */
export interface ActiveFingerprints {
  has(fingerprint: string): boolean;
  readonly size: number;
}

export const isFloating = (policy: { lease_seconds?: number | null }): boolean =>
  typeof policy.lease_seconds === 'number';

/** Whether a validation depends on the licence's activations: it requires one, or its seats float. */
export const activationsMatter = (policy: { require_activation: boolean; lease_seconds?: number | null }): boolean =>
  policy.require_activation || isFloating(policy);

/** A lease that ended at or before now has lapsed; null (node-locked) never does. */
export const lapsed = (leaseEndsMs: number | null | undefined, nowMs: number): boolean =>
  typeof leaseEndsMs === 'number' && leaseEndsMs <= nowMs;

/** The end of a lease taken or renewed now. */
export const leaseFrom = (now: Date, leaseSeconds: number): Date => new Date(now.getTime() + leaseSeconds * 1000);

/** Seats that hold a slot now: the active activations less the lapsed floating ones. */
export function heldSeats(active: ActiveFingerprints, leases: Leases, nowMs: number): number {
  let held = active.size;
  for (const end of leases.values()) if (end <= nowMs) held--;
  return held;
}

/** What a validation with this fingerprint depends on, judged now (verdict.ts's ActivationFacts). */
export function seatFacts(
  active: ActiveFingerprints,
  leases: Leases,
  fingerprint: string,
  nowMs: number,
): ActivationFacts {
  const known = !!fingerprint && active.has(fingerprint);
  const end = known ? leases.get(fingerprint) : undefined;
  const expired = known && lapsed(end, nowMs);
  return {
    fingerprintActive: known && !expired,
    count: heldSeats(active, leases, nowMs),
    leaseExpired: expired,
    leaseEndsAt: known && !expired && end !== undefined ? end : null,
  };
}

/** Leases of a licence from parallel lists (the contract's ValidationFacts), RFC 3339; empty = node-locked. */
export function leasesOf(fingerprints: readonly string[], leaseEnds: readonly string[]): Map<string, number> {
  const leases = new Map<string, number>();
  fingerprints.forEach((f, i) => {
    const end = leaseEnds[i] ? Date.parse(leaseEnds[i]) : Number.NaN;
    if (!Number.isNaN(end)) leases.set(f, end);
  });
  return leases;
}
