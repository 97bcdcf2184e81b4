import express, { Router, type NextFunction, type Request, type Response } from 'express';
import { AppError, addressKey, errorSummary, isId, type Logger } from '@licensing/runtime';
import type { Clients } from '../backends/clients';
import { refuseControlCharacters } from '../kit/form';
import { securedPages } from '../kit/security';
import { SessionGuard } from '../kit/session-guard';
import type { AttemptThrottle } from '@licensing/runtime';
import { PORTAL_CSS, PORTAL_JS } from './assets';
import { portalLicenses } from './licenses';
import { portalMessagePage } from './pages';
import { loadPortalSession, portalSessionOf, type Vendor } from './session';
import { portalSignIn } from './sign-in';
import { VendorCache } from './vendors';
import { sendPage, type Html } from '../kit/template';

// The customer portal under /portal/{account_id}, composed here: security headers and the shared
// assets, form parsing, the vendor (an unknown or malformed account id is the 404 page), the session;
// then signing in and out (sign-in.ts) and the licences (licenses.ts); then the portal's own 404 and
// error pages (never problem+json, never a 500 that says more than a reference).

export type PortalPage = (res: Response, status: number, page: Html) => void;

export interface PortalDeps {
  clients: Clients;
  log: Logger;
  /** Secure cookies (everywhere but development and test). */
  secureCookies: boolean;
  /**
   * Sign-in requests per client address (every request counts: each may send a mail). Per e-mail, the
   * notification service counts only the sign-in mails that go out (a stranger's requests cannot lock a
   * customer out).
   */
  signInThrottle: AttemptThrottle;
  /** Look-ups of portals' vendors not already known (cached for a minute), per client address. */
  lookupThrottle: AttemptThrottle;
  /** Unknown portal session tokens per client address (made-up cookies must not each cost a look-up). */
  unknownSessionThrottle: AttemptThrottle;
}

const page: PortalPage = (res, status, html) => sendPage(res, html, status);

/** Route templates for the access log and metrics: a portal URL may hold a licence key, which is never logged. */
function labelled(req: Request, res: Response, next: NextFunction): void {
  const sub = req.path.replace(/^\/acct_[^/]*/, '');
  res.locals.route = `/portal/:account_id${
    sub.startsWith('/licenses/')
      ? sub.replace(/^\/licenses\/[^/]+/, '/licenses/:key').replace(/\/activations\/[^/]+/, '/activations/:id')
      : sub === '' || sub === '/' || ['/sign-in', '/sign-out', '/link'].includes(sub)
        ? sub
        : '/*'
  }`;
  next();
}

/**
 * The vendor of the account in the URL, or the 404 page (a malformed id is not even looked up). Vendors,
 * and accounts that do not exist, are remembered for a minute; a client address asking for more
 * portals not remembered than its throttle allows gets a 429 page, not a look-up each.
 */
function vendorLoader(clients: Clients, throttle: AttemptThrottle, log: Logger) {
  const vendors = new VendorCache(async (id) => {
    try {
      const account = await clients.accounts.getAccount({ id });
      return { id: account.id, name: account.name };
    } catch (err) {
      if (err instanceof AppError && err.code === 'not_found') return null;
      throw err;
    }
  });
  return async (req: Request, res: Response, next: NextFunction) => {
    const id = String(req.params.account_id);
    if (!isId('acct', id)) return page(res, 404, notFound());
    let vendor = vendors.cached(id);
    if (vendor === undefined) {
      const address = addressKey(req.ip);
      const wait = await throttle.fail(address);
      if (wait !== null) {
        log.warn({ address }, 'portal look-ups throttled');
        res.locals.rateLimitWindow = 'portal_lookups';
        res.setHeader('Retry-After', String(wait));
        return page(
          res,
          429,
          portalMessagePage('Too many requests', `Too many requests from your address. Try again in ${wait} s.`),
        );
      }
      vendor = await vendors.lookUpAndRemember(id);
    }
    if (!vendor) return page(res, 404, notFound());
    res.locals.vendor = vendor satisfies Vendor;
    next();
  };
}

const notFound = (vendor?: Vendor) =>
  portalMessagePage('Not found', 'There is no such page here. Check the link, or sign in again.', vendor);

export function portalRouter({
  clients,
  log,
  secureCookies,
  signInThrottle,
  lookupThrottle,
  unknownSessionThrottle,
}: PortalDeps): Router {
  const r = Router();
  r.use(labelled);
  securedPages(r, { css: PORTAL_CSS, js: PORTAL_JS });

  const guard = new SessionGuard(unknownSessionThrottle);
  const account = Router({ mergeParams: true });
  account.use(vendorLoader(clients, lookupThrottle, log));
  account.use(express.urlencoded({ extended: false, limit: '8kb', parameterLimit: 10 }));
  account.use(refuseControlCharacters());
  // One guard for every account's portal: it counts per client address, whichever portal is probed.
  account.use(loadPortalSession(clients, guard, secureCookies));
  portalSignIn(account, page, { clients, log, secureCookies, throttle: signInThrottle });
  portalLicenses(account, page, clients, secureCookies);
  r.use('/:account_id', account);

  r.use((_req, res) => page(res, 404, notFound(res.locals.vendor as Vendor | undefined)));
  r.use(errorPage(log));
  return r;
}

/** Errors as pages: another customer's or account's object is simply not found. */
function errorPage(log: Logger) {
  return (err: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    const vendor = res.locals.vendor as Vendor | undefined;
    const s = vendor ? portalSessionOf(res) : undefined;
    const status = (err as { status?: unknown } | null)?.status;
    const app = err instanceof AppError ? err : undefined;
    if (app?.code === 'not_found') return page(res, 404, notFound(vendor));
    if (
      app?.code === 'invalid_request' ||
      err instanceof URIError ||
      (typeof status === 'number' && status >= 400 && status < 500 && status !== 413)
    )
      return page(
        res,
        400,
        portalMessagePage('Bad request', 'This request could not be understood. Go back and try again.', vendor, s),
      );
    // Too large a form, or too many fields in it (the parser's two refusals, both 413).
    if (status === 413)
      return page(res, 413, portalMessagePage('Too much data', 'The form was larger than allowed.', vendor, s));
    if (app?.code === 'service_unavailable') {
      res.setHeader('Retry-After', '5');
      return page(res, 503, portalMessagePage('Temporarily unavailable', 'Please try again in a moment.', vendor, s));
    }
    log.error({ err: errorSummary(err) }, 'portal error');
    page(
      res,
      500,
      portalMessagePage('Something went wrong', `Please try again. Reference: ${res.locals.requestId}`, vendor, s),
    );
  };
}
