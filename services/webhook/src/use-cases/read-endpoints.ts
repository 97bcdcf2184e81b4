import { AppError, isId } from '@licensing/runtime';
import type { PageRequest } from '@licensing/proto';
import type { EndpointDoc } from '../store/models';
import type { EndpointStore } from '../store/queries';
import type { EndpointDeps } from './deps';

/** An endpoint of this account; a malformed id, another account's or a deleted one is not found. */
export async function findEndpoint(endpoints: EndpointStore, accountId: string, id: string): Promise<EndpointDoc> {
  const d = isId('we', id) ? await endpoints.find(accountId, id) : null;
  if (!d) throw AppError.notFound('webhook endpoint');
  return d;
}

export const listEndpoints = (endpoints: EndpointStore, accountId: string, page: PageRequest | undefined) =>
  endpoints.list(accountId, page);

/** The delivery log of one endpoint of this account. */
export async function listDeliveries(
  { endpoints, deliveries }: EndpointDeps,
  accountId: string,
  endpointId: string,
  page: PageRequest | undefined,
) {
  const endpoint = await findEndpoint(endpoints, accountId, endpointId);
  return deliveries.list(endpoint._id, page);
}
