import type { Request, Response, Router } from 'express';
import { AppError, addressKey, checkEmail, type Logger } from '@licensing/runtime';
import type { Clients } from '../backends/clients';
import { csrfCookieMatches } from '../kit/cookies';
import { field, queryOf } from '../kit/form';
import type { AttemptThrottle } from '@licensing/runtime';
import { linkConfirmPage, linkProblemPage, linkSentPage, portalMessagePage, signInPage } from './pages';
import {
  PORTAL_CSRF_COOKIE,
  clearSessionCookie,
  issuePortalCsrf,
  portalPath,
  portalSessionOf,
  sessionCsrfOk,
  sessionCookie,
  toPortalSession,
  vendorOf,
} from './session';
import type { PortalPage } from './routes';

// Signing in with an e-mailed one-time link, and out. The e-mail form answers one fixed page whatever
// the address: the notification service decides, after this answer, whether a link goes out (only
// when the address holds licences of this account). Each request is counted per client address (every
// one: each may send a mail). Not per e-mail here: anyone can type a customer's address, so counting
// requests would let a stranger lock the customer out; the notification service counts the sign-in
// mails that actually go out to an address instead.

export interface PortalSignInDeps {
  clients: Clients;
  log: Logger;
  secureCookies: boolean;
  throttle: AttemptThrottle;
}

/** Longest token read from a link (the service says "used, expired or wrong" for anything else). */
const TOKEN_MAX = 200;

export function portalSignIn(r: Router, page: PortalPage, { clients, log, secureCookies, throttle }: PortalSignInDeps) {
  const csrf = (res: Response) => issuePortalCsrf(res, vendorOf(res).id, secureCookies);
  const csrfOk = (req: Request) => csrfCookieMatches(req, PORTAL_CSRF_COOKIE);

  r.post('/sign-in', async (req, res) => {
    const vendor = vendorOf(res);
    if (!csrfOk(req)) return page(res, 403, signInPage(vendor, csrf(res), 'The form expired. Please try again.'));
    const raw = field(req, 'email', 255);
    let email: string;
    try {
      email = checkEmail('email', raw).toLowerCase();
    } catch {
      return page(res, 400, signInPage(vendor, csrf(res), 'Enter an e-mail address, such as you@example.com.'));
    }
    const address = addressKey(req.ip); // IPv6 by its /64
    const wait = await throttle.fail(address);
    if (wait !== null) {
      log.warn({ address, account_id: vendor.id }, 'portal sign-in throttled');
      res.locals.rateLimitWindow = 'portal_signin';
      res.setHeader('Retry-After', String(wait));
      return page(
        res,
        429,
        signInPage(vendor, csrf(res), `Too many sign-in requests. Try again in ${Math.ceil(wait / 60)} minute(s).`),
      );
    }
    await clients.notifications.requestPortalLink({ account_id: vendor.id, email });
    page(res, 200, linkSentPage(vendor));
  });

  r.get('/link', (req, res) => {
    const vendor = vendorOf(res);
    const token = queryOf(req, 'token', TOKEN_MAX);
    if (!token) return page(res, 400, linkProblemPage(vendor, csrf(res)));
    page(res, 200, linkConfirmPage(vendor, csrf(res), token));
  });

  r.post('/link', async (req, res) => {
    const vendor = vendorOf(res);
    const token = field(req, 'token', TOKEN_MAX);
    if (!csrfOk(req)) return page(res, 403, linkConfirmPage(vendor, csrf(res), token));
    try {
      const s = await clients.notifications.redeemPortalLink({ account_id: vendor.id, token });
      res.append('Set-Cookie', sessionCookie(vendor.id, s.token, s.expires_at, secureCookies));
      const session = toPortalSession(s.token, s);
      const base = portalPath(vendor.id);
      res.redirect(303, session.licenseKey ? `${base}/licenses/${encodeURIComponent(session.licenseKey)}` : base);
    } catch (err) {
      if (!(err instanceof AppError) || err.code !== 'invalid_request') throw err;
      page(res, 400, linkProblemPage(vendor, csrf(res)));
    }
  });

  r.post('/sign-out', async (req, res) => {
    const vendor = vendorOf(res);
    const s = portalSessionOf(res);
    if (s) {
      if (!sessionCsrfOk(req, s))
        return page(res, 403, portalMessagePage('This form has expired', 'Reload the page and try again.', vendor, s));
      await clients.notifications.endPortalSession({ account_id: vendor.id, token: s.token });
    }
    clearSessionCookie(res, vendor.id, secureCookies);
    res.redirect(303, portalPath(vendor.id));
  });
}
