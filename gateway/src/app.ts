import express, { Router } from 'express';
import type { Logger, Metrics } from '@licensing/runtime';
import type { EventFeed } from './event-feed';
import { AuthCache, authenticate, enforceScope } from './auth';
import type { Clients } from './clients';
import type { GatewayConfig } from './config';
import { errorHandler, notFound } from './errors';
import { AttemptThrottle, countAuthFailure, enforceRateLimits, throttleAuthFailures, type RateLimits } from './limits';
import { dashboardRouter } from './dashboard/routes';
import { checkoutPageProxy } from './checkout-proxy';
import { requestContext, versionAlias } from './request-context';
import { checkoutRoutes } from './routes/checkout';
import { webhookRoutes } from './routes/webhooks';
import { licenseRoutes } from './routes/licenses';
import { productRoutes } from './routes/products';
import { readiness, statusRoutes } from './routes/status';
import { httpMetrics } from './metrics';
import { openApiRoutes } from './openapi/routes';
import { requireHttps, trustedProxies } from './transport';
import { requireJsonBody } from './validation';

export interface GatewayDeps {
  config: GatewayConfig;
  clients: Clients;
  bus: EventFeed;
  limits: RateLimits;
  log: Logger;
  metrics: Metrics;
  version: string;
  /** True once shutdown has begun: /readyz answers 503. */
  draining?: { readonly now: boolean };
}

/**
 * Order matters: metrics → request id → HTTPS rule → /v1 alias → probes and
 * API description → /api/v1 (auth-failure
 * throttle → auth → rate limits → scope → JSON body → routes) → 404 → the one
 * error handler. Bodies are parsed only after the key is known and counted, so
 * anonymous or throttled clients cannot make the gateway parse anything.
 */
export function createApp({ config, clients, bus, limits, log, metrics, version, draining }: GatewayDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  // X-Forwarded-* are believed only from the configured proxies (req.ip, req.secure).
  app.set('trust proxy', trustedProxies(config));

  app.use(httpMetrics(metrics));
  app.use(requestContext(log));
  app.use(requireHttps(config));
  app.use(versionAlias);

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const { ready, body } = await readiness(clients, limits, draining?.now ?? false);
    res.status(ready ? 200 : 503).json(body);
  });
  openApiRoutes(app, version);

  const api = Router();
  api.use(throttleAuthFailures(limits, log));
  api.use(authenticate(clients, new AuthCache(config.AUTH_CACHE_TTL_MS, bus), countAuthFailure(limits)));
  api.use(enforceRateLimits(limits));
  api.use(enforceScope(log));
  api.use(requireJsonBody);
  api.use(express.json({ limit: config.BODY_LIMIT_BYTES, strict: false, type: ['application/json', 'application/*+json'] }));
  productRoutes(api, clients);
  licenseRoutes(api, clients);
  checkoutRoutes(api, clients);
  webhookRoutes(api, clients);
  statusRoutes(api, clients, bus, limits, version);
  app.use('/api/v1', api);

  app.use(checkoutPageProxy(config.CHECKOUT_PAGE_URL, new AttemptThrottle(limits.redis, config.RATE_LIMIT_PREFIX, 'checkout-page', config.CHECKOUT_REQUESTS_PER_MINUTE, 60), log));

  const throttle = (name: string, max: number) => new AttemptThrottle(limits.redis, config.RATE_LIMIT_PREFIX, name, max, config.SIGNIN_WINDOW_S);
  app.use(
    '/dashboard',
    dashboardRouter({
      clients,
      log,
      secureCookies: config.NODE_ENV === 'production',
      signInThrottle: { perEmail: throttle('signin-email', config.SIGNIN_FAILURES_PER_EMAIL), perAddress: throttle('signin-address', config.SIGNIN_FAILURES_PER_ADDRESS) },
    }),
  );

  app.use(notFound);
  app.use(errorHandler(log, config.BODY_LIMIT_BYTES));
  return app;
}
