import { newEvent } from '@licensing/runtime';
import type { DomainEvent, SubscriptionData } from '@licensing/proto';
import type { SubscriptionDoc } from '../store/subscriptions';

type SubscriptionEventType =
  | 'subscription.created'
  | 'subscription.renewed'
  | 'subscription.past_due'
  | 'subscription.canceled'
  | 'subscription.updated';

export const subscriptionData = (s: Omit<SubscriptionDoc, 'outbox'>): SubscriptionData => ({
  id: s._id,
  status: s.status,
  product_id: s.product_id,
  customer_email: s.customer_email,
  license_key: s.license_key,
  quantity: s.quantity,
  current_period_start: s.current_period_start.toISOString(),
  current_period_end: s.current_period_end.toISOString(),
  cancel_at_period_end: s.cancel_at_period_end,
  trial_end: s.trial_end ? s.trial_end.toISOString() : null,
  livemode: s.livemode,
  created_at: s.created_at.toISOString(),
});

/**
 * One event per state: its id is derived from the subscription and the state's number (seq), so a
 * change written twice (two calls that both read the same state) publishes one event.
 */
export const subscriptionEvent = (
  type: SubscriptionEventType,
  s: Omit<SubscriptionDoc, 'outbox'>,
  now: Date,
): DomainEvent =>
  newEvent(type, s.account_id, { subscription: subscriptionData(s) }, now, `evt_${s._id}_${s.seq}_${type.slice(13)}`);
