import { AppError, newEnvelope } from '@licensing/runtime';
import { newDelivery, webhookBody } from '../events/fanout';
import type { DeliveryDoc } from '../store/deliveries';
import type { EndpointDeps } from './deps';
import { findEndpoint } from './read-endpoints';

/** Sends a failed (or still pending) delivery again, at once. */
export async function retryDelivery(
  { endpoints, deliveries, clock, sendNow }: EndpointDeps,
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
  sendNow?.([{ ...d, ...changes }]);
  return { ...d, ...changes };
}

/** A webhook.test event for this endpoint alone, due at once (not published to the bus: no one else gets it). */
export async function sendTestEvent(
  { endpoints, deliveries, clock, sendNow }: EndpointDeps,
  accountId: string,
  id: string,
): Promise<DeliveryDoc> {
  const endpoint = await findEndpoint(endpoints, accountId, id);
  const event = newEnvelope('webhook.test', accountId, { endpoint: { id: endpoint._id } }, clock.now());
  const doc = newDelivery(event, endpoint._id, webhookBody(event), clock.now());
  await deliveries.record(doc);
  sendNow?.([doc]);
  return doc;
}
