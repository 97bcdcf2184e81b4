// The web component's composition root: main.ts starts the process and builds the long-lived pieces,
// this file wires them into one Express app, and config.ts is the one schema of settings. Every other
// file sits in a folder named for its job, and folders form layers: a folder imports only folders
// below it (never one beside or above it), and gets its settings as options from here.
// Layers, lowest first: backends < kit < dashboard, portal, checkout

import { randomUUID } from 'node:crypto';
import express from 'express';
import {
  AccessLog,
  AttemptThrottle,
  HttpMetrics,
  holdScope,
  httpMetrics,
  redirectToHttps,
  saneRequestId,
  withRequestId,
  type Logger,
  type Metrics,
  type RateLimits,
} from '@licensing/runtime';
import type { Clients } from './backends/clients';
import type { WebConfig } from './config';
import { checkoutRouter } from './checkout/routes';
import { sessionMeter } from './dashboard/metering';
import { dashboardRouter } from './dashboard/routes';
import { portalRouter } from './portal/routes';
import { html, sendPage } from './kit/template';

export interface WebDeps {
  config: WebConfig;
  clients: Clients;
  /** The rate limits in Redis, shared with the gateway: the throttles and the account's hourly quota. */
  limits: RateLimits;
  log: Logger;
  metrics: Metrics;
  /** One line per request (main.ts flushes it on stop); absent, one at LOG_LEVEL. */
  access?: AccessLog;
}

/** What the HTTP series name a page request by: its surface, never its path (a bounded set). */
const surfaceOf = (req: express.Request): string =>
  ['/dashboard', '/portal', '/checkout', '/healthz'].find((p) => req.path === p || req.path.startsWith(`${p}/`)) ??
  'unmatched';

const NOT_FOUND = html`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Not found</title></head><body><main><h1>Not found</h1><p>There is no such page.</p></main></body></html>`;

/** The trusted proxies' list for express (the gateway, the Ingress), never "any". */
const trustedProxies = (list: string) =>
  list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/**
 * Every page a person sees: the dashboard under /dashboard, the customer portal under /portal and the
 * hosted checkout page under /checkout.
 * The gateway (or the Ingress) sends those paths here unchanged; the client's address comes from
 * X-Forwarded-For, believed only from TRUSTED_PROXIES, so the per-address throttles count the browser.
 */
export function createWebApp({ config, clients, limits, log, metrics, access }: WebDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.set('trust proxy', trustedProxies(config.TRUSTED_PROXIES));
  // The HTTP series the gateway keeps too: a page refused by a throttle counts under the window that refused it
  // (signin, portal_signin, …), the series the password-guessing alert watches.
  app.use(httpMetrics(new HttpMetrics(metrics), surfaceOf));
  const accessLog = access ?? new AccessLog('web', config.LOG_LEVEL);
  // The gateway's request id (set by its proxy): a page's "Reference" names the request in both logs.
  app.use((req, res, next) => {
    const requestId = saneRequestId(req.get('x-request-id')) ?? randomUUID();
    res.locals.requestId = requestId;
    res.setHeader('X-Request-Id', requestId);
    const startedNs = process.hrtime.bigint();
    if (accessLog.enabled)
      res.on('finish', () =>
        accessLog.record({ requestId, method: req.method, url: req.originalUrl, status: res.statusCode, startedNs }),
      );
    res.once('close', holdScope()); // the scope lasts as long as the request (runtime's request-scope.ts)
    withRequestId(requestId, next);
  });
  app.use(redirectToHttps(config));
  app.get('/healthz', (_req, res) => void res.json({ status: 'ok' }));

  const throttle = (name: string, max: number, windowS = config.SIGNIN_WINDOW_S) =>
    new AttemptThrottle(limits.redis, config.RATE_LIMIT_PREFIX, name, max, windowS);
  const secureCookies = config.NODE_ENV === 'production';
  app.use(
    '/dashboard',
    dashboardRouter({
      clients,
      log,
      secureCookies,
      publicBaseUrl: config.PUBLIC_BASE_URL,
      hourlyUsage: (accountId, appTraffic) => limits.hourlyUsage(accountId, appTraffic),
      licensePerMinute: config.LICENSE_PER_MINUTE,
      meter: sessionMeter(limits),
      signInThrottle: {
        perEmail: throttle('signin-email', config.SIGNIN_FAILURES_PER_EMAIL),
        perAddress: throttle('signin-address', config.SIGNIN_FAILURES_PER_ADDRESS),
      },
      signUpThrottle: {
        perEmail: throttle('signup-email', config.SIGNUPS_PER_EMAIL, config.SIGNUP_WINDOW_S),
        perAddress: throttle('signup-address', config.SIGNUPS_PER_ADDRESS, config.SIGNUP_WINDOW_S),
      },
      unknownSessionThrottle: throttle('session-unknown', config.SESSION_FAILURES_PER_MINUTE, 60),
    }),
  );
  // The customer portal: public pages of each account, for its buyers (no API key; a session from an e-mailed link).
  app.use(
    '/portal',
    portalRouter({
      clients,
      log,
      secureCookies,
      signInThrottle: throttle(
        'portal-signin-address',
        config.PORTAL_SIGNINS_PER_ADDRESS,
        config.PORTAL_SIGNIN_WINDOW_S,
      ),
      lookupThrottle: throttle('portal-lookup-address', config.PORTAL_LOOKUPS_PER_ADDRESS_PER_MINUTE, 60),
      unknownSessionThrottle: throttle('portal-session-unknown', config.SESSION_FAILURES_PER_MINUTE, 60),
    }),
  );
  // The hosted checkout page: public, for buyers (the session id in its URL is the capability).
  app.use(
    '/checkout',
    checkoutRouter({
      clients,
      log,
      secureCookies,
      throttle: throttle('checkout-page', config.CHECKOUT_REQUESTS_PER_MINUTE, 60),
    }),
  );
  app.use((_req, res) => sendPage(res.set('Cache-Control', 'no-store'), NOT_FOUND, 404));
  return app;
}
