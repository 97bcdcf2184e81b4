import { AppError } from '@licensing/runtime';
import type { UpdateWebhookEndpointRequest } from '@licensing/proto';
import { checkDescription, checkEvents } from '../domain/endpoint';
import { checkWebhookUrl } from '../domain/ssrf';
import type { EndpointDoc } from '../store/models';
import type { EndpointDeps } from './deps';
import { findEndpoint } from './read-endpoints';

/** Changes what is given (url, events, description, enabled); nothing given is refused. */
export async function updateEndpoint(
  { endpoints, urlPolicy, lookup }: EndpointDeps,
  req: UpdateWebhookEndpointRequest,
): Promise<EndpointDoc> {
  const current = await findEndpoint(endpoints, req.account_id, req.id);
  const changes: Partial<EndpointDoc> = {};
  if (req.url !== undefined) changes.url = await checkWebhookUrl(req.url.trim(), urlPolicy, lookup);
  if (req.events.length) changes.events = checkEvents(req.events);
  if (req.description !== undefined) changes.description = checkDescription(req.description);
  if (req.enabled !== undefined) changes.enabled = req.enabled;
  if (!Object.keys(changes).length)
    throw new AppError('invalid_request', 'nothing to change: give url, events, description and/or enabled');
  await endpoints.update(req.account_id, req.id, changes);
  return { ...current, ...changes };
}

/** Deletes the endpoint (its slot is freed for a new one); answers it as it was, disabled. */
export async function deleteEndpoint(
  { endpoints, clock }: EndpointDeps,
  accountId: string,
  id: string,
): Promise<EndpointDoc> {
  const current = await findEndpoint(endpoints, accountId, id);
  await endpoints.remove(accountId, id, clock.now());
  return { ...current, enabled: false };
}
