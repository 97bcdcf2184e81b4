// The settings that wire the components together, in one place, for both
// `npm start` (child processes) and the tests (in process). Each component
// still validates its own settings against its config schema.

export interface Topology {
  mongoUrl: string;
  /** When mongoUrl is the project's FerretDB over PostgreSQL: its PostgreSQL database (services add GIN indexes there). */
  ferretdbPostgresUrl?: string;
  /** Test runs: where services record their query shapes (npm test checks them against the declared indexes). */
  queryShapesDir?: string;
  natsUrl: string;
  redisUrl: string;
  /** Prefix of the rate-limit keys in Redis. */
  rateLimitPrefix: string;
  /** Prefix of database names; each service appends its own name. */
  dbPrefix: string;
  subjectPrefix: string;
  stream: string;
  internalToken: string;
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

function common(t: Topology): Record<string, string> {
  return {
    NODE_ENV: t.nodeEnv,
    LOG_LEVEL: t.logLevel,
    NATS_URL: t.natsUrl,
    EVENTS_SUBJECT_PREFIX: t.subjectPrefix,
    EVENTS_STREAM: t.stream,
    INTERNAL_TOKEN: t.internalToken,
    // Tests look for relayed events within seconds: the relay never idles longer there.
    ...(t.outboxIntervalMs ? { OUTBOX_INTERVAL_MS: String(t.outboxIntervalMs), OUTBOX_IDLE_INTERVAL_MS: String(t.outboxIntervalMs) } : {}),
  };
}

function service(t: Topology, name: string, port: number): Record<string, string> {
  // /metrics on the gRPC port + 1000 (the schemas' default for the default ports).
  const metricsPort = t.metricsAnyPort || port === 0 ? 0 : port + 1000;
  return { ...common(t), MONGO_URL: t.mongoUrl, ...(t.ferretdbPostgresUrl ? { FERRETDB_POSTGRESQL_URL: t.ferretdbPostgresUrl } : {}), ...(t.queryShapesDir ? { QUERY_SHAPES_DIR: t.queryShapesDir } : {}), MONGO_DB: `${t.dbPrefix}_${name}`, GRPC_HOST: t.host, GRPC_PORT: String(port), METRICS_PORT: String(metricsPort) };
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
  checkout: (t: Topology, port: number, httpPort: number, addrs: { product: string; license: string }, publicBaseUrl: string) => ({
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
  gateway: (t: Topology, port: number, addrs: { account: string; product: string; license: string; checkout: string; checkoutPage: string; webhook: string }) => ({
    ...common(t),
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
