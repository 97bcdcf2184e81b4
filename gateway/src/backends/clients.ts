import {
  AccountServiceClient,
  CheckoutServiceClient,
  ImportServiceClient,
  LicenseServiceClient,
  NotificationServiceClient,
  ProductServiceClient,
  SubscriptionServiceClient,
  WebhookServiceClient,
  health,
} from '@licensing/proto';
import { channelCredentials, createClient, internalCredential, type Tracing } from '@licensing/runtime';

/** The gateway's own credential and TLS towards the services (internalCredential's settings). */
type CredentialSettings = Parameters<typeof internalCredential>[1];

/** What the channels need (named as the gateway's configuration names them). */
export interface BackendSettings extends CredentialSettings {
  ACCOUNT_GRPC_ADDR: string;
  PRODUCT_GRPC_ADDR: string;
  LICENSE_GRPC_ADDR: string;
  CHECKOUT_GRPC_ADDR: string;
  WEBHOOK_GRPC_ADDR: string;
  NOTIFICATION_GRPC_ADDR: string;
  /** Deadline of each call. */
  GRPC_TIMEOUT_MS: number;
}

/** One long-lived gRPC channel per service for the life of the gateway. */
export function createClients(config: BackendSettings, tracing?: Tracing) {
  // The gateway's own credential: each service lets it call only the methods the API needs.
  const token = internalCredential('gateway', config, tracing);
  const timeout = config.GRPC_TIMEOUT_MS;
  const services = {
    account: config.ACCOUNT_GRPC_ADDR,
    product: config.PRODUCT_GRPC_ADDR,
    license: config.LICENSE_GRPC_ADDR,
    checkout: config.CHECKOUT_GRPC_ADDR,
    webhook: config.WEBHOOK_GRPC_ADDR,
    notification: config.NOTIFICATION_GRPC_ADDR,
  };
  const accounts = createClient(AccountServiceClient, services.account, token, timeout);
  const products = createClient(ProductServiceClient, services.product, token, timeout);
  const licenses = createClient(LicenseServiceClient, services.license, token, timeout);
  // Imports and exports are the licence service's too: the same address, a channel of their own.
  const imports = createClient(ImportServiceClient, services.license, token, timeout);
  const checkouts = createClient(CheckoutServiceClient, services.checkout, token, timeout);
  // Subscriptions are the checkout service's: the same address, a channel of their own.
  const subscriptions = createClient(SubscriptionServiceClient, services.checkout, token, timeout);
  const webhooks = createClient(WebhookServiceClient, services.webhook, token, timeout);
  const notifications = createClient(NotificationServiceClient, services.notification, token, timeout);
  const healthChecks = Object.fromEntries(
    Object.entries(services).map(([name, addr]) => [
      name,
      new health.HealthClient(addr, channelCredentials(token.tls)),
    ]),
  ) as Record<keyof typeof services, health.HealthClient>;
  return {
    accounts: accounts.call,
    products: products.call,
    licenses: licenses.call,
    imports: imports.call,
    checkouts: checkouts.call,
    subscriptions: subscriptions.call,
    webhooks: webhooks.call,
    notifications: notifications.call,
    health: healthChecks,
    close() {
      for (const c of [accounts, products, licenses, imports, checkouts, subscriptions, webhooks, notifications])
        c.close();
      for (const h of Object.values(healthChecks)) h.close();
    },
  };
}

export type Clients = ReturnType<typeof createClients>;
