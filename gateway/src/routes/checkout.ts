import type { RequestHandler, Router } from 'express';
import type { CheckoutSession } from '@licensing/proto';
import { principalOf } from '../auth/principal';
import type { Clients } from '../backends/clients';
import { checkId, idempotencyKey, readBody, toPage, pageJson } from '../request-shapes/shapes';
import { checkoutCreate, checkoutList } from '../request-shapes/operations';
import { registerRouteTable, withBody, withQuery, type RouteRow } from './route';

/** REST shape of a checkout session. */
export const checkoutJson = (s: CheckoutSession) => ({
  id: s.id,
  url: s.url,
  status: s.status,
  expires_at: s.expires_at,
  product_id: s.product_id,
  amount: s.amount,
  currency: s.currency,
  customer_email: s.customer_email || null,
  success_url: s.success_url,
  cancel_url: s.cancel_url || null,
  metadata: s.metadata,
  license_key: s.license_key || null,
  quantity: s.quantity || 1,
  subscription_id: s.subscription_id || null,
  livemode: s.livemode,
  created_at: s.created_at,
});

function listSessions(clients: Clients): RequestHandler {
  return withQuery(checkoutList, async (_req, res, query) => {
    const out = await clients.checkouts.listSessions({
      account_id: principalOf(res).accountId,
      page: toPage(query, 'cs'),
      status: query.status ?? '',
    });
    res.json(pageJson(out.page!, out.data.map(checkoutJson)));
  });
}

function createSession(clients: Clients): RequestHandler {
  return withBody(checkoutCreate, async (req, res, body) => {
    const session = await clients.checkouts.createSession({
      account_id: principalOf(res).accountId,
      product_id: body.product_id!,
      customer_email: body.customer_email ?? '',
      success_url: body.success_url!,
      cancel_url: body.cancel_url ?? '',
      metadata: body.metadata ?? {},
      expires_in_minutes: body.expires_in_minutes ?? 0,
      idempotency_key: idempotencyKey(req),
      quantity: body.quantity ?? undefined,
    });
    res.status(201).location(`/api/v1/checkout/${session.id}`).json(checkoutJson(session));
  });
}

function getSession(clients: Clients): RequestHandler {
  return async (req, res) => {
    const id = checkId('id', 'cs', String(req.params.id));
    res.json(checkoutJson(await clients.checkouts.getSession({ account_id: principalOf(res).accountId, id })));
  };
}

function expireSession(clients: Clients): RequestHandler {
  return async (req, res) => {
    const id = checkId('id', 'cs', String(req.params.id));
    readBody(req, {});
    res.json(checkoutJson(await clients.checkouts.expireSession({ account_id: principalOf(res).accountId, id })));
  };
}

/** Checkout sessions (the hosted page itself is the web component's: web-proxy.ts passes it on). */
export const checkoutRouteTable: readonly RouteRow<Clients>[] = [
  { method: 'get', path: '/checkout', role: 'read_only', handler: listSessions },
  { method: 'post', path: '/checkout', role: 'developer', handler: createSession },
  { method: 'get', path: '/checkout/:id', role: 'read_only', handler: getSession },
  { method: 'post', path: '/checkout/:id/expire', role: 'developer', handler: expireSession },
];

export function checkoutRoutes(router: Router, clients: Clients): void {
  registerRouteTable(router, checkoutRouteTable, clients);
}
