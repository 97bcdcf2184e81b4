import { keyScopes, type ApiKey, type AuditEntry, type KeyScope } from '@licensing/proto';
import { copyable } from '../kit/html';
import { errorBox, h, layout, type Limits } from './pages';
import type { DashboardSession } from './session';

/** How Settings offers each key scope (a scope added to proto/rules does not compile without its words). */
const SCOPE_CHOICES: Record<KeyScope, string> = {
  full: 'full: everything',
  validate: 'validate: only validation (safe to ship in apps)',
};
const scopeOptions = keyScopes.map((scope) => `<option value="${scope}">${SCOPE_CHOICES[scope]}</option>`).join('');

// The pages of Settings (settings.ts serves them): the plan and limits, the API keys, and the
// confirmations of revoking or regenerating keys.

const date = (iso: string) =>
  iso ? `<time datetime="${h(iso)}">${h(iso.slice(0, 16).replace('T', ' '))} UTC</time>` : '—';

export interface NewKey {
  secret: string;
  name: string;
  scope: string;
}

export function settingsPage(
  s: DashboardSession,
  data: {
    /** One page of the live keys, newest first. */
    keys: ApiKey[];
    /** Live keys in all, and the most the account may have. */
    live: number;
    maxLive: number;
    /** Links to the next and first pages of keys. */
    pager: string;
    /** Whether this is the first page of keys (the form to generate one is there). */
    first: boolean;
    audit: AuditEntry[];
    limits: Limits;
    /** The account's support e-mail ('' = not set). */
    supportEmail: string;
    /** The account's customer portal (its absolute URL). */
    portalUrl: string;
    newKey?: NewKey;
    error?: string;
    notice?: string;
  },
): string {
  const status = (k: ApiKey) =>
    k.revoked_at ? '<span class="badge revoked">revoked</span>' : '<span class="badge active">active</span>';
  const actions = (k: ApiKey) =>
    k.revoked_at
      ? ''
      : `<a href="/dashboard/settings/keys/${h(k.id)}/regenerate">Regenerate</a> <a class="danger" href="/dashboard/settings/keys/${h(k.id)}/revoke">Revoke</a>`;
  const rows = data.keys
    .map(
      (k) =>
        `<tr data-key-id="${h(k.id)}"><td>${h(k.name) || '<span class="muted">unnamed</span>'}</td><td>${h(k.scope)}</td><td><code>${h(k.prefix)}…</code></td><td>${date(k.created_at)}</td><td>${date(k.last_used_at)}</td><td>${status(k)}</td><td class="actions">${actions(k)}</td></tr>`,
    )
    .join('');
  const newKey = data.newKey
    ? `<section class="card secret" aria-labelledby="new-key-title" role="status">
  <h2 id="new-key-title">Your new API key “${h(data.newKey.name) || 'unnamed'}” (${h(data.newKey.scope)})</h2>
  <p><strong>Copy it now: you will not see this again.</strong> Only a fingerprint of it is stored.</p>
  <p class="copy-row"><code id="new-key" data-testid="new-key">${h(data.newKey.secret)}</code> <button type="button" data-copy="new-key">Copy</button></p>
</section>`
    : '';
  const audit = data.audit
    .map(
      (a) =>
        `<li>${date(a.at)} · <strong>${h(a.actor)}</strong> ${a.type === 'api_key.revoked' ? 'revoked' : 'created'} <code>${h(a.key_prefix)}…</code>${a.key_name ? ` (${h(a.key_name)})` : ''}</li>`,
    )
    .join('');
  return layout(
    'Settings',
    `${errorBox(data.error)}${data.notice ? `<p class="notice" role="status">${h(data.notice)}</p>` : ''}${newKey}
<section aria-labelledby="plan-title" class="card">
  <h2 id="plan-title">Plan and limits</h2>
  <p><span data-testid="plan">${h(s.plan)}</span> plan: <strong data-testid="hourly-quota">${data.limits.hour.toLocaleString('en')}</strong> requests per hour for the account (full-scope API keys and this dashboard), <strong data-testid="hourly-app-allowance">${data.limits.appHour.toLocaleString('en')}</strong> per hour for your apps (validate-scope keys and licence credentials, counted apart so they never use up the first), <strong>${data.limits.minute.toLocaleString('en')}</strong> per minute for each API key and each dashboard session, <strong data-testid="per-license-minute">${data.limits.licenseMinute.toLocaleString('en')}</strong> per minute for each licence (app requests that name it).${s.perHourLimit || s.perMinuteLimit ? ' (raised on request)' : ''}</p>
  <p class="muted">Account ID <code data-testid="account-id">${h(s.accountId)}</code>: quote it when you ask for higher limits.</p>
</section>
<section aria-labelledby="portal-title" class="card">
  <h2 id="portal-title">Customer portal</h2>
  <p class="muted">Link your buyers here (your site, receipts, your app's "manage licence" menu). They sign in with a one-time link sent to the e-mail they bought with, see their keys and licence files, and free machines they no longer use (as many per 30 days as each product's policy allows). Purchase e-mails carry this link.</p>
  ${copyable('portal-url', data.portalUrl)}
</section>
<section aria-labelledby="support-title" class="card">
  <h2 id="support-title">Support e-mail</h2>
  <p class="muted">Shown to your buyers in the purchase e-mail (with their key), and where their replies go.</p>
  <form method="post" action="/dashboard/settings/support-email" class="inline">
    <input type="hidden" name="_csrf" value="${h(s.csrfToken)}">
    <div><label for="support-email">Support e-mail</label><input id="support-email" name="support_email" type="email" maxlength="254" value="${h(data.supportEmail)}" placeholder="support@example.com"></div>
    <button type="submit">Save</button>
  </form>
</section>
<section aria-labelledby="keys-title">
  <h2 id="keys-title">API keys</h2>
  <p><strong data-testid="live-keys">${data.live.toLocaleString('en')}</strong> live key${data.live === 1 ? '' : 's'} of the ${data.maxLive.toLocaleString('en')} an account may have. Revoked keys are not listed; the key actions below record them.${data.live ? ' <a class="danger" href="/dashboard/settings/keys/revoke-all">Revoke all keys</a>' : ''}</p>
  ${data.keys.length ? `<div class="scroll"><table><thead><tr><th scope="col">Name</th><th scope="col">Scope</th><th scope="col">Key</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Status</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead><tbody>${rows}</tbody></table></div>${data.pager}` : `<p class="muted">${data.first ? 'No live API keys.' : 'No more live API keys. <a href="/dashboard/settings">First page</a>.'}</p>`}
  <form method="post" action="/dashboard/settings/keys" class="card inline">
    <input type="hidden" name="_csrf" value="${h(s.csrfToken)}">
    <div><label for="key-name">Name</label><input id="key-name" name="name" maxlength="100" placeholder="e.g. production server"></div>
    <div><label for="key-scope">Scope</label><select id="key-scope" name="scope">${scopeOptions}</select></div>
    <button type="submit">Generate API key</button>
  </form>
</section>
<section aria-labelledby="audit-title">
  <h2 id="audit-title">Recent key actions</h2>
  ${audit ? `<ul class="audit">${audit}</ul>` : '<p class="muted">Nothing yet.</p>'}
</section>`,
    s,
    '/dashboard/settings',
  );
}

