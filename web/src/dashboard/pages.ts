import { errorBox, h, htmlDocument } from '../kit/html';
import type { DashboardSession } from './session';

// The dashboard's page frame (its navigation and sign-out); the HTML pieces are the shared ones of
// pages/html.ts, where every interpolated value goes through h().
export { errorBox, h };

export function layout(title: string, body: string, session?: DashboardSession, current = ''): string {
  const link = (href: string, label: string) =>
    `<a href="${href}"${current === href ? ' aria-current="page"' : ''}>${label}</a>`;
  const nav = session
    ? `<nav aria-label="Dashboard">${link('/dashboard', 'Overview')}${link('/dashboard/products', 'Products')}${link('/dashboard/licenses', 'Licences')}${link('/dashboard/webhooks', 'Webhooks')}${link('/dashboard/checkout', 'Checkout')}${link('/dashboard/subscriptions', 'Subscriptions')}${link('/dashboard/emails', 'E-mails')}${link('/dashboard/settings', 'Settings')}</nav>
       <form method="post" action="/dashboard/signout" class="signout"><input type="hidden" name="_csrf" value="${h(session.csrfToken)}"><span>${h(session.userEmail)}</span> <button type="submit">Sign out</button></form>`
    : '';
  return htmlDocument({
    title,
    site: 'Licensing',
    assets: '/dashboard/assets',
    header: `<a class="brand" href="/dashboard">Licensing</a>${nav}`,
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

export function messagePage(title: string, message: string, s?: DashboardSession): string {
  return layout(title, `<p>${h(message)}</p><p><a href="/dashboard">Back to the dashboard</a></p>`, s);
}
