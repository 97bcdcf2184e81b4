// The gateway's composition root: main.ts starts the process and builds the long-lived pieces,
// this file wires them into one request listener, and config.ts is the one schema of settings.
// Every other file sits in a folder named for its job, and folders form layers: a folder imports
// only folders below it (never one beside or above it, nor a file of the directory that holds it),
// and gets its settings as options from here (test/repository/layers.test.ts reads the order from the
// next line; docs/architecture.md, "The gateway's folders", says what each holds).
// Layers, lowest first: backends, artifacts < http < request-shapes < auth < rate-limits < license-validation < routes < openapi

import { idempotencyKeys } from './routes/idempotency-keys';
import { KEYED_POSTS, STREAMED_POSTS } from './request-shapes/idempotent-posts';
import type { IncomingMessage, RequestListener } from 'node:http';
import express, { Router } from 'express';
import {
  HttpMetrics,
  httpMetrics,
  systemClock,
  type AccessLog,
  type Clock,
  type Logger,
  type Metrics,
  type Tracing,
} from '@licensing/runtime';
import type { EventFeed } from './backends/event-feed';
import { recheckWith } from './auth/account-lookup';
import { AuthCache } from './auth/auth-cache';
import { authenticate } from './auth/authenticate';
import { LicenseCredentials } from './auth/license-credentials';
import { enforceScope } from './auth/scope';
import type { Clients } from './backends/clients';
import type { LicenseValidator } from './license-validation/validator';
import type { GatewayConfig } from './config';
import { errorHandler, notFound, wellFormedPath } from './http/errors';
import { AttemptThrottle, type RateLimits } from '@licensing/runtime';
import { countAuthFailure, enforceRateLimits, enforceRateLimitsAfterBody } from './rate-limits/middleware';
import { cors, corsPolicyOf } from './auth/cors';
import { stripeWebhookProxy } from './routes/stripe-webhook-proxy';
import { webPagesProxy } from './routes/web-proxy';

import { requestContext, versionAlias } from './http/request-context';
import { checkoutRoutes } from './routes/checkout';
import { subscriptionRoutes } from './routes/subscriptions';
import { ExportJobs } from './routes/export-jobs';
import { importRoutes } from './routes/imports';
import { webhookRoutes } from './routes/webhooks';
import { emailRoutes } from './routes/emails';
import { customerRoutes } from './routes/customers';
import { BATCH_BODY_LIMIT_BYTES, licenseBatchRoutes } from './routes/license-batches';
import { licenseRoutes } from './routes/licenses';
import { productRoutes } from './routes/products';
import { releaseRoutes } from './routes/releases';
import { artifactRoutes, downloadLinkRoutes, uploadGrantRoutes, type ArtifactDeps } from './routes/artifacts';
import { updateFeedRoutes } from './routes/update-feeds';
import type { ArtifactStore } from './artifacts/artifact-store';
import { DownloadLinks } from './artifacts/download-links';
import { FileArtifactStore } from './artifacts/file-store';
import { join } from 'node:path';
import { apiKeyRoutes } from './routes/api-keys';
import { auditEventRoutes } from './routes/audit-events';
import { memberRoutes } from './routes/members';
import { Readiness, statusRoutes } from './routes/status';
import { fastValidation } from './license-validation/fast-path';
import { routeLabel } from './http/metrics';
import { openApiRoutes } from './openapi/routes';
import { requireHttps, trustedProxies } from './http/transport';
import { requireJsonBody } from './request-shapes/shapes';

export interface GatewayDeps {
  config: GatewayConfig;
  clients: Clients;
  bus: EventFeed;
  limits: RateLimits;
  validator: LicenseValidator;
  log: Logger;
  /** One line per request (http/access-log.ts). */
  access: AccessLog;
  metrics: Metrics;
  version: string;
  /** True once shutdown has begun: /readyz answers 503. */
  draining?: { readonly now: boolean };
  /** For tests only: the validation fast path off, or on and telling each request it answered. */
  fastPath?: FastPathSwitch;
  /** OpenTelemetry, when the OTEL_* variables turn it on. */
  tracing?: Tracing;
  /** The exports this process writes (main.ts stops them on shutdown); a new set when absent. */
  exportJobs?: ExportJobs;
  /** What an export's 24 hours are measured by (the system's clock unless a test moves one). */
  clock?: Clock;
  /** Where release files live (main.ts makes it from ARTIFACT_STORE_URL); absent: DATA_DIR/artifacts. */
  artifacts?: ArtifactStore;
}

