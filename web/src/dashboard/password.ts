import type { Request, Response } from 'express';
import { AppError, addressKey, attemptBoth as attempt } from '@licensing/runtime';
import type { PageRoute } from '../kit/route-table';
import { field } from './context';
import {
  changePasswordPage,
  forgotPasswordPage,
  resetLinkProblemPage,
  resetPasswordPage,
  resetSentPage,
} from './password-pages';
import { issuePreSessionCsrf, preSessionCsrfOk, afterPassword, INCOMPLETE_LINK, linkToken, asVisitor } from './session';
import type { SignInContext } from './sign-in';

// A forgotten password (a link by mail, then a new password with it) and changing one while signed in.
// Asking for a link is throttled per e-mail and per address as sign-ups are (each may send a mail).

const showForgot =
  ({ page, secureCookies }: SignInContext) =>
  (_req: Request, res: Response) =>
    page(res, 200, forgotPasswordPage(issuePreSessionCsrf(res, secureCookies)));

const askForLink =
  ({ page, clients, log, secureCookies, signUpThrottle }: SignInContext) =>
  async (req: Request, res: Response) => {
    const email = field(req, 'email', 254).trim().toLowerCase();
    const form = (error: string) => forgotPasswordPage(issuePreSessionCsrf(res, secureCookies), { error, email });
    if (!preSessionCsrfOk(req)) return page(res, 403, form('The form expired. Please try again.'));
    asVisitor(req);
    const address = addressKey(req.ip); // IPv6 by its /64
    const wait = await attempt(signUpThrottle, email, address);
    if (wait !== null) {
      log.warn({ address }, 'password reset requests throttled');
      res.setHeader('Retry-After', String(wait));
      return page(res, 429, form(`Too many requests. Try again in ${Math.ceil(wait / 60)} minute(s).`));
    }
    try {
      await clients.accounts.requestPasswordReset({ email });
      res.redirect(303, '/dashboard/password/sent');
    } catch (err) {
      if (!(err instanceof AppError) || !['invalid_request', 'forbidden'].includes(err.code)) throw err;
      page(res, err.code === 'forbidden' ? 403 : 400, form(err.message));
    }
  };

const showSent =
  ({ page }: SignInContext) =>
  (_req: Request, res: Response) =>
    page(res, 200, resetSentPage());

const showReset =
  ({ page, secureCookies }: SignInContext) =>
  (req: Request, res: Response) => {
    const token = linkToken(req);
    if (!token) return page(res, 400, resetLinkProblemPage(INCOMPLETE_LINK));
    page(res, 200, resetPasswordPage(issuePreSessionCsrf(res, secureCookies), token));
  };

const reset =
  ({ page, clients, secureCookies }: SignInContext) =>
  async (req: Request, res: Response) => {
    asVisitor(req);
    const token = field(req, 'token', 100);
    const form = (error?: string) => resetPasswordPage(issuePreSessionCsrf(res, secureCookies), token, error);
    if (!preSessionCsrfOk(req)) return page(res, 403, form('The form expired. Please try again.'));
    try {
      const s = await clients.accounts.resetPassword({ token, password: field(req, 'password', 201) });
      // A new password does not skip two-factor sign-in: with it on, the code form comes next.
      afterPassword(res, s, secureCookies, '/dashboard');
    } catch (err) {
      if (!(err instanceof AppError) || err.code !== 'invalid_request') throw err;
      // A weak password keeps the link usable: the form again. A used or expired link: a way to ask again.
      if (err.fieldErrors.some((f) => f.field === 'token')) return page(res, 400, resetLinkProblemPage(err.message));
      page(res, 400, form(err.message));
    }
  };

const showChange = ({ page, signedIn }: SignInContext) =>
  signedIn(async (_req, res, s) => page(res, 200, changePasswordPage(s)));

const change = ({ page, clients, signedIn }: SignInContext) =>
  signedIn(async (req, res, s) => {
    try {
      const out = await clients.accounts.changePassword({
        token: s.token,
        current_password: field(req, 'current_password', 201),
        new_password: field(req, 'new_password', 201),
      });
      const others = out.ended_sessions;
      page(
        res,
        200,
        changePasswordPage(s, {
          notice: `Password changed.${others ? ` ${others} other session${others === 1 ? ' was' : 's were'} signed out.` : ''}`,
        }),
      );
    } catch (err) {
      if (!(err instanceof AppError) || !['invalid_request', 'unauthorized'].includes(err.code)) throw err;
      page(res, 400, changePasswordPage(s, { error: err.message }));
    }
  });

export const PASSWORD_ROUTES: readonly PageRoute<SignInContext>[] = [
  { method: 'get', path: '/password/forgot', handler: showForgot },
  { method: 'post', path: '/password/forgot', handler: askForLink },
  { method: 'get', path: '/password/sent', handler: showSent },
  { method: 'get', path: '/password/reset', handler: showReset },
  { method: 'post', path: '/password/reset', handler: reset },
  { method: 'get', path: '/settings/password', handler: showChange },
  { method: 'post', path: '/settings/password', handler: change },
];
