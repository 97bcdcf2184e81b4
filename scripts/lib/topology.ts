// The settings that wire the components together, in one place, for both
// `npm start` (child processes) and the tests (in process). Each component
// still validates its own settings against its config schema.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tokenDigest, type InternalCaller, type InternalCredential, type InternalTls } from '@licensing/runtime';
import { componentToken } from './secrets';

export interface Topology {
  mongoUrl: string;
  /** When mongoUrl is the project's FerretDB over PostgreSQL: its PostgreSQL database (services add GIN indexes there). */
  ferretdbPostgresUrl?: string;
  /** Test runs: where services record their query shapes (npm test checks them against the declared indexes). */
  queryShapesDir?: string;
  natsUrl: string;
  /** Each component's NATS password when the server has a user per component (natsServerConfig); absent: no authentication. */
  natsPasswords?: Record<string, string>;
  /** How long the event stream keeps events (hours). */
  eventsRetentionHours?: number;
  redisUrl: string;
  /** Prefix of the rate-limit keys in Redis. */
  rateLimitPrefix: string;
  /** Prefix of database names; each service appends its own name. */
  dbPrefix: string;
  subjectPrefix: string;
  stream: string;
  /** Seed of every component's own internal token (componentToken); no component gets the seed itself. */
  internalToken: string;
  /** Optional mTLS between the components: a folder written by deploy/make-secrets.sh (ca.crt, <component>.crt/.key). */
  grpcTlsDir?: string;
  apiKeyPepper: string;
  /** 32 bytes, base64: encrypts licence-file signing keys at rest. */
  signingKeySecret: string;
  /** 32 bytes, base64: encrypts webhook endpoint secrets at rest. */
  webhookSecretKey: string;
  /** Development and tests only: webhook endpoints may point at loopback receivers. */
  webhookAllowLoopback?: boolean;
  /** Tests only: a short retry schedule ("0.2,0.2"), timeout and dispatch interval. */
  webhookRetryScheduleS?: string;
  webhookTimeoutMs?: number;
  webhookDispatchIntervalMs?: number;
  host: string;
  /** Where sign-up mail goes (MAIL_URL): `npm start` and the tests write it to a folder (dir://…); unset, sign-up is closed. */
  mailUrl?: string;
  /** Tests and bench: every /metrics listener on a free port (else each component's default). */
  metricsAnyPort?: boolean;
  /** Proxies the gateway believes X-Forwarded-Proto/-For from (production behind a TLS-terminating proxy). */
  trustedProxies?: string;
  nodeEnv: 'development' | 'test' | 'production';
  logLevel: string;
  outboxIntervalMs?: number;
  /** How often the licence service writes validation counts (tests use a short one). */
  statsFlushIntervalMs?: number;
  /** How often the licence service looks for licences to mark expired (tests use a short one). */
  expirySweepIntervalMs?: number;
  /** Checkout's payment provider (default: the built-in test mode). */
  paymentProvider?: 'test' | 'stripe';
  /** Production only: allow the test-mode provider on purpose. */
  checkoutTestMode?: boolean;
  /** With paymentProvider 'stripe': the keys, and stripe-mock's address in tests. */
  stripeSecretKey?: string;
  stripeWebhookSecret?: string;
  stripeApiUrl?: string;
}

export type Component = 'account' | 'product' | 'license' | 'checkout' | 'webhook' | 'gateway';

/** Which components call which service (each service's access.ts then says which methods). */
export const callersOf: Record<Exclude<Component, 'gateway'>, InternalCaller[]> = {
  account: ['gateway', 'operator'],
  product: ['gateway', 'license', 'checkout'],
  license: ['gateway', 'checkout'],
  checkout: ['gateway'],
  webhook: ['gateway'],
};

/** A caller's credential in this topology (tests and the operator CLI call services with it). */
export const credentialOf = (t: Topology, caller: InternalCaller): InternalCredential => ({
  caller,
  token: componentToken(t.internalToken, caller),
  tls: tlsOf(t, caller),
});

function tlsOf(t: Topology, component: string): InternalTls | undefined {
  if (!t.grpcTlsDir) return undefined;
  return {
    ca: readFileSync(join(t.grpcTlsDir, 'ca.crt')),
    cert: readFileSync(join(t.grpcTlsDir, `${component}.crt`)),
    key: readFileSync(join(t.grpcTlsDir, `${component}.key`)),
  };
}

function tlsEnv(t: Topology, component: string): Record<string, string> {
  if (!t.grpcTlsDir) return {};
  return {
    GRPC_TLS_CA_FILE: join(t.grpcTlsDir, 'ca.crt'),
    GRPC_TLS_CERT_FILE: join(t.grpcTlsDir, `${component}.crt`),
    GRPC_TLS_KEY_FILE: join(t.grpcTlsDir, `${component}.key`),
  };
}

function common(t: Topology, component: Component): Record<string, string> {
  return {
    ...(t.natsPasswords ? { NATS_USER: component, NATS_PASSWORD: t.natsPasswords[component] } : {}),
    ...(t.eventsRetentionHours ? { EVENTS_RETENTION_HOURS: String(t.eventsRetentionHours) } : {}),
    ...tlsEnv(t, component),
    ...(component === 'gateway' || component === 'license' || component === 'checkout'
      ? { INTERNAL_TOKEN: componentToken(t.internalToken, component) }
      : {}),
    ...(component !== 'gateway'
      ? {
          INTERNAL_CALLERS: callersOf[component]
            .map((c) => `${c}=${tokenDigest(componentToken(t.internalToken, c))}`)
            .join(','),
        }
      : {}),
    NODE_ENV: t.nodeEnv,
    LOG_LEVEL: t.logLevel,
    NATS_URL: t.natsUrl,
    EVENTS_SUBJECT_PREFIX: t.subjectPrefix,
    EVENTS_STREAM: t.stream,
    // Tests look for relayed events within seconds: the relay never idles longer there.
    ...(t.outboxIntervalMs
      ? { OUTBOX_INTERVAL_MS: String(t.outboxIntervalMs), OUTBOX_IDLE_INTERVAL_MS: String(t.outboxIntervalMs) }
      : {}),
  };
}

