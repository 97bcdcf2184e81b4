import { newEvent } from '@licensing/runtime';
import type { CheckoutData, CheckoutStatus, DomainEvent } from '@licensing/proto';
import type { SessionDoc } from '../store/models';

export const checkoutData = (s: Omit<SessionDoc, 'outbox'>, status: CheckoutStatus): CheckoutData => ({
  id: s._id,
  product_id: s.product_id,
  status,
  amount: s.amount,
  currency: s.currency,
  customer_email: s.customer_email || null,
  expires_at: s.expires_at.toISOString(),
  created_at: s.created_at.toISOString(),
  livemode: s.livemode ?? false,
});

const data = checkoutData;

export const checkoutCreated = (s: Omit<SessionDoc, 'outbox'>): DomainEvent =>
  newEvent('checkout.created', s.account_id, { checkout: data(s, 'open') }, s.created_at);

/** One expiry, one event, whichever instance (or API call) records it: the id is derived from the session. */
/** One completion, one event: the id is derived from the session. */
export const checkoutCompleted = (s: Omit<SessionDoc, 'outbox'>, licenseKey: string, now: Date): DomainEvent =>
  newEvent(
    'checkout.completed',
    s.account_id,
    { checkout: data(s, 'complete'), license_key: licenseKey, customer_email: s.customer_email },
    now,
    `evt_completed_${s._id}`,
  );

export const checkoutExpired = (s: Omit<SessionDoc, 'outbox'>, now: Date): DomainEvent =>
  newEvent('checkout.expired', s.account_id, { checkout: data(s, 'expired') }, now, `evt_expired_${s._id}`);
