import {
  AccountServiceClient,
  CheckoutPageServiceClient,
  CheckoutServiceClient,
  LicenseServiceClient,
  NotificationServiceClient,
  ProductServiceClient,
  SubscriptionServiceClient,
  WebhookServiceClient,
} from '@licensing/proto';
import { createClient, internalCredential, type Tracing } from '@licensing/runtime';

/** What the channels need (named as the web component's configuration names them): addresses, its own credential, the deadline. */
type CredentialSettings = Parameters<typeof internalCredential>[1];

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

/**
 * One long-lived gRPC channel per service for the life of the process, under the web component's
 * own credential: each service lets "web" call only the methods the pages need (its access.ts).
 */
export function createClients(config: BackendSettings, tracing?: Tracing) {
  const token = internalCredential('web', config, tracing);
  const timeout = config.GRPC_TIMEOUT_MS;
  const accounts = createClient(AccountServiceClient, config.ACCOUNT_GRPC_ADDR, token, timeout);
  const products = createClient(ProductServiceClient, config.PRODUCT_GRPC_ADDR, token, timeout);
  const licenses = createClient(LicenseServiceClient, config.LICENSE_GRPC_ADDR, token, timeout);
  const checkouts = createClient(CheckoutServiceClient, config.CHECKOUT_GRPC_ADDR, token, timeout);
  // Subscriptions are the checkout service's: the same address, a channel of their own.
  const subscriptions = createClient(SubscriptionServiceClient, config.CHECKOUT_GRPC_ADDR, token, timeout);
  // The hosted checkout page's calls: the same address, a channel of their own.
  const checkoutPages = createClient(CheckoutPageServiceClient, config.CHECKOUT_GRPC_ADDR, token, timeout);
  const webhooks = createClient(WebhookServiceClient, config.WEBHOOK_GRPC_ADDR, token, timeout);
  const notifications = createClient(NotificationServiceClient, config.NOTIFICATION_GRPC_ADDR, token, timeout);
  const all = [accounts, products, licenses, checkouts, subscriptions, checkoutPages, webhooks, notifications];
  return {
    accounts: accounts.call,
    products: products.call,
    licenses: licenses.call,
    checkouts: checkouts.call,
    subscriptions: subscriptions.call,
    checkoutPages: checkoutPages.call,
    webhooks: webhooks.call,
    notifications: notifications.call,
    close() {
      for (const c of all) c.close();
    },
  };
}

export type Clients = ReturnType<typeof createClients>;