function service(t: Topology, name: Exclude<Component, 'gateway'>, port: number): Record<string, string> {
  // /metrics on the gRPC port + 1000 (the schemas' default for the default ports).
  const metricsPort = t.metricsAnyPort || port === 0 ? 0 : port + 1000;
  return {
    ...common(t, name),
    MONGO_URL: t.mongoUrl,
    ...(t.ferretdbPostgresUrl ? { FERRETDB_POSTGRESQL_URL: t.ferretdbPostgresUrl } : {}),
    ...(t.queryShapesDir ? { QUERY_SHAPES_DIR: t.queryShapesDir } : {}),
    MONGO_DB: `${t.dbPrefix}_${name}`,
    GRPC_HOST: t.host,
    GRPC_PORT: String(port),
    METRICS_PORT: String(metricsPort),
  };
}

export const envFor = {
  account: (t: Topology, port: number, publicBaseUrl?: string) => ({
    ...service(t, 'account', port),
    API_KEY_PEPPER: t.apiKeyPepper,
    ...(t.mailUrl ? { MAIL_URL: t.mailUrl } : {}),
    ...(publicBaseUrl ? { PUBLIC_BASE_URL: publicBaseUrl } : {}),
  }),
  product: (t: Topology, port: number) => ({ ...service(t, 'product', port), SIGNING_KEY_SECRET: t.signingKeySecret }),
  license: (t: Topology, port: number, productAddr: string) => ({
    ...service(t, 'license', port),
    PRODUCT_GRPC_ADDR: productAddr,
    ...(t.statsFlushIntervalMs ? { STATS_FLUSH_INTERVAL_MS: String(t.statsFlushIntervalMs) } : {}),
    ...(t.expirySweepIntervalMs ? { EXPIRY_SWEEP_INTERVAL_MS: String(t.expirySweepIntervalMs) } : {}),
  }),
  checkout: (
    t: Topology,
    port: number,
    httpPort: number,
    addrs: { product: string; license: string },
    publicBaseUrl: string,
  ) => ({
    ...service(t, 'checkout', port),
    HTTP_HOST: t.host,
    HTTP_PORT: String(httpPort),
    PRODUCT_GRPC_ADDR: addrs.product,
    LICENSE_GRPC_ADDR: addrs.license,
    PUBLIC_BASE_URL: publicBaseUrl,
    ...(t.expirySweepIntervalMs ? { EXPIRY_SWEEP_INTERVAL_MS: String(t.expirySweepIntervalMs) } : {}),
    ...(t.paymentProvider ? { PAYMENT_PROVIDER: t.paymentProvider } : {}),
    ...(t.checkoutTestMode ? { CHECKOUT_TEST_MODE: 'true' } : {}),
    ...(t.stripeSecretKey ? { STRIPE_SECRET_KEY: t.stripeSecretKey } : {}),
    ...(t.stripeWebhookSecret ? { STRIPE_WEBHOOK_SECRET: t.stripeWebhookSecret } : {}),
    ...(t.stripeApiUrl ? { STRIPE_API_URL: t.stripeApiUrl } : {}),
  }),
  webhook: (t: Topology, port: number) => ({
    ...service(t, 'webhook', port),
    WEBHOOK_SECRET_KEY: t.webhookSecretKey,
    ...(t.webhookAllowLoopback ? { WEBHOOK_ALLOW_LOOPBACK: 'true' } : {}),
    ...(t.webhookRetryScheduleS ? { WEBHOOK_RETRY_SCHEDULE_S: t.webhookRetryScheduleS } : {}),
    ...(t.webhookTimeoutMs ? { WEBHOOK_TIMEOUT_MS: String(t.webhookTimeoutMs) } : {}),
    ...(t.webhookDispatchIntervalMs ? { WEBHOOK_DISPATCH_INTERVAL_MS: String(t.webhookDispatchIntervalMs) } : {}),
  }),
  gateway: (
    t: Topology,
    port: number,
    addrs: {
      account: string;
      product: string;
      license: string;
      checkout: string;
      checkoutPage: string;
      webhook: string;
    },
  ) => ({
    ...common(t, 'gateway'),
    HOST: t.host,
    PORT: String(port),
    ...(t.metricsAnyPort ? { METRICS_PORT: '0' } : {}),
    ...(t.trustedProxies ? { TRUSTED_PROXIES: t.trustedProxies } : {}),
    REDIS_URL: t.redisUrl,
    RATE_LIMIT_PREFIX: t.rateLimitPrefix,
    ...(t.statsFlushIntervalMs ? { VALIDATION_STATS_FLUSH_MS: String(t.statsFlushIntervalMs) } : {}),
    ACCOUNT_GRPC_ADDR: addrs.account,
    PRODUCT_GRPC_ADDR: addrs.product,
    LICENSE_GRPC_ADDR: addrs.license,
    CHECKOUT_GRPC_ADDR: addrs.checkout,
    CHECKOUT_PAGE_URL: addrs.checkoutPage,
    WEBHOOK_GRPC_ADDR: addrs.webhook,
  }),
};
