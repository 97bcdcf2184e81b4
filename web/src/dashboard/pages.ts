import { roleCovers } from '@licensing/proto';
import { errorBox, htmlDocument } from '../kit/html';
import { html, nothing, type Html } from '../kit/template';
import type { DashboardSession } from './session';

// The dashboard's page frame (its navigation and sign-out); the HTML pieces are the shared ones of
// kit/html.ts, written with html`…` (kit/template.ts), which escapes every interpolated value.
export { errorBox };

export function layout(title: string, body: Html, session?: DashboardSession, current = ''): Html {
  const link = (href: string, label: string): Html =>
    html`<a href="${href}"${current === href ? html` aria-current="page"` : nothing}>${label}</a>`;
  const nav = session
    ? html`<nav aria-label="Dashboard">${link('/dashboard', 'Overview')}${link('/dashboard/products', 'Products')}${link('/dashboard/licenses', 'Licences')}${link('/dashboard/webhooks', 'Webhooks')}${link('/dashboard/checkout', 'Checkout')}${link('/dashboard/subscriptions', 'Subscriptions')}${link('/dashboard/emails', 'E-mails')}${link('/dashboard/settings', 'Settings')}${roleCovers(session.role, 'admin') ? html`${link('/dashboard/members', 'Members')}${link('/dashboard/audit', 'Audit')}` : nothing}</nav>
       <form method="post" action="/dashboard/signout" class="signout"><input type="hidden" name="_csrf" value="${session.csrfToken}"><span>${session.userEmail}</span> <button type="submit">Sign out</button></form>`
    : nothing;
  return htmlDocument({
    title,
    site: 'Licensing',
    assets: '/dashboard/assets',
    header: html`<a class="brand" href="/dashboard">Licensing</a>${nav}`,
    body,
  });
}

export interface Limits {
  minute: number;
  hour: number;
  /** App traffic's own hourly allowance (validate-scope keys, licence credentials). */
  appHour: number;
  /** Per licence, per minute (app traffic that names a licence). */
  licenseMinute: number;
}

export function messagePage(title: string, message: string, s?: DashboardSession): Html {
  return layout(title, html`<p>${message}</p><p><a href="/dashboard">Back to the dashboard</a></p>`, s);
}
