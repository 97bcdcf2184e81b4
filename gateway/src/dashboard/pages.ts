import type { DashboardSession } from './session';

// Server-rendered pages: no build step, no client framework, fast on any
// device. Every interpolated value goes through h().

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const h = (v: unknown): string => String(v ?? '').replace(/[&<>"']/g, (c) => ESCAPES[c]);

export function layout(title: string, body: string, session?: DashboardSession, current = ''): string {
  const link = (href: string, label: string) =>
    `<a href="${href}"${current === href ? ' aria-current="page"' : ''}>${label}</a>`;
  const nav = session
    ? `<nav aria-label="Dashboard">${link('/dashboard', 'Overview')}${link('/dashboard/products', 'Products')}${link('/dashboard/licenses', 'Licences')}${link('/dashboard/webhooks', 'Webhooks')}${link('/dashboard/checkout', 'Checkout')}${link('/dashboard/emails', 'E-mails')}${link('/dashboard/settings', 'Settings')}</nav>
       <form method="post" action="/dashboard/signout" class="signout"><input type="hidden" name="_csrf" value="${h(session.csrfToken)}"><span>${h(session.userEmail)}</span> <button type="submit">Sign out</button></form>`
    : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${h(title)} · Licensing</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/dashboard/assets/app.css">
<script src="/dashboard/assets/app.js" defer></script>
</head>
<body>
<header><a class="brand" href="/dashboard">Licensing</a>${nav}</header>
<main id="main">
<h1>${h(title)}</h1>
${body}
</main>
</body>
</html>`;
}

/** A form's error message, or nothing. */
export const errorBox = (message?: string) => (message ? `<p class="error" role="alert">${h(message)}</p>` : '');

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
