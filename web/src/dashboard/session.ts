import type { NextFunction, Request, Response } from 'express';
import { VISITOR_ACTOR_ID, type SessionResponse } from '@licensing/proto';
import { AppError, addressKey, isSessionToken, requestOrigin, setRequestOrigin } from '@licensing/runtime';
import type { Clients } from '../backends/clients';
import { cookieLine, issueCsrfCookie, readCookie, secondsUntil, tokensMatch } from '../kit/cookies';
import type { SessionGuard } from '../kit/session-guard';

// Dashboard sessions: an HttpOnly, SameSite cookie holding a random token
// (Secure outside development and test). State-changing forms carry a CSRF
// token: the session's own once signed in; before that (sign-in, sign-up) a
// double-submit token in its own cookie.
export const SESSION_COOKIE = 'lk_session';
/** A sign-in whose password was right, waiting for its second factor (it opens only the code form). */
export const CODE_STAGE_COOKIE = 'lk_signin';
export const PRE_CSRF_COOKIE = 'lk_csrf';
const PATH = '/dashboard';

export { readCookie, tokensMatch };

export interface DashboardSession {
  token: string;
  csrfToken: string;
  userEmail: string;
  accountId: string;
  accountName: string;
  plan: string;
  perMinuteLimit: number;
  perHourLimit: number;
  /** The signed-in person's member role (proto/rules/roles.ts): what the dashboard lets them do. */
  role: string;
  /** The account requires two-factor sign-in and this person has none: every page sends them to enrol. */
  mustEnrolMfa: boolean;
}

/** Clears the dashboard's cookies (after a malformed one, so the next request starts clean). */
export function clearAllCookies(res: Response, secure: boolean): void {
  clearSessionCookie(res, secure);
  res.append('Set-Cookie', cookie(PRE_CSRF_COOKIE, '', { maxAgeS: 0, secure, sameSite: 'Strict' }));
}

function cookie(name: string, value: string, opts: { maxAgeS: number; secure: boolean; sameSite: 'Lax' | 'Strict' }) {
  return cookieLine(name, value, { ...opts, path: PATH });
}

export function setSessionCookie(res: Response, token: string, expiresAt: string, secure: boolean): void {
  res.append(
    'Set-Cookie',
    cookie(SESSION_COOKIE, token, { maxAgeS: secondsUntil(expiresAt), secure, sameSite: 'Lax' }),
  );
}

/** Keeps the waiting sign-in's token for the code form (Strict: only this site's forms send it). */
export function setCodeStageCookie(res: Response, token: string, expiresAt: string, secure: boolean): void {
  res.append(
    'Set-Cookie',
    cookie(CODE_STAGE_COOKIE, token, { maxAgeS: secondsUntil(expiresAt), secure, sameSite: 'Strict' }),
  );
}

export function clearCodeStageCookie(res: Response, secure: boolean): void {
  res.append('Set-Cookie', cookie(CODE_STAGE_COOKIE, '', { maxAgeS: 0, secure, sameSite: 'Strict' }));
}

/**
 * Where a person goes once a password proved who they are (a sign-in, a reset link): with two-factor
 * sign-in, to the code form (the token waits in its own cookie); else signed in, to `next`.
 */
export function afterPassword(
  res: Response,
  s: Pick<SessionResponse, 'token' | 'expires_at' | 'code_required'>,
  secure: boolean,
  next: string,
): void {
  if (s.code_required) {
    setCodeStageCookie(res, s.token, s.expires_at, secure);
    return void res.redirect(303, '/dashboard/signin/code');
  }
  setSessionCookie(res, s.token, s.expires_at, secure);
  res.redirect(303, next);
}

export function clearSessionCookie(res: Response, secure: boolean): void {
  res.append('Set-Cookie', cookie(SESSION_COOKIE, '', { maxAgeS: 0, secure, sameSite: 'Lax' }));
}

/** A fresh double-submit token for a sign-in or sign-up form. */
export function issuePreSessionCsrf(res: Response, secure: boolean): string {
  return issueCsrfCookie(res, PRE_CSRF_COOKIE, PATH, secure);
}

function toSession(token: string, s: SessionResponse): DashboardSession {
  return {
    token,
    csrfToken: s.csrf_token,
    userEmail: s.user!.email,
    accountId: s.account!.id,
    accountName: s.account!.name,
    plan: s.account!.plan,
    perMinuteLimit: s.account!.per_minute_limit,
    perHourLimit: s.account!.per_hour_limit,
    role: s.role || 'owner',
    mustEnrolMfa: s.must_enrol_mfa,
  };
}

/**
 * Loads the session named by the cookie into res.locals.session, or leaves it unset. Made-up tokens
 * cost no look-up once known or once their address is over its limit (session-guard.ts); a cookie that
 * names no session is cleared, so the browser stops sending it.
 */
export function loadSession(clients: Clients, guard: SessionGuard, secure: boolean) {
  return async (req: Request, res: Response, next: NextFunction) => {
    const token = readCookie(req, SESSION_COOKIE);
    if (token) {
      const address = addressKey(req.ip);
      if (guard.mayLookUp(token, address)) {
        try {
          const found = await clients.accounts.getSession({ token });
          res.locals.session = toSession(token, found);
          // Who asks, for the events this request makes (the audit log): the signed-in member.
          setRequestOrigin(
            requestOrigin(
              { type: 'member', id: found.user!.id, name: found.user!.email },
              req.ip,
              req.headers['user-agent'],
            ),
          );
        } catch (err) {
          if (!(err instanceof AppError) || err.code !== 'unauthorized') throw err;
          await guard.unknownToken(token, address);
          clearSessionCookie(res, secure);
        }
      } else if (!isSessionToken(token)) clearSessionCookie(res, secure);
    }
    next();
  };
}

export const sessionOf = (res: Response): DashboardSession | undefined =>
  res.locals.session as DashboardSession | undefined;

/** Whether a form sent before any session carries the pre-session CSRF token its cookie holds. */
export const preSessionCsrfOk = (req: Request): boolean =>
  tokensMatch(readCookie(req, PRE_CSRF_COOKIE), (req.body as Record<string, unknown> | undefined)?._csrf);

/** The token of an e-mailed link (`?token=…`), cut to the most a token can be; '' when absent. */
export const linkToken = (req: Request): string =>
  typeof req.query.token === 'string' ? req.query.token.slice(0, 100) : '';

/** What a page says of an e-mailed link that arrived without its token. */
export const INCOMPLETE_LINK = 'This link is incomplete. Copy the whole link from the e-mail.';

/**
 * Before anyone is signed in (a sign-in, a reset or invitation link) a request names where it came from
 * and a visitor: the account service names the person the action is about (the audit log).
 */
export function asVisitor(req: Request): void {
  setRequestOrigin(requestOrigin({ type: 'member', id: VISITOR_ACTOR_ID }, req.ip, req.headers['user-agent']));
}
