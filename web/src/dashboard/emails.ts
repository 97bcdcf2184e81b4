import type { Router } from 'express';
import { isId } from '@licensing/runtime';
import type { Email } from '@licensing/proto';
import { queryOf, type DashboardContext } from './context';
import { h, layout } from './pages';
import type { DashboardSession } from './session';
import { badge, date, empty, pager, table } from './widgets';

// /dashboard/emails: the mail log (the notification service's ListEmails, as GET /api/v1/emails):
// who each customer e-mail went to, its state, attempts and the last error.

const PAGE = 25;

function emailsPage(s: DashboardSession, emails: Email[], after: string, next: string): string {
  const rows = emails.map(
    (e) =>
      `<tr data-email-id="${h(e.id)}"><td>${h(e.to)}</td><td>${h(e.template)}</td><td><a href="/dashboard/licenses/${h(e.license_key)}"><code>${h(e.license_key)}</code></a></td><td>${badge(e.status)}</td><td>${e.attempts}</td><td>${h(e.last_error) || '—'}</td><td>${date(e.created_at)}</td><td>${e.sent_at ? date(e.sent_at) : '—'}</td></tr>`,
  );
  return layout(
    'E-mails',
    `<p>The e-mails sent to your customers on your behalf: the purchase e-mail after a checkout, or when you send a licence's again. Mail that could not be sent yet is retried on its own.</p>
${emails.length ? table(['To', 'Template', 'Licence', 'Status', 'Attempts', 'Last error', 'Created', 'Sent'], rows) + pager('/dashboard/emails', {}, after, next) : empty(after ? 'No more e-mails. <a href="/dashboard/emails">Back to the newest</a>.' : 'No e-mails yet. A purchase through checkout sends the buyer their key.')}`,
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
