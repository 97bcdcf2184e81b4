import type { Request, Response } from 'express';
import type { Handler, SignedInHandler } from './context';
import { messagePage } from './pages';
import { sessionOf, tokensMatch, type DashboardSession } from './session';
import type { Html } from '../kit/template';

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
      await handler(req, res, s);
    };
}
