import { AppError, newEnvelope } from '@licensing/runtime';
import { webhookBody } from '../events/fanout';
import type { DeliveryDoc } from '../store/deliveries';
import type { EndpointDeps } from './deps';
import { findEndpoint } from './read-endpoints';

/** Sends a failed (or still pending) delivery again at the next dispatch pass. */
export async function retryDelivery(
  { endpoints, deliveries, clock }: EndpointDeps,
  accountId: string,
  endpointId: string,
  deliveryId: string,
): Promise<DeliveryDoc> {
  const endpoint = await findEndpoint(endpoints, accountId, endpointId);
  const d = await deliveries.find(endpoint._id, deliveryId);
  if (!d) throw AppError.notFound('delivery');
  if (d.status === 'delivered') throw new AppError('conflict', 'this delivery already succeeded');
  if (!endpoint.enabled) throw new AppError('conflict', 'the endpoint is disabled: enable it first');
  const changes = { status: 'pending' as const, next_attempt_at: clock.now() };
  await deliveries.update(d._id, changes);
  return { ...d, ...changes };
}

/** A webhook.test event for this endpoint alone, due at once (not published to the bus: no one else gets it). */
export async function sendTestEvent(
  { endpoints, deliveries, clock }: EndpointDeps,
  accountId: string,
  id: string,
): Promise<DeliveryDoc> {
  const endpoint = await findEndpoint(endpoints, accountId, id);
  const event = newEnvelope('webhook.test', accountId, { endpoint: { id: endpoint._id } }, clock.now());
  const now = clock.now();
  const doc: DeliveryDoc = {
    _id: `dlv_${event.id.replace(/^evt_/, '')}_${endpoint._id.replace(/^we_/, '')}`,
    account_id: accountId,
    endpoint_id: endpoint._id,
    event_id: event.id,
    event_type: event.type,
    body: webhookBody(event),
    status: 'pending',
    attempts: 0,
    next_attempt_at: now,
    last_status_code: null,
    last_error: null,
    last_latency_ms: null,
    created_at: now,
    delivered_at: null,
  };
  await deliveries.record(doc);
  return doc;
}
