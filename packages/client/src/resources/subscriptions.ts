import { objectArg, segment } from '../arguments';
import type { Transport } from '../http';
import { PageList, type Page } from '../pagination';
import type { BillingPortal, Subscription, SubscriptionListParams } from '../types';

/** /api/v1/subscriptions: made by paid checkouts of recurring prices; each has one licence that follows it. */
export class Subscriptions {
  constructor(private readonly http: Transport) {}

  /** Newest first; filter by `status`, `customer_email` (case-insensitive) or `product_id`. */
  list(params: SubscriptionListParams = {}): PageList<Subscription, SubscriptionListParams> {
    return new PageList(
      (query) =>
        this.http.request<Page<Subscription>>({
          method: 'GET',
          path: '/api/v1/subscriptions',
          query,
          idempotent: true,
        }),
      objectArg(params, 'list params'),
    );
  }

  /** One subscription with its invoices. */
  async get(id: string): Promise<Subscription> {
    return this.http.request({
      method: 'GET',
      path: `/api/v1/subscriptions/${segment(id, 'subscription id')}`,
      idempotent: true,
    });
  }

  /**
   * At the period end (`atPeriodEnd: true`, the default: the licence stays valid until then) or now
   * (the licence expires now). A canceled subscription is a 409 `conflict`. The API's own spelling,
   * `at_period_end`, is taken too (from JavaScript, a `false` there must not cancel at the period end).
   */
  async cancel(id: string, options: { atPeriodEnd?: boolean; at_period_end?: boolean } = {}): Promise<Subscription> {
    const o = objectArg(options, 'cancel options');
    return this.http.request({
      method: 'POST',
      path: `/api/v1/subscriptions/${segment(id, 'subscription id')}/cancel`,
      body: { at_period_end: o.atPeriodEnd ?? o.at_period_end ?? true },
      idempotent: true,
    });
  }

  /** A link where the customer updates their card (Stripe's Billing Portal, or the test-mode page). */
  async billingPortal(id: string): Promise<BillingPortal> {
    return this.http.request({
      method: 'POST',
      path: `/api/v1/subscriptions/${segment(id, 'subscription id')}/billing_portal`,
      idempotent: false,
    });
  }
}
