import type { Request, Response } from 'express';
import QRCode from 'qrcode';
import { AppError, addressKey } from '@licensing/runtime';
import type { PageRoute } from '../kit/route-table';
import { field } from './context';
import { codePage, enrolPage, mfaPage, recoveryCodesPage } from './mfa-pages';
import {
  CODE_STAGE_COOKIE,
  asVisitor,
  clearCodeStageCookie,
  issuePreSessionCsrf,
  preSessionCsrfOk,
  readCookie,
  setSessionCookie,
  type DashboardSession,
} from './session';
import { throttled, type SignInContext } from './sign-in';

// Two-factor sign-in in the dashboard: the sign-in's second step (a code from the app, or a recovery
// code) and Settings → Two-factor sign-in (enrol, see how many recovery codes are left, turn it off).
// The account service keeps the secret and judges every code; each wrong code is also counted
// against the client's address here, as wrong passwords are.

const showCodeForm =
  ({ page, secureCookies }: SignInContext) =>
  (req: Request, res: Response) => {
    if (!readCookie(req, CODE_STAGE_COOKIE)) return res.redirect(303, '/dashboard/signin');
    page(res, 200, codePage(issuePreSessionCsrf(res, secureCookies)));
  };

const submitCode =
  ({ page, clients, log, secureCookies, signInThrottle }: SignInContext) =>
  async (req: Request, res: Response) => {
    const form = (error: string) => codePage(issuePreSessionCsrf(res, secureCookies), error);
    if (!preSessionCsrfOk(req)) return page(res, 403, form('The form expired. Please try again.'));
    const token = readCookie(req, CODE_STAGE_COOKIE);
    if (!token) return res.redirect(303, '/dashboard/signin');
    asVisitor(req);
    const address = addressKey(req.ip); // IPv6 by its /64
    const wait = await signInThrottle.perAddress.fail(address);
    if (wait !== null) return page(res, 429, form(throttled(log, res, 'signin', wait, address)));
    try {
      const s = await clients.accounts.completeSignIn({ token: token.slice(0, 100), code: field(req, 'code', 40) });
      await signInThrottle.perAddress.forgive(address);
      clearCodeStageCookie(res, secureCookies);
      setSessionCookie(res, s.token, s.expires_at, secureCookies);
      res.redirect(303, '/dashboard');
    } catch (err) {
      if (!(err instanceof AppError) || err.code !== 'unauthorized') throw err;
      // A wrong code may be tried again; an expired or exhausted sign-in starts over from the password.
      if (err.fieldErrors.some((f) => f.field === 'code')) return page(res, 401, form(err.message));
      clearCodeStageCookie(res, secureCookies);
      page(res, 401, form(err.message));
    }
  };

async function showState(
  { clients, page }: SignInContext,
  res: Response,
  s: DashboardSession,
  status: number,
  opts: { error?: string; notice?: string } = {},
) {
  const state = await clients.accounts.getMfaStatus({ token: s.token });
  page(
    res,
    status,
    mfaPage(
      s,
      { enabled: state.enabled, recoveryCodesLeft: state.recovery_codes_left, required: state.required },
      opts,
    ),
  );
}

const showMfa = (ctx: SignInContext) => ctx.signedIn(async (_req, res, s) => showState(ctx, res, s, 200));

const qrOf = async (uri: string) =>
  `data:image/svg+xml;base64,${Buffer.from(await QRCode.toString(uri, { type: 'svg', margin: 2 })).toString('base64')}`;

const beginEnrolment = (ctx: SignInContext) =>
  ctx.signedIn(async (_req, res, s) => {
    try {
      const out = await ctx.clients.accounts.beginMfaEnrolment({ token: s.token });
      const enrolment = { secret: out.secret, otpauthUri: out.otpauth_uri, qrDataUrl: await qrOf(out.otpauth_uri) };
      ctx.page(res, 200, enrolPage(s, enrolment));
    } catch (err) {
      if (!(err instanceof AppError) || err.code !== 'conflict') throw err;
      await showState(ctx, res, s, 409, { error: err.message });
    }
  });

/**
 * What the enrol page carried back (the secret and its otpauth URI, the person's own), to show them again
 * beside a refused code; the service checks the code against the secret it keeps, never these.
 */
const BASE32_SECRET = /^[A-Z2-7]{16,64}$/;
const OTPAUTH_URI = /^otpauth:\/\/totp\/[^\s<>"]{1,500}$/;

const confirmEnrolment = (ctx: SignInContext) =>
  ctx.signedIn(async (req, res, s) => {
    try {
      const out = await ctx.clients.accounts.confirmMfaEnrolment({ token: s.token, code: field(req, 'code', 40) });
      // Enrolled: this request's session no longer needs to be sent to enrolment.
      ctx.page(res, 200, recoveryCodesPage({ ...s, mustEnrolMfa: false }, out.recovery_codes));
    } catch (err) {
      if (!(err instanceof AppError) || !['invalid_request', 'conflict'].includes(err.code)) throw err;
      const secret = field(req, 'secret', 64);
      const uri = field(req, 'otpauth_uri', 600);
      const wrongCode =
        err.code === 'invalid_request' && err.fieldErrors[0]?.message !== 'no enrolment is waiting for a code';
      if (wrongCode && BASE32_SECRET.test(secret) && OTPAUTH_URI.test(uri))
        return ctx.page(res, 400, enrolPage(s, { secret, otpauthUri: uri, qrDataUrl: await qrOf(uri) }, err.message));
      await showState(ctx, res, s, err.code === 'conflict' ? 409 : 400, { error: err.message });
    }
  });

const disable = (ctx: SignInContext) =>
  ctx.signedIn(async (req, res, s) => {
    try {
      await ctx.clients.accounts.disableMfa({ token: s.token, password: field(req, 'password', 201) });
      await showState(ctx, res, s, 200, { notice: 'Two-factor sign-in is off.' });
    } catch (err) {
      if (!(err instanceof AppError) || !['unauthorized', 'forbidden', 'conflict'].includes(err.code)) throw err;
      const status = { unauthorized: 400, forbidden: 403, conflict: 409 }[err.code as 'conflict'];
      await showState(ctx, res, s, status, { error: err.message });
    }
  });

export const MFA_ROUTES: readonly PageRoute<SignInContext>[] = [
  { method: 'get', path: '/signin/code', handler: showCodeForm },
  { method: 'post', path: '/signin/code', handler: submitCode },
  { method: 'get', path: '/settings/mfa', handler: showMfa },
  { method: 'post', path: '/settings/mfa/enrol', handler: beginEnrolment },
  { method: 'post', path: '/settings/mfa/confirm', handler: confirmEnrolment },
  { method: 'post', path: '/settings/mfa/disable', handler: disable },
];
