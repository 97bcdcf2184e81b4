import type { Router } from 'express';
import type { WebhookEndpoint } from '@licensing/proto';
import { principalOf } from '../auth';
import type { Clients } from '../clients';
import { checkId, pageShape, readBody, readQuery, toPage } from '../validation';
import { route } from './route';

const deliveryJson = (d: import('@licensing/proto').WebhookDelivery) => ({
  id: d.id,
  event_id: d.eventId,
  event_type: d.eventType,
  status: d.status,
  attempts: d.attempts,
  last_status_code: d.lastStatusCode || null,
  last_error: d.lastError || null,
  last_latency_ms: d.attempts ? d.lastLatencyMs : null,
  next_attempt_at: d.nextAttemptAt || null,
  delivered_at: d.deliveredAt || null,
  created_at: d.createdAt,
});

/** REST shape of a webhook endpoint (the secret appears only on create and rotate). */
export const endpointJson = (e: WebhookEndpoint) => ({
  id: e.id,
  url: e.url,
  events: e.events,
  description: e.description || null,
  enabled: e.enabled,
  created_at: e.createdAt,
});

const events = { kind: 'list', maxItems: 50, maxLength: 64 } as const;

export function webhookRoutes(router: Router, clients: Clients): void {
  route(router, '/webhooks', {
    get: async (req, res) => {
      const out = await clients.webhooks.listEndpoints({
        accountId: principalOf(res).accountId,
        page: toPage(readQuery(req, pageShape), 'we'),
      });
      res.json({
        data: out.data.map(endpointJson),
        has_more: out.page!.hasMore,
        next_cursor: out.page!.nextCursor || null,
      });
    },
    post: async (req, res) => {
      const body = readBody(req, {
        url: { required: true, max: 2048 },
        events: { ...events, required: true },
        description: { max: 500 },
      });
      const out = await clients.webhooks.createEndpoint({
        accountId: principalOf(res).accountId,
        url: body.url!,
        events: body.events!,
        description: body.description ?? '',
      });
      res
        .status(201)
        .location(`/api/v1/webhooks/${out.endpoint!.id}`)
        .json({ ...endpointJson(out.endpoint!), secret: out.secret });
    },
  });

  route(router, '/webhooks/:id', {
    get: async (req, res) => {
      const id = checkId('id', 'we', String(req.params.id));
      res.json(endpointJson(await clients.webhooks.getEndpoint({ accountId: principalOf(res).accountId, id })));
    },
    patch: async (req, res) => {
      const id = checkId('id', 'we', String(req.params.id));
      const body = readBody(req, { url: { max: 2048 }, events, description: { max: 500 }, enabled: { kind: 'bool' } });
      const out = await clients.webhooks.updateEndpoint({
        accountId: principalOf(res).accountId,
        id,
        url: body.url,
        events: body.events ?? [],
        description: body.description,
        enabled: body.enabled,
      });
      res.json(endpointJson(out));
    },
    delete: async (req, res) => {
      const id = checkId('id', 'we', String(req.params.id));
      await clients.webhooks.deleteEndpoint({ accountId: principalOf(res).accountId, id });
      res.status(204).end();
    },
  });

  route(router, '/webhooks/:id/deliveries', {
    get: async (req, res) => {
      const endpointId = checkId('id', 'we', String(req.params.id));
      const query = readQuery(req, pageShape);
      const page = { limit: toPage({ limit: query.limit }, 'we').limit, startingAfter: query.starting_after ?? '' };
      const out = await clients.webhooks.listDeliveries({ accountId: principalOf(res).accountId, endpointId, page });
      res.json({
        data: out.data.map(deliveryJson),
        has_more: out.page!.hasMore,
        next_cursor: out.page!.nextCursor || null,
      });
    },
  });

  route(router, '/webhooks/:id/deliveries/:delivery/retry', {
    post: async (req, res) => {
      const endpointId = checkId('id', 'we', String(req.params.id));
      readBody(req, {});
      const out = await clients.webhooks.retryDelivery({
        accountId: principalOf(res).accountId,
        endpointId,
        deliveryId: String(req.params.delivery).slice(0, 80),
      });
      res.json(deliveryJson(out));
    },
  });

  route(router, '/webhooks/:id/test', {
    post: async (req, res) => {
      const id = checkId('id', 'we', String(req.params.id));
      readBody(req, {});
      res
        .status(202)
        .json(deliveryJson(await clients.webhooks.sendTestEvent({ accountId: principalOf(res).accountId, id })));
    },
  });

  route(router, '/webhooks/:id/rotate-secret', {
    post: async (req, res) => {
      const id = checkId('id', 'we', String(req.params.id));
      readBody(req, {});
      const out = await clients.webhooks.rotateSecret({ accountId: principalOf(res).accountId, id });
      res.json({ ...endpointJson(out.endpoint!), secret: out.secret });
    },
  });
}
