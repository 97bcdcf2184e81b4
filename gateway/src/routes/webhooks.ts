import type { RequestHandler, Router } from 'express';
import type { WebhookEndpoint } from '@licensing/proto';
import { principalOf } from '../auth/principal';
import type { Clients } from '../backends/clients';
import { checkId, pageShape, readBody, toPage, pageJson } from '../request-shapes/shapes';
import { webhookEndpointCreate, webhookEndpointUpdate } from '../request-shapes/operations';
import { registerRouteTable, withBody, withQuery, type RouteRow } from './route';

const deliveryJson = (d: import('@licensing/proto').WebhookDelivery) => ({
  id: d.id,
  event_id: d.event_id,
  event_type: d.event_type,
  status: d.status,
  attempts: d.attempts,
  last_status_code: d.last_status_code || null,
  last_error: d.last_error || null,
  last_latency_ms: d.attempts ? d.last_latency_ms : null,
  next_attempt_at: d.next_attempt_at || null,
  delivered_at: d.delivered_at || null,
  created_at: d.created_at,
});

/** REST shape of a webhook endpoint (the secret appears only on create and rotate). */
export const endpointJson = (e: WebhookEndpoint) => ({
  id: e.id,
  url: e.url,
  events: e.events,
  description: e.description || null,
  enabled: e.enabled,
  created_at: e.created_at,
});

function listEndpoints(clients: Clients): RequestHandler {
  return withQuery(pageShape, async (_req, res, query) => {
    const out = await clients.webhooks.listEndpoints({
      account_id: principalOf(res).accountId,
      page: toPage(query, 'we'),
    });
    res.json(pageJson(out.page!, out.data.map(endpointJson)));
  });
}

function createEndpoint(clients: Clients): RequestHandler {
  return withBody(webhookEndpointCreate, async (_req, res, body) => {
    const out = await clients.webhooks.createEndpoint({
      account_id: principalOf(res).accountId,
      url: body.url!,
      events: body.events!,
      description: body.description ?? '',
    });
    res
      .status(201)
      .location(`/api/v1/webhooks/${out.endpoint!.id}`)
      .json({ ...endpointJson(out.endpoint!), secret: out.secret });
  });
}

function getEndpoint(clients: Clients): RequestHandler {
  return async (req, res) => {
    const id = checkId('id', 'we', String(req.params.id));
    res.json(endpointJson(await clients.webhooks.getEndpoint({ account_id: principalOf(res).accountId, id })));
  };
}

function updateEndpoint(clients: Clients): RequestHandler {
  return withBody(webhookEndpointUpdate, async (req, res, body) => {
    const id = checkId('id', 'we', String(req.params.id));
    const out = await clients.webhooks.updateEndpoint({
      account_id: principalOf(res).accountId,
      id,
      url: body.url,
      events: body.events ?? [],
      description: body.description,
      enabled: body.enabled,
    });
    res.json(endpointJson(out));
  });
}

function deleteEndpoint(clients: Clients): RequestHandler {
  return async (req, res) => {
    const id = checkId('id', 'we', String(req.params.id));
    await clients.webhooks.deleteEndpoint({ account_id: principalOf(res).accountId, id });
    res.status(204).end();
  };
}

function listDeliveries(clients: Clients): RequestHandler {
  return withQuery(pageShape, async (req, res, query) => {
    const endpointId = checkId('id', 'we', String(req.params.id));
    // Delivery ids are not prefixed ids: any starting_after the service gave.
    const page = { limit: toPage({ limit: query.limit }, 'we').limit, starting_after: query.starting_after ?? '' };
    const out = await clients.webhooks.listDeliveries({
      account_id: principalOf(res).accountId,
      endpoint_id: endpointId,
      page,
    });
    res.json(pageJson(out.page!, out.data.map(deliveryJson)));
  });
}

function retryDelivery(clients: Clients): RequestHandler {
  return async (req, res) => {
    const endpointId = checkId('id', 'we', String(req.params.id));
    readBody(req, {});
    const out = await clients.webhooks.retryDelivery({
      account_id: principalOf(res).accountId,
      endpoint_id: endpointId,
      delivery_id: String(req.params.delivery).slice(0, 80),
    });
    res.json(deliveryJson(out));
  };
}

function sendTestEvent(clients: Clients): RequestHandler {
  return async (req, res) => {
    const id = checkId('id', 'we', String(req.params.id));
    readBody(req, {});
    res
      .status(202)
      .json(deliveryJson(await clients.webhooks.sendTestEvent({ account_id: principalOf(res).accountId, id })));
  };
}

function rotateSecret(clients: Clients): RequestHandler {
  return async (req, res) => {
    const id = checkId('id', 'we', String(req.params.id));
    readBody(req, {});
    const out = await clients.webhooks.rotateSecret({ account_id: principalOf(res).accountId, id });
    res.json({ ...endpointJson(out.endpoint!), secret: out.secret });
  };
}

/** The webhook endpoints and their deliveries. */
export const webhookRouteTable: readonly RouteRow<Clients>[] = [
  { method: 'get', path: '/webhooks', role: 'read_only', handler: listEndpoints },
  { method: 'post', path: '/webhooks', role: 'developer', handler: createEndpoint },
  { method: 'get', path: '/webhooks/:id', role: 'read_only', handler: getEndpoint },
  { method: 'patch', path: '/webhooks/:id', role: 'developer', handler: updateEndpoint },
  { method: 'delete', path: '/webhooks/:id', role: 'developer', handler: deleteEndpoint },
  { method: 'get', path: '/webhooks/:id/deliveries', role: 'read_only', handler: listDeliveries },
  { method: 'post', path: '/webhooks/:id/deliveries/:delivery/retry', role: 'developer', handler: retryDelivery },
  { method: 'post', path: '/webhooks/:id/test', role: 'developer', handler: sendTestEvent },
  { method: 'post', path: '/webhooks/:id/rotate-secret', role: 'developer', handler: rotateSecret },
];

export function webhookRoutes(router: Router, clients: Clients): void {
  registerRouteTable(router, webhookRouteTable, clients);
}
