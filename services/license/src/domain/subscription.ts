import type { SubscriptionChange } from '@licensing/proto';
import {
  isOneOf,
  subscriptionStatuses,
  validUntil,
  type PolicySnapshot,
  type StoredStatus,
  type SubscriptionFacts,
} from '@licensing/proto';

// A licence that follows a subscription: what the checkout service's state means for it. Pure rules;
// use-cases/apply-subscription.ts reads and writes.

/** What the licence stores of its subscription: the facts every answer judges, and the last state applied. */
export interface StoredSubscription extends SubscriptionFacts {
  /** The number of the subscription state applied last (ApplySubscription's seq): older ones are ignored. */
  seq: number;
  quantity: number;
}

export { subscriptionChanges, type SubscriptionChange } from '@licensing/proto';

export const isSubscriptionStatus = (s: string) => isOneOf(subscriptionStatuses, s);

/** Machines a subscription licence may be activated on: the product's per seat, times the seats (null stays unlimited). */
export function seatsPolicy(productPolicy: PolicySnapshot, quantity: number): PolicySnapshot {
  const per = productPolicy.max_activations;
  return { ...productPolicy, max_activations: per === null ? null : Math.min(per * quantity, 10_000_000) };
}

export interface LicenseNow {
  status: StoredStatus;
  expires_at: Date | null;
  policy: PolicySnapshot;
  subscription?: StoredSubscription | null;
}

export type SubscriptionEvent = 'license.renewed' | 'license.suspended' | 'license.reinstated' | 'license.updated';

/**
 * The licence's stored status and the events that announce the step from `before` to `after`'s
 * subscription: unpaid suspends; a payment after unpaid reinstates; a later expiry renews. A licence the
 * vendor revoked, or suspended themselves, stays so (the subscription does not override the vendor).
 */
export function subscriptionStep(
  before: LicenseNow,
  next: { subscription: StoredSubscription; expires_at: Date | null; policy: PolicySnapshot },
  change: SubscriptionChange,
): { status: StoredStatus; events: SubscriptionEvent[]; graceEndsAt: Date | null } {
  const events: SubscriptionEvent[] = [];
  let status = before.status;
  const suspendedForPayment = before.status === 'suspended' && before.subscription?.status === 'unpaid';
  if (next.subscription.status === 'unpaid' && before.status === 'active') {
    status = 'suspended';
    events.push('license.suspended');
  } else if (next.subscription.status !== 'unpaid' && suspendedForPayment) {
    status = 'active';
    events.push('license.reinstated');
  }
  const later = !!next.expires_at && (!before.expires_at || next.expires_at.getTime() > before.expires_at.getTime());
  if (change === 'renewed' || (later && change !== 'created' && next.subscription.status === 'active'))
    events.push('license.renewed');
  if (!events.length) events.push('license.updated');
  const graceEndsAt = validUntil({
    status,
    expires_at: next.expires_at,
    policy: next.policy,
    subscription: next.subscription,
  });
  return { status, events, graceEndsAt };
}
