import type { Router } from 'express';
import { AppError, isId } from '@licensing/runtime';
import { auditEventJson, type AuditEvent } from '@licensing/proto';
import { queryOf, type DashboardContext } from './context';
import { layout } from './pages';
import type { DashboardSession } from './session';
import { date, empty, pager, table } from './widgets';
import { registerPageRoutes, type PageRoute } from '../kit/route-table';
import { html, type Html } from '../kit/template';

// /dashboard/audit: the account's audit log (docs/api.md, "Audit log"), newest first, with the API's
// filters (actor, action, target, since, until). An admin's or the owner's, as GET /api/v1/audit-events.

const PAGE = 50;
const FILTERS = ['actor_id', 'action', 'target_id', 'since', 'until'] as const;
type Filters = Record<(typeof FILTERS)[number], string>;

const actorOf = (e: AuditEvent) => {
  const a = auditEventJson(e).actor;
  return html`${a.type}: ${a.name ?? a.id}${a.name ? html` <small><code>${a.id}</code></small>` : ''}`;
};

function auditPage(
  s: DashboardSession,
  d: { events: AuditEvent[]; filters: Filters; after: string; next: string; error?: string },
): Html {
  const rows = d.events.map(
    (e) =>
      html`<tr data-audit-id="${e.id}"><td>${date(e.at)}</td><td>${actorOf(e)}</td><td><code>${e.event_type}</code></td><td>${e.target?.type} <code>${e.target?.id}</code></td><td>${e.ip}</td><td><small><code>${e.request_id}</code></small></td></tr>`,
  );
  const input = (name: keyof Filters, label: string, placeholder = '') =>
    html`<label for="${name}">${label}</label><input id="${name}" name="${name}" maxlength="100" value="${d.filters[name]}" placeholder="${placeholder}">`;
  const filtered = FILTERS.some((f) => d.filters[f]);
  return layout(
    'Audit log',
    html`<h2>Audit log</h2>
${d.error ? html`<p class="error" role="alert">${d.error}</p>` : ''}
<form method="get" action="/dashboard/audit" class="search">
  ${input('actor_id', 'Actor id', 'user_…, key_…, system')}${input('action', 'Action', 'license.suspended')}${input('target_id', 'Target id', 'lic_…')}${input('since', 'Since', '2026-01-31')}${input('until', 'Until', '2026-02-28')}
  <button type="submit">Show</button>
</form>
${d.events.length ? html`${table(['When', 'Who', 'Action', 'About', 'Address', 'Request'], rows)}${pager('/dashboard/audit', d.filters, d.after, d.next)}` : empty(filtered || d.after ? html`Nothing matches. <a href="/dashboard/audit">Show all</a>.` : 'Nothing recorded yet: every change in this account appears here.')}`,
    s,
    '/dashboard/audit',
  );
}

const showAudit = (ctx: DashboardContext) =>
  ctx.signedIn(async (req, res, s) => {
    const filters = Object.fromEntries(FILTERS.map((f) => [f, queryOf(req, f, 100).trim()])) as Filters;
    const raw = queryOf(req, 'starting_after', 64);
    const after = isId('aud', raw) ? raw : '';
    try {
      const out = await ctx.clients.accounts.listAuditEvents({
        account_id: s.accountId,
        page: { limit: PAGE, starting_after: after },
        actor_id: filters.actor_id,
        event_type: filters.action,
        target_id: filters.target_id,
        since: filters.since,
        until: filters.until,
      });
      ctx.page(res, 200, auditPage(s, { events: out.data, filters, after, next: out.page?.next_cursor ?? '' }));
    } catch (err) {
      // A malformed time, an until before since: the page again, saying which.
      if (!(err instanceof AppError) || err.code !== 'invalid_request') throw err;
      ctx.page(res, 400, auditPage(s, { events: [], filters, after: '', next: '', error: err.message }));
    }
  });

const AUDIT_ROUTES: readonly PageRoute<DashboardContext>[] = [{ method: 'get', path: '/audit', handler: showAudit }];

export function auditPages(r: Router, ctx: DashboardContext): void {
  registerPageRoutes(r, AUDIT_ROUTES, ctx);
}
