import type { Handlers } from '@licensing/runtime';
import type { Subscription, SubscriptionServiceService } from '@licensing/proto';
import type { InvoiceDoc, SubscriptionDoc } from '../store/subscriptions';
import {
  advanceTestClock,
  cancelSubscription,
  createBillingPortal,
  getSubscription,
  listSubscriptions,
  type SubscriptionDeps,
} from '../use-cases/subscriptions';

const iso = (d: Date | null | undefined) => (d ? new Date(d).toISOString() : '');

export const toSubscription = (s: Omit<SubscriptionDoc, 'outbox'>, invoices: InvoiceDoc[] = []): Subscription => ({
  id: s._id,
  account_id: s.account_id,
  status: s.status,
  product_id: s.product_id,
  customer_email: s.customer_email,
  license_key: s.license_key,
  quantity: s.quantity,
  current_period_start: iso(s.current_period_start),
  current_period_end: iso(s.current_period_end),
  cancel_at_period_end: s.cancel_at_period_end,
  trial_end: iso(s.trial_end),
  livemode: s.livemode,
  created_at: iso(s.created_at),
  interval: s.interval,
  interval_count: s.interval_count,
  amount: s.amount,
  currency: s.currency,
  canceled_at: iso(s.canceled_at),
  test_clock: iso(s.test_clock),
  checkout_session_id: s.session_id,
  invoices: invoices.map((i) => ({
    id: i._id,
    period_start: iso(i.period_start),
    period_end: iso(i.period_end),
    amount: i.amount,
    currency: i.currency,
    status: i.status,
    created_at: iso(i.created_at),
  })),
  refunds: invoices
    .filter((i) => i.refund)
    .map((i) => ({
      invoice_id: i._id,
      cause: i.refund!.cause,
      amount: i.amount,
      currency: i.currency,
      refunded_at: iso(i.refund!.at),
    }))
    .sort((a, b) => b.refunded_at.localeCompare(a.refunded_at)),
});

// Proto to use case and back; the rules live in use-cases/subscriptions.ts and domain/subscription.ts.
export function subscriptionHandlers(deps: SubscriptionDeps): Handlers<typeof SubscriptionServiceService> {
  return {
    async listSubscriptions(req) {
      const { items, page } = await listSubscriptions(
        deps,
        req.account_id,
        { status: req.status, customer_email: req.customer_email, product_id: req.product_id },
        req.page,
      );
      return { data: items.map((s) => toSubscription(s)), page };
    },
    async getSubscription(req) {
      const { doc, invoices } = await getSubscription(deps, req.account_id, req.id);
      return toSubscription(doc, invoices);
    },
    cancelSubscription: async (req, call) =>
      toSubscription(await cancelSubscription(deps, req.account_id, req.id, req.at_period_end, call.requestId)),
    async createBillingPortal(req) {
      const out = await createBillingPortal(deps, req.account_id, req.id);
      return { url: out.url, expires_at: out.expires_at.toISOString() };
    },
    advanceTestClock: async (req, call) =>
      toSubscription(await advanceTestClock(deps, req.account_id, req.id, req.advance_to, call.requestId)),
  };
}
