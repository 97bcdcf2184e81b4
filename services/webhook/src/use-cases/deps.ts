import { lookup as dnsLookup } from 'node:dns/promises';
import { Keyring, type Clock, type ServiceContext } from '@licensing/runtime';
import type { Lookup, UrlPolicy } from '../domain/ssrf';
import type { DeliveryDoc, DeliveryStore } from '../store/deliveries';
import type { EndpointStore } from '../store/queries';
import type { WebhookConfig } from '../config';

/** What the endpoint use cases work with; main.ts gives the real ones, unit tests fakes. */
export interface EndpointDeps {
  endpoints: EndpointStore;
  deliveries: DeliveryStore;
  clock: Clock;
  /** Seals endpoint signing secrets at rest (WEBHOOK_SECRET_KEY). */
  secretKey: Keyring;
  urlPolicy: UrlPolicy;
  /** Resolves a URL's host, so a name that points inside the network is refused. */
  lookup: Lookup;
  /** WEBHOOK_MAX_ENDPOINTS */
  maxEndpoints: number;
  /** Hands deliveries due now to the dispatcher, which sends them without waiting for its poll (absent: the poll finds them). */
  sendNow?: (deliveries: DeliveryDoc[]) => void;
  /** Tells the dispatcher a delivery's body changed in the store (it may hold the old one in memory). */
  bodyChanged?: (deliveryId: string) => void;
}

const resolveAll: Lookup = async (host) => (await dnsLookup(host, { all: true, verbatim: true })).map((a) => a.address);

export function endpointDeps(
  ctx: ServiceContext<WebhookConfig>,
  endpoints: EndpointStore,
  deliveries: DeliveryStore,
  lookup: Lookup = resolveAll,
): EndpointDeps {
  const production = ctx.config.NODE_ENV === 'production';
  return {
    endpoints,
    deliveries,
    clock: ctx.clock,
    secretKey: Keyring.parse(ctx.config.WEBHOOK_SECRET_KEY, 'WEBHOOK_SECRET_KEY'),
    urlPolicy: { httpsOnly: production, allowLoopback: !production && ctx.config.WEBHOOK_ALLOW_LOOPBACK },
    lookup,
    maxEndpoints: ctx.config.WEBHOOK_MAX_ENDPOINTS,
  };
}
