import type { Request, Response, Router } from 'express';
import { AppError, addressKey, type Logger } from '@licensing/runtime';
import type { Clients } from '../backends/clients';
import { attemptBoth as attempt, type AttemptThrottles } from '@licensing/runtime';
import { registerPageRoutes, type PageRoute } from '../kit/route-table';
import { PASSWORD_ROUTES } from './password';
import { INVITATION_ROUTES } from './invitations';
import { OWN_SESSION_ROUTES } from './own-sessions';
import { MFA_ROUTES } from './mfa';
import { field, type DashboardContext } from './context';
import { signInPage, signUpConfirmPage, signUpLinkProblemPage, signUpPage, signUpSentPage } from './sign-in-pages';
import {
  clearSessionCookie,
  issuePreSessionCsrf,
  preSessionCsrfOk,
  sessionOf,
  setSessionCookie,
  afterPassword,
  INCOMPLETE_LINK,
  linkToken,
  asVisitor,
} from './session';

// Signing in, signing up (a form, an e-mailed link, its confirmation) and signing out. Before a
// session exists, forms carry a pre-session CSRF token (a cookie and the same value in the form);
// sign-in and sign-up attempts are throttled per e-mail and per client address.

export type { AttemptThrottles };

export interface SignInDeps {
  clients: Clients;
  log: Logger;
  /** Secure cookies (everywhere but development and test). */
  secureCookies: boolean;
  signInThrottle: AttemptThrottles;
  /** Sign-ups per e-mail and per client address (every attempt counts: scrypt is expensive). */
  signUpThrottle: AttemptThrottles;
}

/** What the sign-in pages reach: the page sender, the signed-in guard (signing out) and their own dependencies. */
export type SignInContext = Pick<DashboardContext, 'page' | 'signedIn'> & SignInDeps;

/**
 * The sign-in throttle's per-member key: the e-mail with the client's address. Keyed by the e-mail
 * alone, someone guessing a member's password could lock that member out from everywhere; so a member
 * who signs in correctly from another address is never refused, and the address throttle bounds each
 * address over all e-mails (two-factor sign-in is the defence against guessing from many addresses).
 */
export const memberFromAddress = (email: string, address: string): string => `${email}|${address}`;

/** A throttled sign-in or sign-up: logged, counted under its window, Retry-After set; returns the message for the form. */
export function throttled(
  log: Logger,
  res: Response,
  window: 'signin' | 'signup',
  wait: number,
  address: string,
): string {
  const what = window === 'signin' ? 'sign-in' : 'sign-up';
  log.warn({ address }, `${what} throttled`);
  res.locals.rateLimitWindow = window;
  res.setHeader('Retry-After', String(wait));
  return `Too many ${what} attempts. Try again in ${Math.ceil(wait / 60)} minute(s).`;
}

const showSignIn =
  ({ page, secureCookies }: SignInContext) =>
  (_req: Request, res: Response) =>
    sessionOf(res)
      ? res.redirect(303, '/dashboard')
      : page(res, 200, signInPage(issuePreSessionCsrf(res, secureCookies)));

const showSignUp =
  ({ page, secureCookies }: SignInContext) =>
  (_req: Request, res: Response) =>
    sessionOf(res)
      ? res.redirect(303, '/dashboard')
      : page(res, 200, signUpPage(issuePreSessionCsrf(res, secureCookies)));

const signIn =
  ({ page, clients, log, secureCookies, signInThrottle }: SignInContext) =>
  async (req: Request, res: Response) => {
    const email = field(req, 'email', 254).trim().toLowerCase();
    const password = field(req, 'password', 200);
    const form = (error: string) => signInPage(issuePreSessionCsrf(res, secureCookies), { error, email });
    if (!preSessionCsrfOk(req)) return page(res, 403, form('The form expired. Please try again.'));
    asVisitor(req);
    const address = addressKey(req.ip); // IPv6 by its /64
    // Per member from this address: guesses from elsewhere never lock out the member signing in here.
    const member = memberFromAddress(email, address);
    // Counted before the password is checked, atomically: a parallel burst cannot slip past the limit.
    const wait = await attempt(signInThrottle, member, address);
    if (wait !== null) return page(res, 429, form(throttled(log, res, 'signin', wait, address)));
    try {
      const s = await clients.accounts.signIn({ email, password });
      // A right password is not a guess: its attempt is given back.
      await Promise.all([signInThrottle.perEmail.forgive(member), signInThrottle.perAddress.forgive(address)]);
      afterPassword(res, s, secureCookies, '/dashboard');
    } catch (err) {
      if (!(err instanceof AppError) || err.code !== 'unauthorized') throw err;
      page(res, 401, form('Wrong e-mail or password.'));
    }
  };

