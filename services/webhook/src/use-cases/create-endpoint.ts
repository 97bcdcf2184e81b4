import { AppError, newId, untilUncontended } from '@licensing/runtime';
import type { CreateWebhookEndpointRequest } from '@licensing/proto';
import { checkDescription, checkEvents, endpointCapReached, newSecret } from '../domain/endpoint';
import { checkWebhookUrl } from '../domain/ssrf';
import type { EndpointDoc } from '../store/models';
import type { EndpointDeps } from './deps';

/** The endpoint and its signing secret: the only time the secret is shown. */
export interface EndpointWithSecret {
  endpoint: EndpointDoc;
  secret: string;
}

/** A new endpoint within the account's cap, with a new signing secret (enabled unless asked otherwise: an import). */
export async function createEndpoint(
  { endpoints, clock, secretKey, urlPolicy, lookup, maxEndpoints }: EndpointDeps,
  req: CreateWebhookEndpointRequest,
): Promise<EndpointWithSecret> {
  const url = await checkWebhookUrl(req.url.trim(), urlPolicy, lookup);
  const secret = newSecret();
  const now = clock.now();
  const doc: Omit<EndpointDoc, 'slot_key'> = {
    _id: newId('we'),
    account_id: req.account_id,
    url,
    events: checkEvents(req.events),
    description: checkDescription(req.description),
    enabled: req.enabled ?? true,
    failing_since: null,
    secrets: [{ sealed: secretKey.seal(Buffer.from(secret)), created_at: now, expires_at: null }],
    created_at: now,
    deleted_at: null,
  };
  const stored = await untilUncontended(() => endpoints.insertWithinCap(doc, maxEndpoints));
  if (stored === null) endpointCapReached(maxEndpoints);
  if (stored === 'contended')
    throw new AppError(
      'conflict',
      'other webhook endpoints are being created for this account at this moment; try again',
    );
  return { endpoint: stored, secret };
}
