import express, { Router, type NextFunction, type Request, type Response } from 'express';
import { AppError, addressKey, errorSummary, isId, type AttemptThrottle, type Logger } from '@licensing/runtime';
import type { Clients } from '../backends/clients';
import { refuseControlCharacters } from '../kit/form';
import { PAGE_CSP } from '../kit/security';
import { sendPage } from '../kit/template';
import { CHECKOUT_CSS, CHECKOUT_JS } from './assets';
import { cancel, pay, showBilling, showCancel, showCheckout, updateBilling, type CheckoutHandler } from './handlers';
import { messagePage } from './pages';

// The hosted checkout page under /checkout, public (the session id in the URL is the capability):
// its security headers and assets, a per-address throttle, then one handler per route (the table
// below), then its own 404 and error pages (never problem+json, never a 500 that says more).

export interface CheckoutPageDeps {
  clients: Clients;
  log: Logger;
  /** Secure cookies (everywhere but development and test). */
  secureCookies: boolean;
  /** Requests per client address and minute (every page request counts; the assets do not). */
  throttle: AttemptThrottle;
}

/** The routes of the hosted page: method, path (under /checkout), handler. */
export const CHECKOUT_ROUTES: readonly (readonly ['get' | 'post', string, CheckoutHandler])[] = [
  ['get', '/:id', showCheckout],
  ['post', '/:id/pay', pay],
  ['get', '/:id/cancel', showCancel],
  ['post', '/:id/cancel', cancel],
  ['get', '/:id/billing/:token', showBilling],
  ['post', '/:id/billing/:token', updateBilling],
];

/** The buyer's page sends no referrer (its URL is the capability) and is never cached or framed. */
const CHECKOUT_HEADERS = {
  'Content-Security-Policy': PAGE_CSP,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cache-Control': 'no-store',
} as const;

const NOT_FOUND = messagePage('Checkout not found', 'This checkout link is not valid. Ask the seller for a new one.');

/** The session id of a page path under /checkout ("/<id>[/…]"), if it is well formed. */
export function pageSessionId(path: string): string | undefined {
  try {
    const id = decodeURIComponent(path.split('/')[1] ?? '');
    return isId('cs', id) ? id : undefined;
  } catch {
    return undefined; // not percent-encoded UTF-8: no session
  }
}

const asset = (type: string, body: string) => (_req: Request, res: Response) =>
  void res.type(type).set('Cache-Control', 'public, max-age=3600').send(body);

/** Counts every page request per client address, and refuses one too many; a malformed session id is a 404 page. */
function limited(throttle: AttemptThrottle) {
  return async (req: Request, res: Response, next: NextFunction) => {
    const wait = await throttle.fail(addressKey(req.ip)); // IPv6 by its /64
    if (wait !== null) {
      res.locals.rateLimitWindow = 'checkout_page';
      res.set('Retry-After', String(wait));
      const tooMany = 'Too many requests from your address. Please wait a minute and try again.';
      return sendPage(res, messagePage('Too many requests', tooMany), 429);
    }
    // A malformed or impossible session id is not looked up: it cannot exist.
    if (!pageSessionId(req.path)) return sendPage(res, NOT_FOUND, 404);
    next();
  };
}

export function checkoutRouter({ clients, log, secureCookies, throttle }: CheckoutPageDeps): Router {
  const r = Router();
  r.use((_req, res, next) => {
    res.set(CHECKOUT_HEADERS);
    next();
  });
  r.get('/assets/checkout.css', asset('text/css', CHECKOUT_CSS));
  r.get('/assets/checkout.js', asset('application/javascript', CHECKOUT_JS));
  r.use(limited(throttle));
  r.use(express.urlencoded({ extended: false, limit: '8kb', parameterLimit: 10 }));
  r.use(refuseControlCharacters());
  const ctx = { pages: clients.checkoutPages, secureCookies };
  for (const [method, path, handler] of CHECKOUT_ROUTES) r[method](path, (req, res) => handler(ctx, req, res));
  r.use((_req, res) => sendPage(res, messagePage('Not found', 'There is no such page.'), 404));
  r.use(errorPage(log));
  return r;
}

/** Errors as pages: the buyer learns that nothing more was charged, and to reload. */
function errorPage(log: Logger) {
  return (err: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    // A path the router cannot decode names no session.
    if (err instanceof URIError) return sendPage(res, NOT_FOUND, 404);
    if (err instanceof AppError && err.code === 'invalid_request')
      return sendPage(res, messagePage('Bad request', `${err.message}. Go back, correct it and try again.`), 400);
    // A form the parser refused (too large, an encoding it cannot read) is the sender's.
    const status = Number((err as { status?: unknown } | null)?.status);
    if (status >= 400 && status < 500)
      return sendPage(res, messagePage('Bad request', 'This form could not be read. Go back and try again.'), status);
    const away = err instanceof AppError && err.code === 'service_unavailable';
    if (away) {
      log.warn({ err: errorSummary(err) }, 'checkout page: the checkout service is unavailable');
      res.setHeader('Retry-After', '5');
    } else log.error({ err: errorSummary(err) }, 'checkout page error');
    const msg = 'Nothing more was charged. Please reload the page in a moment.';
    sendPage(res, messagePage('Something went wrong', msg), away ? 503 : 500);
  };
}