const signUp =
  ({ page, clients, log, secureCookies, signUpThrottle }: SignInContext) =>
  async (req: Request, res: Response) => {
    const values = { account_name: field(req, 'account_name', 100), email: field(req, 'email', 254) };
    const form = (error: string) => signUpPage(issuePreSessionCsrf(res, secureCookies), { error, values });
    if (!preSessionCsrfOk(req)) return page(res, 403, form('The form expired. Please try again.'));
    const address = addressKey(req.ip); // IPv6 by its /64
    const wait = await attempt(signUpThrottle, values.email.trim().toLowerCase(), address);
    if (wait !== null) return page(res, 429, form(throttled(log, res, 'signup', wait, address)));
    try {
      await clients.accounts.signUp({
        account_name: values.account_name,
        email: values.email,
        password: field(req, 'password', 201),
      });
      res.redirect(303, '/dashboard/signup/sent');
    } catch (err) {
      if (!(err instanceof AppError) || !['invalid_request', 'forbidden', 'service_unavailable'].includes(err.code))
        throw err;
      // Refused input says which field; a registered e-mail is not refused (its owner gets a mail instead).
      // forbidden: this server has no mail transport, so sign-up is closed.
      const status = { invalid_request: 400, forbidden: 403, service_unavailable: 503 }[err.code as 'invalid_request'];
      page(res, status, form(err.message));
    }
  };

const showSignUpSent =
  ({ page }: SignInContext) =>
  (_req: Request, res: Response) =>
    page(res, 200, signUpSentPage());

const showSignUpConfirm =
  ({ page, secureCookies }: SignInContext) =>
  (req: Request, res: Response) => {
    const token = linkToken(req);
    if (!token) return page(res, 400, signUpLinkProblemPage(INCOMPLETE_LINK));
    page(res, 200, signUpConfirmPage(issuePreSessionCsrf(res, secureCookies), token));
  };

const confirmSignUp =
  ({ page, clients, secureCookies }: SignInContext) =>
  async (req: Request, res: Response) => {
    asVisitor(req);
    const token = field(req, 'token', 100);
    if (!preSessionCsrfOk(req))
      return page(res, 403, signUpConfirmPage(issuePreSessionCsrf(res, secureCookies), token));
    try {
      const s = await clients.accounts.confirmSignUp({ token });
      setSessionCookie(res, s.token, s.expires_at, secureCookies);
      res.redirect(303, '/dashboard/settings');
    } catch (err) {
      if (!(err instanceof AppError) || !['invalid_request', 'conflict'].includes(err.code)) throw err;
      page(res, err.code === 'conflict' ? 409 : 400, signUpLinkProblemPage(err.message));
    }
  };

const signOut = ({ clients, secureCookies, signedIn }: SignInContext) =>
  signedIn(
    async (_req, res, s) => {
      await clients.accounts.endSession({ token: s.token });
      clearSessionCookie(res, secureCookies);
      res.redirect(303, '/dashboard/signin');
    },
    { metered: false },
  );

const SIGN_IN_ROUTES: readonly PageRoute<SignInContext>[] = [
  { method: 'get', path: '/signin', handler: showSignIn },
  { method: 'get', path: '/signup', handler: showSignUp },
  { method: 'post', path: '/signin', handler: signIn },
  { method: 'post', path: '/signup', handler: signUp },
  { method: 'get', path: '/signup/sent', handler: showSignUpSent },
  { method: 'get', path: '/signup/confirm', handler: showSignUpConfirm },
  { method: 'post', path: '/signup/confirm', handler: confirmSignUp },
  { method: 'post', path: '/signout', handler: signOut },
];

export function signInPages(
  r: Router,
  { page, signedIn }: Pick<DashboardContext, 'page' | 'signedIn'>,
  deps: SignInDeps,
): void {
  registerPageRoutes(
    r,
    [...SIGN_IN_ROUTES, ...PASSWORD_ROUTES, ...INVITATION_ROUTES, ...OWN_SESSION_ROUTES, ...MFA_ROUTES],
    {
      page,
      signedIn,
      ...deps,
    },
  );
}
