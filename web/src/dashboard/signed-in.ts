import type { Request, Response } from 'express';
import type { Handler, SignedInHandler } from './context';
import { messagePage } from './pages';
import { sessionOf, tokensMatch, type DashboardSession } from './session';
import type { Html } from '../kit/template';
import { roleCovers, type OperationRole } from '@licensing/proto';

/**
 * Pages behind sign-in: counted against the account's rate limits (like an API request, before
 * anything else is looked at; signing out is never refused); state-changing requests must also
 * carry the session's CSRF token. No session: to the sign-in page.
 */
export function signedInGuard(
  page: (res: Response, status: number, page: Html) => void,
  /** Counts a signed-in request against the account's limits (metering.ts); false: it answered 429. */
  meter?: (res: Response, s: DashboardSession) => Promise<boolean>,
) {
  return (handler: SignedInHandler, opts: { metered?: boolean } = {}): Handler =>
    async (req: Request, res: Response) => {
      const s = sessionOf(res);
      if (!s) return void res.redirect(303, '/dashboard/signin');
      // The account requires two-factor sign-in and this member has none: nothing else until they enrol.
      if (s.mustEnrolMfa && !ENROLMENT_PATHS.test(req.originalUrl.split('?')[0]))
        return void res.redirect(303, '/dashboard/settings/mfa');
      if (meter && opts.metered !== false && !(await meter(res, s))) return;
      if (
        req.method === 'POST' &&
        !tokensMatch(s.csrfToken, (req.body as Record<string, unknown> | undefined)?._csrf)
      ) {
        return page(
          res,
          403,
          messagePage(
            'This form has expired',
            'The form was not sent from this page or your session changed. Reload the page and try again.',
            s,
          ),
        );
      }
      const needed = dashboardRoleFor(req.method, req.originalUrl);
      if (!roleCovers(s.role, needed))
        return page(
          res,
          403,
          messagePage(
            'Not allowed for your role',
            `Your role (${s.role}) cannot do this: it needs ${needed} or above. Ask an admin or the owner of ${s.accountName}.`,
            s,
          ),
        );
      await handler(req, res, s);
    };
}

/** The pages a member sent to enrolment may still open (mfa.ts): the rest redirect to the first. */
const ENROLMENT_PATHS = /^\/dashboard\/(settings\/mfa(\/(enrol|confirm))?|signout)$/;

/**
 * What a dashboard request needs of the signed-in member's role (proto/rules/roles.ts), as the API's
 * routes need of a key's: reading is everyone's; a support member suspends, reinstates, renews and
 * rerolls licences, frees machines and sends a licence's mail again; changing anything else is a
 * developer's; the account's settings (API keys, the support e-mail) an admin's. Their own password
 * and signing out are everyone's. The services apply the same rules to what reaches them.
 */
const DASHBOARD_ROLES: readonly [method: string, path: RegExp, role: OperationRole][] = [
  [
    'POST',
    /^\/dashboard\/(signout|settings\/(password|mfa\/(enrol|confirm|disable))|settings\/sessions\/[^/]+\/end)$/,
    'read_only',
  ],
  ['POST', /^\/dashboard\/(settings|members)(\/|$)/, 'admin'],
  ['POST', /^\/dashboard\/licenses\/[^/]+\/(suspend|reinstate|renew|reroll|email)$/, 'support'],
  ['POST', /^\/dashboard\/licenses\/[^/]+\/activations\/[^/]+\/deactivate$/, 'support'],
  ['POST', /./, 'developer'],
  ['GET', /^\/dashboard\/(audit|members)(\/|$)/, 'admin'],
];

export function dashboardRoleFor(method: string, url: string): OperationRole {
  const path = url.split('?')[0];
  return DASHBOARD_ROLES.find(([m, p]) => m === method && p.test(path))?.[2] ?? 'read_only';
}
