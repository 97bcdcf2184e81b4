import type { Router } from 'express';
import { isId } from '@licensing/runtime';
import type { Email } from '@licensing/proto';
import { queryOf, type DashboardContext } from './context';
import { layout } from './pages';
import type { DashboardSession } from './session';
import { badge, date, empty, pager, table } from './widgets';
import { html, type Html } from '../kit/template';

// /dashboard/emails: the mail log (the notification service's ListEmails, as GET /api/v1/emails):
// who each customer e-mail went to, its state, attempts and the last error.

const PAGE = 25;

function emailsPage(s: DashboardSession, emails: Email[], after: string, next: string): Html {
  const rows = emails.map(
    (e) =>
      html`<tr data-email-id="${e.id}"><td>${e.to}</td><td>${e.template}</td><td><a href="/dashboard/licenses/${e.license_key}"><code>${e.license_key}</code></a></td><td>${badge(e.status)}</td><td>${e.attempts}</td><td>${e.last_error || '—'}</td><td>${date(e.created_at)}</td><td>${e.sent_at ? date(e.sent_at) : '—'}</td></tr>`,
  );
  return layout(
    'E-mails',
    html`<p>The e-mails sent to your customers on your behalf: the purchase e-mail after a checkout, or when you send a licence's again. Mail that could not be sent yet is retried on its own.</p>
${emails.length ? html`${table(['To', 'Template', 'Licence', 'Status', 'Attempts', 'Last error', 'Created', 'Sent'], rows)}${pager('/dashboard/emails', {}, after, next)}` : empty(after ? html`No more e-mails. <a href="/dashboard/emails">Back to the newest</a>.` : 'No e-mails yet. A purchase through checkout sends the buyer their key.')}`,
    s,
    '/dashboard/emails',
  );
}

export function emailPages(r: Router, ctx: DashboardContext): void {
  const { clients, page, signedIn } = ctx;
  r.get(
    '/emails',
    signedIn(async (req, res, s) => {
      const after = isId('eml', queryOf(req, 'starting_after', 64)) ? queryOf(req, 'starting_after', 64) : '';
      const out = await clients.notifications.listEmails({
        account_id: s.accountId,
        page: { limit: PAGE, starting_after: after },
      });
      page(res, 200, emailsPage(s, out.data, after, out.page!.has_more ? out.page!.next_cursor : ''));
    }),
  );
}
