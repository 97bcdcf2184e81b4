import type { Request, Response } from 'express';
import { AppError } from '@licensing/runtime';
import type { PageRoute } from '../kit/route-table';
import { field } from './context';
import {
  issuePreSessionCsrf,
  preSessionCsrfOk,
  setSessionCookie,
  INCOMPLETE_LINK,
  linkToken,
  asVisitor,
} from './session';
import { invitationPage, invitationProblemPage } from './sign-in-pages';
import type { SignInContext } from './sign-in';

// An invitation's mailed link: the person gives their name and a password and joins the account,
// signed in. A used or expired link, or an address that already signs in here, says so with a way on.

const showInvitation =
  ({ page, secureCookies }: SignInContext) =>
  (req: Request, res: Response) => {
    const token = linkToken(req);
    if (!token) return page(res, 400, invitationProblemPage(INCOMPLETE_LINK));
    page(res, 200, invitationPage(issuePreSessionCsrf(res, secureCookies), token));
  };

const accept =
  ({ page, clients, secureCookies }: SignInContext) =>
  async (req: Request, res: Response) => {
    asVisitor(req);
    const token = field(req, 'token', 100);
    const name = field(req, 'name', 101);
    const form = (error: string) => invitationPage(issuePreSessionCsrf(res, secureCookies), token, { error, name });
    if (!preSessionCsrfOk(req)) return page(res, 403, form('The form expired. Please try again.'));
    try {
      const s = await clients.accounts.acceptInvitation({ token, name, password: field(req, 'password', 201) });
      setSessionCookie(res, s.token, s.expires_at, secureCookies);
      res.redirect(303, '/dashboard');
    } catch (err) {
      if (!(err instanceof AppError) || !['invalid_request', 'conflict'].includes(err.code)) throw err;
      // A bad name or password: the form again (the link still works). A spent link or a taken address: no form.
      if (err.code === 'conflict' || err.fieldErrors.some((f) => f.field === 'token'))
        return page(res, err.code === 'conflict' ? 409 : 400, invitationProblemPage(err.message));
      page(res, 400, form(err.message));
    }
  };

export const INVITATION_ROUTES: readonly PageRoute<SignInContext>[] = [
  { method: 'get', path: '/invitations/accept', handler: showInvitation },
  { method: 'post', path: '/invitations/accept', handler: accept },
];
