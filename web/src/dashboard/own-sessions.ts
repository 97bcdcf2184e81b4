import type { Response } from 'express';
import { AppError } from '@licensing/runtime';
import type { SessionInfo } from '@licensing/proto';
import type { PageRoute } from '../kit/route-table';
import { html, type Html } from '../kit/template';
import { layout } from './pages';
import type { DashboardSession } from './session';
import type { SignInContext } from './sign-in';
import { csrfInput, date, table } from './widgets';

// Settings → "Your sessions": where the signed-in person is signed in (device, address, last seen),
// each of which they can end. Everyone's own, whatever their role.

function sessionsPage(s: DashboardSession, sessions: SessionInfo[], notice?: string): Html {
  const rows = sessions.map(
    (x) =>
      html`<tr data-session-id="${x.id}"><td>${x.user_agent || 'unknown device'}${x.current ? html` <strong>(this one)</strong>` : ''}</td><td>${x.ip}</td><td>${date(x.created_at)}</td><td>${date(x.last_seen_at)}</td><td>${x.current ? '' : html`<form method="post" action="/dashboard/settings/sessions/${x.id}/end" class="button-form">${csrfInput(s)}<button type="submit">End</button></form>`}</td></tr>`,
  );
  return layout(
    'Your sessions',
    html`${notice ? html`<p class="notice" role="status">${notice}</p>` : ''}
<h2>Where you are signed in</h2>
${table(['Device', 'Address', 'Signed in', 'Last seen', ''], rows)}
<p><a href="/dashboard/settings">Back to Settings</a></p>`,
    s,
    '/dashboard/settings',
  );
}

async function show(ctx: SignInContext, res: Response, s: DashboardSession, status: number, notice?: string) {
  const out = await ctx.clients.accounts.listSessions({ token: s.token });
  ctx.page(res, status, sessionsPage(s, out.data, notice));
}

const showSessions = (ctx: SignInContext) => ctx.signedIn(async (_req, res, s) => show(ctx, res, s, 200));

const endSession = (ctx: SignInContext) =>
  ctx.signedIn(async (req, res, s) => {
    try {
      await ctx.clients.accounts.endOwnSession({ token: s.token, session_id: String(req.params.id).slice(0, 64) });
      await show(ctx, res, s, 200, 'That session has ended: it is signed out.');
    } catch (err) {
      if (!(err instanceof AppError) || err.code !== 'not_found') throw err;
      await show(ctx, res, s, 404, 'No such session of yours (it may have ended already).');
    }
  });

export const OWN_SESSION_ROUTES: readonly PageRoute<SignInContext>[] = [
  { method: 'get', path: '/settings/sessions', handler: showSessions },
  { method: 'post', path: '/settings/sessions/:id/end', handler: endSession },
];
