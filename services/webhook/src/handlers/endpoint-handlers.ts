import type { Handlers } from '@licensing/runtime';
import type { WebhookDelivery, WebhookEndpoint, WebhookServiceService } from '@licensing/proto';
import type { DeliveryDoc } from '../store/deliveries';
import type { EndpointDoc } from '../store/models';
import { updateEndpoint, deleteEndpoint } from '../use-cases/change-endpoint';
import { createEndpoint, type EndpointWithSecret } from '../use-cases/create-endpoint';
import { retryDelivery, sendTestEvent } from '../use-cases/deliveries';
import type { EndpointDeps } from '../use-cases/deps';
import { findEndpoint, listDeliveries, listEndpoints } from '../use-cases/read-endpoints';
import { rotateSecret } from '../use-cases/rotate-secret';

const toEndpoint = (d: EndpointDoc): WebhookEndpoint => ({
  id: d._id,
  accountId: d.account_id,
  url: d.url,
  events: d.events,
  description: d.description,
  enabled: d.enabled,
  createdAt: d.created_at.toISOString(),
});

const withSecret = ({ endpoint, secret }: EndpointWithSecret) => ({ endpoint: toEndpoint(endpoint), secret });

const toDelivery = (d: DeliveryDoc): WebhookDelivery => ({
  id: d._id,
  endpointId: d.endpoint_id,
  eventId: d.event_id,
  eventType: d.event_type,
  status: d.status,
  attempts: d.attempts,
  lastStatusCode: d.last_status_code ?? 0,
  lastError: d.last_error ?? '',
  lastLatencyMs: d.last_latency_ms ?? 0,
  nextAttemptAt: d.next_attempt_at ? d.next_attempt_at.toISOString() : '',
  createdAt: d.created_at.toISOString(),
  deliveredAt: d.delivered_at ? d.delivered_at.toISOString() : '',
});

// Proto to use case and back; the rules live in use-cases/ and domain/.
export function endpointHandlers(deps: EndpointDeps): Handlers<typeof WebhookServiceService> {
  return {
    createEndpoint: async (req) => withSecret(await createEndpoint(deps, req)),
    getEndpoint: async (req) => toEndpoint(await findEndpoint(deps.endpoints, req.accountId, req.id)),
    updateEndpoint: async (req) => toEndpoint(await updateEndpoint(deps, req)),
    deleteEndpoint: async (req) => toEndpoint(await deleteEndpoint(deps, req.accountId, req.id)),
    rotateSecret: async (req) => withSecret(await rotateSecret(deps, req.accountId, req.id)),
    sendTestEvent: async (req) => toDelivery(await sendTestEvent(deps, req.accountId, req.id)),
    retryDelivery: async (req) => toDelivery(await retryDelivery(deps, req.accountId, req.endpointId, req.deliveryId)),

    async listEndpoints(req) {
      const { items, page } = await listEndpoints(deps.endpoints, req.accountId, req.page);
      return { data: items.map(toEndpoint), page };
    },

    async listDeliveries(req) {
      const { items, page } = await listDeliveries(deps, req.accountId, req.endpointId, req.page);
      return { data: items.map(toDelivery), page };
    },
  };
}
