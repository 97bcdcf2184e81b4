import { ImportServiceClient, health } from '@licensing/proto';
import { channelCredentials, createServiceClients, type ServiceClientSettings, type Tracing } from '@licensing/runtime';

/** What the channels need (named as the gateway's configuration names them). */
export type BackendSettings = ServiceClientSettings;

/**
 * One long-lived gRPC channel per service for the life of the gateway, under the gateway's own
 * credential: each service lets it call only the methods the API needs. Besides what every caller of
 * the services has (createServiceClients): the licence service's imports and exports, and each
 * service's health (GET /readyz).
 */
export function createClients(config: BackendSettings, tracing?: Tracing) {
  const services = createServiceClients('gateway', config, tracing);
  // Imports and exports are the licence service's too: the same address, a channel of their own.
  const imports = services.open(ImportServiceClient, services.addrs.license);
  const healthChecks = Object.fromEntries(
    Object.entries(services.addrs).map(([name, addr]) => [
      name,
      new health.HealthClient(addr, channelCredentials(services.credential.tls)),
    ]),
  ) as Record<keyof typeof services.addrs, health.HealthClient>;
  return {
    accounts: services.accounts,
    products: services.products,
    licenses: services.licenses,
    imports,
    checkouts: services.checkouts,
    subscriptions: services.subscriptions,
    webhooks: services.webhooks,
    notifications: services.notifications,
    health: healthChecks,
    close() {
      services.close();
      for (const h of Object.values(healthChecks)) h.close();
    },
  };
}

export type Clients = ReturnType<typeof createClients>;
