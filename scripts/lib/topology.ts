// The settings that wire the components together, in one place, for both
// `npm start` (child processes) and the tests (in process): what is common
// and who calls whom come from components.json, each component's own secrets
// and knobs from ownSettings below. Each component still validates its
// settings against its config schema.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tokenDigest, type InternalCaller, type InternalCredential, type InternalTls } from '@licensing/runtime';
import { componentToken } from './secrets';
import {
  addrSetting,
  calleesOf,
  componentNames,
  componentOf,
  isCaller,
  pageUrlSetting,
  services,
  web,
  type Component,
  type ComponentEntry,
} from './components';

export type { Component } from './components';

export interface Topology {
  mongoUrl: string;
  /** The gateway's DATA_DIR (release files under artifacts/ unless artifactStoreUrl says otherwise). */
  dataDir?: string;
  /** The gateway's ARTIFACT_STORE_URL (an S3-compatible store); absent: files under dataDir. */
  artifactStoreUrl?: string;
  /** When mongoUrl is the project's FerretDB over PostgreSQL: its PostgreSQL database (services add GIN indexes there). */
  ferretdbPostgresUrl?: string;
  /** Test runs: where services record their query shapes (npm test checks them against the declared indexes). */
  queryShapesDir?: string;
  natsUrl: string;
  /** Each component's NATS password when the server has a user per component (natsServerConfig); absent: no authentication. */
  natsPasswords?: Record<string, string>;
  /** A component's NATS user when it is not the component's name: its alternate login (`license_alt`) while its password rotates. */
  natsUsers?: Record<string, string>;
  /** How long the event stream keeps events (hours). */
  eventsRetentionHours?: number;
  /** On how many NATS nodes the event stream keeps every event (the set-up step's EVENTS_REPLICAS; default 1). */
  eventsReplicas?: number;
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
  /** Tests only: WEBHOOK_ENDPOINT_CONCURRENCY (requests to one endpoint in flight at once). */
  webhookEndpointConcurrency?: number;
  host: string;
  /** Where sign-up mail goes (MAIL_URL): `npm start` and the tests write it to a folder (dir://…); unset, sign-up is closed. */
  mailUrl?: string;
  /** Where customer mail goes (the notification service's MAIL_URL), when not where sign-up mail goes (tests: a real SMTP server). */
  customerMailUrl?: string;
  /** Tests only: a short retry schedule of customer mail ("0.2,0.2"), its send interval and SMTP timeout. */
  mailRetryScheduleS?: string;
  mailSendIntervalMs?: number;
  mailSendTimeoutMs?: number;
  /** OpenTelemetry's OTEL_* variables, given to every component (tests: a local OTLP receiver; `npm start` passes the shell's on). */
  otel?: Record<string, string>;
  /** The notification service's PORTAL_CLEANUP_INTERVAL_MS (shorter in tests). */
  portalCleanupIntervalMs?: number;
  /** Tests and bench: every /metrics listener on a free port (else each component's default). */
  metricsAnyPort?: boolean;
  /** Proxies the gateway believes X-Forwarded-Proto/-For from (production behind a TLS-terminating proxy). */
  trustedProxies?: string;
  nodeEnv: 'development' | 'test' | 'production';
  logLevel: string;
  outboxIntervalMs?: number;
  /** How often the licence service writes validation counts (tests use a short one). */
  statsFlushIntervalMs?: number;
  /** Tests only: the licence service's EXPORT_LEASE_MS (how long an export outlives a silent gateway). */
  exportLeaseMs?: number;
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

/** Which components call which service (each service's access.ts then says which methods): components.json. */
export const callersOf: Record<Component, InternalCaller[]> = Object.fromEntries(
  services.map((s) => [s.name, s.callers]),
);

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

/**
 * Where a component runs and what it reaches: its port (a service's gRPC port, the
 * gateway's HTTP port; 0 = any free port), a service's web page port, the
 * addresses of the services it calls and the gateway's public address.
 */
export interface Placement {
  port: number;
  httpPort?: number;
  /** host:port of each service by name, and the URL of a service's web page as `<name>Page` (see pageKey). */
  addrs?: Addrs;
  /** The gateway's public address, for links in mails and checkout pages (else each schema's default). */
  publicBaseUrl?: string;
}

/**
 * Where the services listen: `account` → "127.0.0.1:15051", …, `checkoutPage` → "http://127.0.0.1:8081"
 * (the checkout service's web server: Stripe's webhook receiver), `webPage` → the web component's pages.
 */
export type Addrs = Record<string, string>;
export const pageKey = (service: Component): string => `${service}Page`;

/** Where a component placed on `port` serves /metrics: a service on its gRPC port + 1000 (serviceSchema's rule), the gateway and the web component on their defaults. */
export const metricsPortOf = (name: Component, port: number): number =>
  componentOf(name).kind === 'service' ? port + 1000 : componentOf(name).ports.metrics;

function common(t: Topology, c: ComponentEntry): Record<string, string> {
  return {
    ...(t.natsPasswords
      ? { NATS_USER: t.natsUsers?.[c.name] ?? c.name, NATS_PASSWORD: t.natsPasswords[t.natsUsers?.[c.name] ?? c.name] }
      : {}),
    ...(t.eventsRetentionHours ? { EVENTS_RETENTION_HOURS: String(t.eventsRetentionHours) } : {}),
    ...tlsEnv(t, c.name),
    ...(isCaller(c.name) ? { INTERNAL_TOKEN: componentToken(t.internalToken, c.name) } : {}),
    ...(c.kind === 'service'
      ? {
          INTERNAL_CALLERS: c.callers
            .map((caller) => `${caller}=${tokenDigest(componentToken(t.internalToken, caller))}`)
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

/** The addresses of what a component calls: every service that lists it as a caller, and (gateway) the web servers it proxies. */
/** Whether `callee` starts after `caller` in components.json's order. */
const startsAfter = (callee: Component, caller: Component) =>
  componentNames.indexOf(callee) > componentNames.indexOf(caller);

function addresses(c: ComponentEntry, addrs: Addrs = {}): Record<string, string> {
  const out: Record<string, string> = {};
  const need = (key: string) => {
    if (!addrs[key]) throw new Error(`${c.name} needs the address of ${key}: start it first (components.json order)`);
    return addrs[key];
  };
  for (const callee of calleesOf(c.name)) {
    // A call against the start order (the product service asks the licence service, which calls it, only
    // when a product is deleted): its address when known already, else the setting's default.
    if (startsAfter(callee, c.name)) {
      if (addrs[callee]) out[addrSetting(callee)] = addrs[callee];
      continue;
    }
    out[addrSetting(callee)] = need(callee);
  }
  if (c.kind === 'gateway') {
    for (const s of services.filter((x) => x.ports.http !== undefined))
      out[pageUrlSetting(s.name)] = need(pageKey(s.name));
    if (web) out[pageUrlSetting(web.name)] = need(pageKey(web.name));
  }
  return out;
}

function httpPortOf(c: ComponentEntry, p: Placement): number {
  // Never a default: the gateway must be told where the page is, so whoever places the service picks the port.
  if (p.httpPort === undefined) throw new Error(`${c.name} serves a web page: its placement needs httpPort`);
  return p.httpPort;
}

function service(t: Topology, c: ComponentEntry, p: Placement): Record<string, string> {
  const metricsPort = t.metricsAnyPort || p.port === 0 ? 0 : metricsPortOf(c.name, p.port);
  return {
    ...common(t, c),
    MONGO_URL: t.mongoUrl,
    ...(t.ferretdbPostgresUrl ? { FERRETDB_POSTGRESQL_URL: t.ferretdbPostgresUrl } : {}),
    ...(t.queryShapesDir ? { QUERY_SHAPES_DIR: t.queryShapesDir } : {}),
    MONGO_DB: `${t.dbPrefix}_${c.name}`,
    GRPC_HOST: t.host,
    GRPC_PORT: String(p.port),
    METRICS_PORT: String(metricsPort),
    ...(c.ports.http !== undefined ? { HTTP_HOST: t.host, HTTP_PORT: String(httpPortOf(c, p)) } : {}),
  };
}

/** The web component: its HTTP port, Redis (throttles and the shared quota) and the proxies it believes. */
function webEnv(t: Topology, c: ComponentEntry, p: Placement): Record<string, string> {
  return {
    ...common(t, c),
    HOST: t.host,
    PORT: String(p.port),
    ...(t.metricsAnyPort || p.port === 0 ? { METRICS_PORT: '0' } : {}),
    REDIS_URL: t.redisUrl,
    RATE_LIMIT_PREFIX: t.rateLimitPrefix,
    ...(p.publicBaseUrl ? { PUBLIC_BASE_URL: p.publicBaseUrl } : {}),
  };
}

function gatewayEnv(t: Topology, c: ComponentEntry, p: Placement): Record<string, string> {
  return {
    ...common(t, c),
    HOST: t.host,
    PORT: String(p.port),
    ...(t.metricsAnyPort ? { METRICS_PORT: '0' } : {}),
    ...(t.trustedProxies ? { TRUSTED_PROXIES: t.trustedProxies } : {}),
    REDIS_URL: t.redisUrl,
    RATE_LIMIT_PREFIX: t.rateLimitPrefix,
    ...(t.statsFlushIntervalMs ? { VALIDATION_STATS_FLUSH_MS: String(t.statsFlushIntervalMs) } : {}),
  };
}

/** Settings only one component has (its secrets, test-only knobs). A component with none needs no entry. */
const ownSettings: Record<Component, (t: Topology, p: Placement) => Record<string, string>> = {
  account: (t, p) => ({
    API_KEY_PEPPER: t.apiKeyPepper,
    ...(t.mailUrl ? { MAIL_URL: t.mailUrl } : {}),
    ...(p.publicBaseUrl ? { PUBLIC_BASE_URL: p.publicBaseUrl } : {}),
  }),
  product: (t) => ({ SIGNING_KEY_SECRET: t.signingKeySecret }),
  gateway: (t, p) => ({
    ...(t.dataDir ? { DATA_DIR: t.dataDir } : {}),
    ...(t.artifactStoreUrl ? { ARTIFACT_STORE_URL: t.artifactStoreUrl } : {}),
    ...(p.publicBaseUrl ? { PUBLIC_BASE_URL: p.publicBaseUrl } : {}),
  }),
  license: (t) => ({
    ...(t.statsFlushIntervalMs ? { STATS_FLUSH_INTERVAL_MS: String(t.statsFlushIntervalMs) } : {}),
    ...(t.expirySweepIntervalMs ? { EXPIRY_SWEEP_INTERVAL_MS: String(t.expirySweepIntervalMs) } : {}),
    ...(t.exportLeaseMs ? { EXPORT_LEASE_MS: String(t.exportLeaseMs) } : {}),
  }),
  checkout: (t, p) => ({
    ...(p.publicBaseUrl ? { PUBLIC_BASE_URL: p.publicBaseUrl } : {}),
    ...(t.expirySweepIntervalMs ? { EXPIRY_SWEEP_INTERVAL_MS: String(t.expirySweepIntervalMs) } : {}),
    ...(t.paymentProvider ? { PAYMENT_PROVIDER: t.paymentProvider } : {}),
    ...(t.checkoutTestMode ? { CHECKOUT_TEST_MODE: 'true' } : {}),
    ...(t.stripeSecretKey ? { STRIPE_SECRET_KEY: t.stripeSecretKey } : {}),
    ...(t.stripeWebhookSecret ? { STRIPE_WEBHOOK_SECRET: t.stripeWebhookSecret } : {}),
    ...(t.stripeApiUrl ? { STRIPE_API_URL: t.stripeApiUrl } : {}),
  }),
  webhook: (t) => ({
    WEBHOOK_SECRET_KEY: t.webhookSecretKey,
    ...(t.webhookAllowLoopback ? { WEBHOOK_ALLOW_LOOPBACK: 'true' } : {}),
    ...(t.webhookRetryScheduleS ? { WEBHOOK_RETRY_SCHEDULE_S: t.webhookRetryScheduleS } : {}),
    ...(t.webhookTimeoutMs ? { WEBHOOK_TIMEOUT_MS: String(t.webhookTimeoutMs) } : {}),
    ...(t.webhookDispatchIntervalMs ? { WEBHOOK_DISPATCH_INTERVAL_MS: String(t.webhookDispatchIntervalMs) } : {}),
    ...(t.webhookEndpointConcurrency ? { WEBHOOK_ENDPOINT_CONCURRENCY: String(t.webhookEndpointConcurrency) } : {}),
  }),
  notification: (t, p) => ({
    ...((t.customerMailUrl ?? t.mailUrl) ? { MAIL_URL: (t.customerMailUrl ?? t.mailUrl)! } : {}),
    ...(p.publicBaseUrl ? { PUBLIC_BASE_URL: p.publicBaseUrl } : {}),
    ...(t.mailRetryScheduleS ? { MAIL_RETRY_SCHEDULE_S: t.mailRetryScheduleS } : {}),
    ...(t.mailSendIntervalMs ? { MAIL_SEND_INTERVAL_MS: String(t.mailSendIntervalMs) } : {}),
    ...(t.mailSendTimeoutMs ? { MAIL_SEND_TIMEOUT_MS: String(t.mailSendTimeoutMs) } : {}),
    ...(t.portalCleanupIntervalMs ? { PORTAL_CLEANUP_INTERVAL_MS: String(t.portalCleanupIntervalMs) } : {}),
  }),
};

/** The environment of one component in this topology (each component still checks it against its schema). */
export function envFor(name: Component, t: Topology, p: Placement): Record<string, string> {
  const c = componentOf(name);
  return {
    ...(c.kind === 'gateway' ? gatewayEnv(t, c, p) : c.kind === 'web' ? webEnv(t, c, p) : service(t, c, p)),
    ...addresses(c, p.addrs),
    ...(ownSettings[name]?.(t, p) ?? {}),
    ...(t.otel ?? {}),
  };
}