/** For tests that compare the fast path's answers with the Express route's (test/e2e/fast-path-parity.test.ts). */
export interface FastPathSwitch {
  enabled: boolean;
  /** Called for each request the fast path took (it answers it, not Express). */
  took?: (req: IncomingMessage) => void;
}

/**
 * Order matters: metrics → request id → HTTPS rule → /v1 alias → probes and
 * API description → /api/v1 (auth, whose failures
 * are counted per address → rate limits → scope → JSON body → routes) → the
 * Stripe webhook proxy and the web component's pages (the dashboard, the customer portal and the hosted
 * checkout page, no API key) → 404 →
 * the one error handler. Bodies are parsed only after the key is known and
 * counted, so anonymous or throttled clients cannot make the gateway parse anything.
 */
export function createApp(deps: GatewayDeps): RequestListener {
  const { config, clients, bus, limits, log, access, metrics, version, draining, tracing } = deps;
  const exportJobs = deps.exportJobs ?? new ExportJobs(clients, log);
  const clock = deps.clock ?? systemClock;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  // X-Forwarded-* are believed only from the configured proxies (req.ip, req.secure).
  app.set('trust proxy', trustedProxies(config));

  const http = new HttpMetrics(metrics);
  const authCache = new AuthCache(config.AUTH_CACHE_TTL_MS, bus, recheckWith(clients));
  const licenseCredentials = new LicenseCredentials(clients, bus, config.LICENSE_CREDENTIAL_CACHE_SIZE);
  app.use(httpMetrics(http, routeLabel));
  app.use(requestContext(access, tracing));
  app.use(requireHttps(config));
  app.use(versionAlias);
  app.use(wellFormedPath);
  app.use(cors(corsPolicyOf(config.CORS_ALLOWED_ORIGINS)));

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  const readiness = new Readiness(clients, limits);
  app.get('/readyz', async (_req, res) => {
    const { ready, body } = await readiness.check(draining?.now ?? false);
    res.status(ready ? 200 : 503).json(body);
  });
  openApiRoutes(app, version);

  const releaseFiles: ArtifactDeps = {
    clients,
    store: deps.artifacts ?? new FileArtifactStore(join(config.DATA_DIR, 'artifacts')),
    links: new DownloadLinks(config.INTERNAL_TOKEN),
    maxBytes: config.ARTIFACT_MAX_BYTES,
    publicBaseUrl: config.PUBLIC_BASE_URL,
    clock,
    log,
  };
  // A download link and an upload grant are their own credentials: served before the API's authentication.
  const downloadLinks = Router();
  downloadLinkRoutes(downloadLinks, releaseFiles);
  uploadGrantRoutes(downloadLinks, releaseFiles);
  app.use('/api/v1', downloadLinks);
  app.use('/api/v1', apiRouter(deps, authCache, licenseCredentials, exportJobs, clock, releaseFiles));

  mountStripeWebhookProxy(app, deps);
  // The dashboard, the customer portal and the hosted checkout page are the web component's (web/):
  // passed on unchanged, with the client's address in X-Forwarded-For, which its per-address throttles count.
  // A hosted checkout page's URL is a capability (its session id, a billing link's token): the access
  // log and the metrics name it by one label, never by its path.
  app.use('/checkout', (_req, res, next) => {
    res.locals.route = '/checkout/*';
    next();
  });
  app.use(webPagesProxy(deps.config.WEB_PAGE_URL, deps.log));

  app.use(notFound);
  app.use(errorHandler(log, config.BODY_LIMIT_BYTES));

  return withFastPath(app, deps, http, authCache, licenseCredentials);
}