export function confirmPage(s: DashboardSession, action: 'revoke' | 'regenerate', key: ApiKey): string {
  const what = action === 'revoke' ? 'Revoke' : 'Regenerate';
  const consequence =
    action === 'revoke'
      ? 'Apps using it will get 401 within a second. This cannot be undone.'
      : 'The current key stops working within a second and a new one is shown once.';
  return layout(
    `${what} API key?`,
    `<form method="post" action="/dashboard/settings/keys/${h(key.id)}/${action}" class="card narrow">
  <input type="hidden" name="_csrf" value="${h(s.csrfToken)}">
  <input type="hidden" name="confirm" value="yes">
  <p>${what} <code>${h(key.prefix)}…</code>${key.name ? ` (“${h(key.name)}”)` : ''}? ${consequence}</p>
  <button type="submit" class="${action === 'revoke' ? 'danger' : ''}">${what} key</button>
  <a href="/dashboard/settings">Cancel</a>
</form>`,
    s,
    '/dashboard/settings',
  );
}

/** Confirmation of revoking every live key of the account. */
export function revokeAllPage(s: DashboardSession): string {
  return layout(
    'Revoke all API keys?',
    `<form method="post" action="/dashboard/settings/keys/revoke-all" class="card narrow">
  <input type="hidden" name="_csrf" value="${h(s.csrfToken)}">
  <input type="hidden" name="confirm" value="yes">
  <p>Revoke <strong>every</strong> live API key of ${h(s.accountName)}? Every server and app using one gets 401 within a second, until you give it a new key. Your dashboard session stays signed in. This cannot be undone.</p>
  <button type="submit" class="danger">Revoke all keys</button>
  <a href="/dashboard/settings">Cancel</a>
</form>`,
    s,
    '/dashboard/settings',
  );
}
