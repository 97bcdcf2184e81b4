import { memberPages } from './members';
import { auditPages } from './audit';
import express, { Router, type Response } from 'express';
import type { Logger } from '@licensing/runtime';
import type { Clients } from '../backends/clients';
import type { AttemptThrottle } from '@licensing/runtime';
import { refuseControlCharacters } from '../kit/form';
import { securedPages } from '../kit/security';
import { DASHBOARD_CSS, DASHBOARD_JS } from './assets';
import { checkoutPages } from './checkout';
import { subscriptionPages } from './subscriptions';
import { emailPages } from './emails';
import type { DashboardContext } from './context';
import { errorPages, notFoundPage } from './error-pages';
import { licenseBulkPages } from './license-bulk';
import { licensePages } from './licenses';
import { overviewPages } from './overview';
import { productPages } from './products';
import { releasePages } from './releases';
import { SessionGuard } from '../kit/session-guard';
import { loadSession, type DashboardSession } from './session';
import { limitsOf, settingsPages } from './settings';
import { signInPages, type AttemptThrottles } from './sign-in';
import { signedInGuard } from './signed-in';
import { webhookPages } from './webhooks';
import { sendPage, type Html } from '../kit/template';

export interface DashboardDeps {
  clients: Clients;
  log: Logger;
  /** Secure cookies (everywhere but development and test). */
  secureCookies: boolean;
  /** The gateway's public address, for the customer portal link on Settings ('' or absent: the request's origin). */
  publicBaseUrl?: string;
  signInThrottle: AttemptThrottles;
  /** Sign-ups per e-mail and per client address (every attempt counts: scrypt is expensive). */
  signUpThrottle: AttemptThrottles;
  /** Unknown session tokens per client address (made-up cookies must not each cost a look-up). */
  unknownSessionThrottle: AttemptThrottle;
  hourlyUsage?: DashboardContext['hourlyUsage'];
  licensePerMinute?: number;
  /** Counts a signed-in request against the account's limits (metering.ts); false: it answered 429. */
  meter?: (res: Response, s: DashboardSession) => Promise<boolean>;
}

/**
 * Form fields that may span lines: free text, and lists of entitlement codes (one a line if the vendor
 * likes): tab and line breaks allowed (never other controls).
 */
const MULTILINE_FIELDS = new Set(['description', 'entitlements', 'emails', 'notes']);

/**
 * The account dashboard under /dashboard, composed here: security headers, the static assets,
 * form parsing, the session; then each area in a file of its own (sign-in.ts: signing in, up and
 * out; settings.ts: the plan and API keys; the overview, products, licences, webhooks and checkout);
 * then the 404 and error pages. Server-rendered; it talks to the services over the same gRPC
 * contracts, with the same account scoping, as the REST API.
 */
export function dashboardRouter({
  clients,
  log,
  secureCookies,
  publicBaseUrl,
  signInThrottle,
  signUpThrottle,
  unknownSessionThrottle,
  hourlyUsage,
  licensePerMinute,
  meter,
}: DashboardDeps): Router {
  const r = Router();

  securedPages(r, { css: DASHBOARD_CSS, js: DASHBOARD_JS });
  // The bulk issuance form carries a pasted CSV of up to 1,000 rows: that form alone takes more.
  r.post('/licenses/batch', express.urlencoded({ extended: false, limit: '512kb', parameterLimit: 40 }));
  // A release's notes may be 10,000 characters, several times that once percent-encoded: its form takes more.
  r.post('/products/:id/releases', express.urlencoded({ extended: false, limit: '128kb', parameterLimit: 40 }));
  r.use(express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 40 }));
  r.use(refuseControlCharacters(MULTILINE_FIELDS));
  r.use(loadSession(clients, new SessionGuard(unknownSessionThrottle), secureCookies));

  const page = (res: Response, status: number, html: Html) => sendPage(res, html, status);
  const ctx: DashboardContext = {
    clients,
    hourlyUsage,
    licensePerMinute,
    publicBaseUrl,
    page,
    signedIn: signedInGuard(page, meter),
  };
  signInPages(r, ctx, { clients, log, secureCookies, signInThrottle, signUpThrottle });
  overviewPages(r, ctx, (s) => limitsOf(s, licensePerMinute));
  productPages(r, ctx);
  releasePages(r, ctx);
  licenseBulkPages(r, ctx); // before licensePages: "batch" is no key
  licensePages(r, ctx);
  webhookPages(r, ctx);
  checkoutPages(r, ctx);
  subscriptionPages(r, ctx);
  emailPages(r, ctx);
  settingsPages(r, ctx);
  auditPages(r, ctx);
  memberPages(r, ctx);

  r.use(notFoundPage(page));
  r.use(errorPages(page, log, secureCookies));
  return r;
}
