import type { Router } from 'express';
import { AppError } from '@licensing/runtime';
import type { CheckoutSession } from '@licensing/proto';
import { principalOf } from '../auth';
import type { Clients } from '../clients';
import { checkId, idempotencyKey, pageShape, readBody, readQuery, toPage } from '../validation';
import { route } from './route';

/** REST shape of a checkout session. */
export const checkoutJson = (s: CheckoutSession) => ({
  id: s.id,
  url: s.url,
  status: s.status,
  expires_at: s.expiresAt,
  product_id: s.productId,
  amount: s.amount,
  currency: s.currency,
  customer_email: s.customerEmail || null,
  success_url: s.successUrl,
  cancel_url: s.cancelUrl || null,
  metadata: s.metadata,
  license_key: s.licenseKey || null,
  livemode: s.livemode,
  created_at: s.createdAt,
});

const STATUSES = ['open', 'complete', 'expired'];

export function checkoutRoutes(router: Router, clients: Clients): void {
  route(router, '/checkout', {
    get: async (req, res) => {
      const query = readQuery(req, { ...pageShape, status: { max: 20 } });
      if (query.status && !STATUSES.includes(query.status))
        throw AppError.invalid('status', `status must be one of ${STATUSES.join(', ')}`);
      const out = await clients.checkouts.listSessions({
        accountId: principalOf(res).accountId,
        page: toPage(query, 'cs'),
        status: query.status ?? '',
      });
      res.json({
        data: out.data.map(checkoutJson),
        has_more: out.page!.hasMore,
        next_cursor: out.page!.nextCursor || null,
      });
    },
    post: async (req, res) => {
      const body = readBody(req, {
        product_id: { required: true, max: 64 },
        customer_email: { max: 254 },
        success_url: { required: true, max: 2048 },
        cancel_url: { max: 2048 },
        metadata: { kind: 'map', maxEntries: 50 },
        expires_in_minutes: { kind: 'int', min: -2_147_483_648, max: 2_147_483_647 },
      });
      if (body.expires_in_minutes === 0)
        throw AppError.invalid('expires_in_minutes', 'expires_in_minutes must be a whole number from 30 to 1440');
      const session = await clients.checkouts.createSession({
        accountId: principalOf(res).accountId,
        productId: body.product_id!,
        customerEmail: body.customer_email ?? '',
        successUrl: body.success_url!,
        cancelUrl: body.cancel_url ?? '',
        metadata: body.metadata ?? {},
        expiresInMinutes: body.expires_in_minutes ?? 0,
        idempotencyKey: idempotencyKey(req),
      });
      res.status(201).location(`/api/v1/checkout/${session.id}`).json(checkoutJson(session));
    },
  });

  route(router, '/checkout/:id', {
    get: async (req, res) => {
      const id = checkId('id', 'cs', String(req.params.id));
      res.json(checkoutJson(await clients.checkouts.getSession({ accountId: principalOf(res).accountId, id })));
    },
  });

  route(router, '/checkout/:id/expire', {
    post: async (req, res) => {
      const id = checkId('id', 'cs', String(req.params.id));
      readBody(req, {});
      res.json(checkoutJson(await clients.checkouts.expireSession({ accountId: principalOf(res).accountId, id })));
    },
  });
}
