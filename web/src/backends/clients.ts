import { CheckoutPageServiceClient } from '@licensing/proto';
import { createServiceClients, type ServiceClientSettings, type Tracing } from '@licensing/runtime';

/** What the channels need (named as the web component's configuration names them): addresses, its own credential, the deadline. */
export type BackendSettings = ServiceClientSettings;

/**
 * One long-lived gRPC channel per service for the life of the process, under the web component's
 * own credential: each service lets "web" call only the methods the pages need (its access.ts).
 */
export function createClients(config: BackendSettings, tracing?: Tracing) {
  const { credential: _credential, addrs, open, ...clients } = createServiceClients('web', config, tracing);
  // The hosted checkout page's calls: the checkout service's address, a channel of their own.
  return { ...clients, checkoutPages: open(CheckoutPageServiceClient, addrs.checkout) };
}

export type Clients = ReturnType<typeof createClients>;
