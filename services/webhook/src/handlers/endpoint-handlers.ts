import type { Handlers } from '@licensing/runtime';
import type { WebhookDelivery, WebhookEndpoint, WebhookServiceService } from '@licensing/proto';
import type { DeliveryDoc } from '../store/deliveries';
import type { EndpointDoc } from '../store/models';
import { updateEndpoint, deleteEndpoint } from '../use-cases/change-endpoint';
import { createEndpoint, type EndpointWithSecret } from '../use-cases/create-endpoint';
import { retryDelivery, sendTestEvent } from '../use-cases/deliveries';
import type { EndpointDeps } from '../use-cases/deps';
import { eraseCustomer } from '../use-cases/erase-customer';
import { findEndpoint, listDeliveries, listEndpoints } from '../use-cases/read-endpoints';
import { rotateSecret } from '../use-cases/rotate-secret';

const toEndpoint = (d: EndpointDoc): WebhookEndpoint => ({
  id: d._id,
  account_id: d.account_id,
  url: d.url,
  events: d.events,
  description: d.description,
  enabled: d.enabled,
  created_at: d.created_at.toISOString(),
});

const withSecret = ({ endpoint, secret }: EndpointWithSecret) => ({ endpoint: toEndpoint(endpoint), secret });

const toDelivery = (d: DeliveryDoc): WebhookDelivery => ({
  id: d._id,
  endpoint_id: d.endpoint_id,
  event_id: d.event_id,
  event_type: d.event_type,
  status: d.status,
  attempts: d.attempts,
  last_status_code: d.last_status_code ?? 0,
  last_error: d.last_error ?? '',
  last_latency_ms: d.last_latency_ms ?? 0,
  next_attempt_at: d.next_attempt_at ? d.next_attempt_at.toISOString() : '',
  created_at: d.created_at.toISOString(),
  delivered_at: d.delivered_at ? d.delivered_at.toISOString() : '',
});

// Proto to use case and back; the rules live in use-cases/ and domain/.
export function endpointHandlers(deps: EndpointDeps): Handlers<typeof WebhookServiceService> {
  return {
    eraseCustomer: async (req) => ({ erased: await eraseCustomer(deps.deliveries, req, deps.bodyChanged) }),
    createEndpoint: async (req) => withSecret(await createEndpoint(deps, req)),
    getEndpoint: async (req) => toEndpoint(await findEndpoint(deps.endpoints, req.account_id, req.id)),
    updateEndpoint: async (req) => toEndpoint(await updateEndpoint(deps, req)),
    deleteEndpoint: async (req) => toEndpoint(await deleteEndpoint(deps, req.account_id, req.id)),
    rotateSecret: async (req) => withSecret(await rotateSecret(deps, req.account_id, req.id)),
    sendTestEvent: async (req) => toDelivery(await sendTestEvent(deps, req.account_id, req.id)),
    retryDelivery: async (req) =>
      toDelivery(await retryDelivery(deps, req.account_id, req.endpoint_id, req.delivery_id)),

    async listEndpoints(req) {
      const { items, page } = await listEndpoints(deps.endpoints, req.account_id, req.page);
      return { data: items.map(toEndpoint), page };
    },

    async listDeliveries(req) {
      const { items, page } = await listDeliveries(deps, req.account_id, req.endpoint_id, req.page);
      return { data: items.map(toDelivery), page };
    },
  };
}
