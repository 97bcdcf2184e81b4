import {
  AccountServiceClient,
  CheckoutServiceClient,
  LicenseServiceClient,
  NotificationServiceClient,
  ProductServiceClient,
  SubscriptionServiceClient,
  WebhookServiceClient,
} from '@licensing/proto';
import type { Client } from '@grpc/grpc-js';
import type { Tracing } from '../observability/tracing';
import type { InternalCaller } from './internal-auth';
import { createClient, internalCredential } from './client';

/** A component's own credential and TLS towards the services (internalCredential's settings). */
type CredentialSettings = Parameters<typeof internalCredential>[1];

/** What the channels of a component that calls every service need (named as its configuration names them). */
export interface ServiceClientSettings extends CredentialSettings {
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
 * One long-lived gRPC channel per service for the life of the process, under the caller's own
 * credential: each service lets that caller call only the methods it needs (the service's access.ts).
 * The gateway and the web component both call every service this way; `open` adds a client of another
 * service under the same credential, closed with the rest.
 */
export function createServiceClients(caller: InternalCaller, config: ServiceClientSettings, tracing?: Tracing) {
  const credential = internalCredential(caller, config, tracing);
  const channels: Array<{ close(): void }> = [];
  const open = <C extends Client>(Ctor: Parameters<typeof createClient<C>>[0], address: string) => {
    const client = createClient(Ctor, address, credential, config.GRPC_TIMEOUT_MS);
    channels.push(client);
    return client.call;
  };
  const addrs = {
    account: config.ACCOUNT_GRPC_ADDR,
    product: config.PRODUCT_GRPC_ADDR,
    license: config.LICENSE_GRPC_ADDR,
    checkout: config.CHECKOUT_GRPC_ADDR,
    webhook: config.WEBHOOK_GRPC_ADDR,
    notification: config.NOTIFICATION_GRPC_ADDR,
  };
  return {
    credential,
    addrs,
    accounts: open(AccountServiceClient, addrs.account),
    products: open(ProductServiceClient, addrs.product),
    licenses: open(LicenseServiceClient, addrs.license),
    checkouts: open(CheckoutServiceClient, addrs.checkout),
    // Subscriptions are the checkout service's: the same address, a channel of their own.
    subscriptions: open(SubscriptionServiceClient, addrs.checkout),
    webhooks: open(WebhookServiceClient, addrs.webhook),
    notifications: open(NotificationServiceClient, addrs.notification),
    open,
    close() {
      for (const c of channels) c.close();
    },
  };
}

export type ServiceClients = ReturnType<typeof createServiceClients>;