/**
 * /api/v1: auth (whose failures are counted per address) → rate limits → scope → idempotency keys of the
 * streamed imports and their routes → JSON body → idempotency keys of the rest → every resource's routes.
 */
function apiRouter(
  { config, clients, limits, validator, log, bus, version }: GatewayDeps,
  authCache: AuthCache,
  licenseCredentials: LicenseCredentials,
  exportJobs: ExportJobs,
  clock: Clock,
  releaseFiles: ArtifactDeps,
): Router {
  const api = Router();
  api.use(authenticate(clients, authCache, licenseCredentials, countAuthFailure(limits, log)));
  api.use(enforceRateLimits(limits));
  api.use(enforceScope(log));
  // Imports take a file (jsonl or CSV) as their body, read as it streams: before the JSON body parser.
  api.use(idempotencyKeys(clients, STREAMED_POSTS, log));
  importRoutes(api, clients, log, exportJobs, { maxBytes: config.IMPORT_MAX_BYTES, clock });
  // Release files too: the raw file is the body, streamed into the artifact store.
  artifactRoutes(api, releaseFiles);
  updateFeedRoutes(api, { clients, publicBaseUrl: config.PUBLIC_BASE_URL });
  api.use(requireJsonBody);
  // A batch of up to 1,000 licences may carry more than BODY_LIMIT_BYTES; it alone gets a larger limit.
  api.post(
    '/licenses/batch',
    express.json({ limit: BATCH_BODY_LIMIT_BYTES, strict: false, type: ['application/json', 'application/*+json'] }),
  );
  api.use(
    express.json({ limit: config.BODY_LIMIT_BYTES, strict: false, type: ['application/json', 'application/*+json'] }),
  );
  api.use(enforceRateLimitsAfterBody(limits));
  api.use(
    idempotencyKeys(
      clients,
      KEYED_POSTS.filter((p) => !STREAMED_POSTS.includes(p)),
      log,
    ),
  );
  productRoutes(api, clients, validator);
  releaseRoutes(api, clients);
  licenseBatchRoutes(api, clients, validator);
  licenseRoutes(api, clients, validator);
  checkoutRoutes(api, clients);
  subscriptionRoutes(api, clients, validator);
  webhookRoutes(api, clients);
  emailRoutes(api, clients);
  customerRoutes(api, clients);
  statusRoutes(api, clients, bus, limits, version);
  apiKeyRoutes(api, clients);
  auditEventRoutes(api, clients);
  memberRoutes(api, clients);
  return api;
}

/**
 * The validation fast path answers the hot validation requests before Express (license-validation/
 * fast-path.ts); everything else, and all of it when a test turns it off, goes to the app.
 */
function withFastPath(
  app: express.Express,
  { config, limits, validator, log, access, tracing, draining, fastPath = { enabled: true } }: GatewayDeps,
  http: HttpMetrics,
  authCache: AuthCache,
  licenseCredentials: LicenseCredentials,
): RequestListener {
  const fast = fastValidation({
    transport: config,
    authCache,
    licenseCredentials,
    limits,
    validator,
    http,
    log,
    access,
    trustProxy: app.get('trust proxy fn'),
    tracing,
    draining,
  });
  if (!fastPath.enabled) return app;
  const took = fastPath.took;
  if (took)
    return (req, res) => {
      if (fast(req, res)) took(req);
      else app(req, res);
    };
  return (req, res) => {
    if (!fast(req, res)) app(req, res);
  };
}

/**
 * Stripe's webhooks, proxied to the checkout service (which holds the signing secret), with a
 * per-address throttle. The hosted checkout page is the web component's (webPagesProxy).
 */
function mountStripeWebhookProxy(app: express.Express, { config, limits, log }: GatewayDeps): void {
  app.use(
    stripeWebhookProxy(
      config.CHECKOUT_PAGE_URL,
      new AttemptThrottle(
        limits.redis,
        config.RATE_LIMIT_PREFIX,
        'stripe-webhook',
        config.STRIPE_WEBHOOK_REQUESTS_PER_MINUTE,
        60,
      ),
      log,
    ),
  );
}
