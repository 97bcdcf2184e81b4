import type { RequestHandler, Response, Router } from 'express';
import type { Subscription } from '@licensing/proto';
import { principalOf } from '../auth/principal';
import type { Clients } from '../backends/clients';
import type { LicenseValidator } from '../license-validation/validator';
import { checkId, readBody, toPage, pageJson } from '../request-shapes/shapes';
import { subscriptionCancel, subscriptionList, subscriptionTestClock } from '../request-shapes/operations';
import { registerRouteTable, withBody, withQuery, type RouteRow } from './route';

/** REST shape of a subscription (invoices and refunds only on GET of one: [] in lists). */
export const subscriptionJson = (s: Subscription) => ({
  id: s.id,
  status: s.status,
  product_id: s.product_id,
  customer_email: s.customer_email,
  license_key: s.license_key || null,
  quantity: s.quantity,
  current_period_start: s.current_period_start,
  current_period_end: s.current_period_end,
  cancel_at_period_end: s.cancel_at_period_end,
  trial_end: s.trial_end || null,
  livemode: s.livemode,
  created_at: s.created_at,
  interval: s.interval,
  interval_count: s.interval_count,
  amount: s.amount,
  currency: s.currency,
  canceled_at: s.canceled_at || null,
  test_clock: s.test_clock || null,
  invoices: s.invoices.map((i) => ({
    id: i.id,
    period_start: i.period_start,
    period_end: i.period_end,
    amount: i.amount,
    currency: i.currency,
    status: i.status,
    created_at: i.created_at,
  })),
  refunds: s.refunds.map((r) => ({
    invoice_id: r.invoice_id,
    cause: r.cause,
    amount: r.amount,
    currency: r.currency,
    refunded_at: r.refunded_at,
  })),
});

interface SubscriptionDeps {
  clients: Clients;
  validator: LicenseValidator;
}

/** The answer for a changed subscription, once this gateway has forgotten its copy of the licence. */
function changedSubscriptionJson(validator: LicenseValidator, res: Response, s: Subscription) {
  if (s.license_key) validator.changed(principalOf(res), s.license_key);
  return subscriptionJson(s);
}

function listSubscriptions({ clients }: SubscriptionDeps): RequestHandler {
  return withQuery(subscriptionList, async (_req, res, query) => {
    const out = await clients.subscriptions.listSubscriptions({
      account_id: principalOf(res).accountId,
      page: toPage(query, 'sub'),
      status: query.status ?? '',
      customer_email: query.customer_email ?? '',
      product_id: query.product_id ? checkId('product_id', 'prod', query.product_id) : '',
    });
    res.json(pageJson(out.page!, out.data.map(subscriptionJson)));
  });
}

function getSubscription({ clients }: SubscriptionDeps): RequestHandler {
  return async (req, res) => {
    const id = checkId('id', 'sub', String(req.params.id));
    res.json(
      subscriptionJson(await clients.subscriptions.getSubscription({ account_id: principalOf(res).accountId, id })),
    );
  };
}

function cancelSubscription({ clients, validator }: SubscriptionDeps): RequestHandler {
  return withBody(subscriptionCancel, async (req, res, body) => {
    const id = checkId('id', 'sub', String(req.params.id));
    const s = await clients.subscriptions.cancelSubscription({
      account_id: principalOf(res).accountId,
      id,
      at_period_end: body.at_period_end!,
    });
    res.json(changedSubscriptionJson(validator, res, s));
  });
}

function createBillingPortal({ clients }: SubscriptionDeps): RequestHandler {
  return async (req, res) => {
    const id = checkId('id', 'sub', String(req.params.id));
    readBody(req, {});
    res.json(await clients.subscriptions.createBillingPortal({ account_id: principalOf(res).accountId, id }));
  };
}

function advanceTestClock({ clients, validator }: SubscriptionDeps): RequestHandler {
  return withBody(subscriptionTestClock, async (req, res, body) => {
    const id = checkId('id', 'sub', String(req.params.id));
    const s = await clients.subscriptions.advanceTestClock({
      account_id: principalOf(res).accountId,
      id,
      advance_to: body.advance_to!,
    });
    res.json(changedSubscriptionJson(validator, res, s));
  });
}

/**
 * /api/v1/subscriptions: the checkout service's SubscriptionService. A change to a subscription changes
 * its licence (the licence service publishes it): this gateway forgets its copy at once, as after its
 * own licence changes, so its next validation answer is never from before.
 */
export const subscriptionRouteTable: readonly RouteRow<SubscriptionDeps>[] = [
  { method: 'get', path: '/subscriptions', role: 'read_only', handler: listSubscriptions },
  { method: 'get', path: '/subscriptions/:id', role: 'read_only', handler: getSubscription },
  { method: 'post', path: '/subscriptions/:id/cancel', role: 'developer', handler: cancelSubscription },
  { method: 'post', path: '/subscriptions/:id/billing_portal', role: 'developer', handler: createBillingPortal },
  { method: 'post', path: '/subscriptions/:id/test_clock', role: 'developer', handler: advanceTestClock },
];

export function subscriptionRoutes(router: Router, clients: Clients, validator: LicenseValidator): void {
  registerRouteTable(router, subscriptionRouteTable, { clients, validator });
}
