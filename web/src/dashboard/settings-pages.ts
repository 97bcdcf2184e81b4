import { roleCovers } from '@licensing/proto';
import { keyScopes, type ApiKey, type AuditEntry, type KeyScope } from '@licensing/proto';
import { copyable, date } from '../kit/html';
import { errorBox, layout, type Limits } from './pages';
import type { DashboardSession } from './session';
import { html, type Html } from '../kit/template';

/** How Settings offers each key scope (a scope added to proto/rules does not compile without its words). */
const SCOPE_CHOICES: Record<KeyScope, string> = {
  full: 'full: everything',
  validate: 'validate: only validation (safe to ship in apps)',
};
const scopeOptions = keyScopes.map((scope) => html`<option value="${scope}">${SCOPE_CHOICES[scope]}</option>`);

// The pages of Settings (settings.ts serves them): the plan and limits, the API keys, and the
// confirmations of revoking or regenerating keys.

export interface NewKey {
  secret: string;
  name: string;
  scope: string;
}

function planSection(s: DashboardSession, limits: Limits): Html {
  return html`<section aria-labelledby="plan-title" class="card">
  <h2 id="plan-title">Plan and limits</h2>
  <p><span data-testid="plan">${s.plan}</span> plan: <strong data-testid="hourly-quota">${limits.hour.toLocaleString('en')}</strong> requests per hour for the account (full-scope API keys and this dashboard), <strong data-testid="hourly-app-allowance">${limits.appHour.toLocaleString('en')}</strong> per hour for your apps (validate-scope keys and licence credentials, counted apart so they never use up the first), <strong>${limits.minute.toLocaleString('en')}</strong> per minute for each API key and each dashboard session, <strong data-testid="per-license-minute">${limits.licenseMinute.toLocaleString('en')}</strong> per minute for each licence (app requests that name it).${s.perHourLimit || s.perMinuteLimit ? ' (raised on request)' : ''}</p>
  <p class="muted">Account ID <code data-testid="account-id">${s.accountId}</code>: quote it when you ask for higher limits.</p>
</section>`;
}

function keysSection(s: DashboardSession, data: SettingsData, rows: Html[]): Html {
  return html`<section aria-labelledby="keys-title">
  <h2 id="keys-title">API keys</h2>
  <p><strong data-testid="live-keys">${data.live.toLocaleString('en')}</strong> live key${data.live === 1 ? '' : 's'} of the ${data.maxLive.toLocaleString('en')} an account may have. Revoked keys are not listed; the key actions below record them.${data.live ? html` <a class="danger" href="/dashboard/settings/keys/revoke-all">Revoke all keys</a>` : ''}</p>
  ${data.keys.length ? html`<div class="scroll"><table><thead><tr><th scope="col">Name</th><th scope="col">Scope</th><th scope="col">Key</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Status</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead><tbody>${rows}</tbody></table></div>${data.pager}` : html`<p class="muted">${data.first ? 'No live API keys.' : html`No more live API keys. <a href="/dashboard/settings">First page</a>.`}</p>`}
  <form method="post" action="/dashboard/settings/keys" class="card inline">
    <input type="hidden" name="_csrf" value="${s.csrfToken}">
    <div><label for="key-name">Name</label><input id="key-name" name="name" maxlength="100" placeholder="e.g. production server"></div>
    <div><label for="key-scope">Scope</label><select id="key-scope" name="scope">${scopeOptions}</select></div>
    <button type="submit">Generate API key</button>
  </form>
</section>`;
}

/** Owners and admins may require two-factor sign-in of every member; the others see whether it is. */
function requireMfaSection(s: DashboardSession, required: boolean): Html {
  const state = required ? 'Every member must use two-factor sign-in.' : 'Two-factor sign-in is up to each member.';
  if (!roleCovers(s.role, 'admin'))
    return html`<section class="card"><h2>Two-factor sign-in for the team</h2><p class="muted">${state}</p></section>`;
  return html`<section aria-labelledby="require-mfa-title" class="card">
  <h2 id="require-mfa-title">Two-factor sign-in for the team</h2>
  <p class="muted">${state} When required, members without it set it up at their next sign-in, and nobody can turn theirs off.</p>
  <form method="post" action="/dashboard/settings/require-mfa" class="inline">
    <input type="hidden" name="_csrf" value="${s.csrfToken}">
    <label><input type="checkbox" name="require_mfa" value="on"${required ? html` checked` : ''}> Require two-factor sign-in for every member</label>
    <button type="submit">Save</button>
  </form>
</section>`;
}

/** What Settings shows. */
export interface SettingsData {
  /** One page of the live keys, newest first. */
  keys: ApiKey[];
  /** Live keys in all, and the most the account may have. */
  live: number;
  maxLive: number;
  /** Links to the next and first pages of keys. */
  pager: Html;
  /** Whether this is the first page of keys (the form to generate one is there). */
  first: boolean;
  audit: AuditEntry[];
  limits: Limits;
  /** The account's support e-mail ('' = not set). */
  supportEmail: string;
  /** Every member must use two-factor sign-in. */
  requireMfa: boolean;
  /** The account's customer portal (its absolute URL). */
  portalUrl: string;
  newKey?: NewKey;
  error?: string;
  notice?: string;
}

export function settingsPage(s: DashboardSession, data: SettingsData): Html {
  const status = (k: ApiKey) =>
    k.revoked_at ? html`<span class="badge revoked">revoked</span>` : html`<span class="badge active">active</span>`;
  const actions = (k: ApiKey) =>
    k.revoked_at
      ? ''
      : html`<a href="/dashboard/settings/keys/${k.id}/regenerate">Regenerate</a> <a class="danger" href="/dashboard/settings/keys/${k.id}/revoke">Revoke</a>`;
  const rows = data.keys.map(
    (k) =>
      html`<tr data-key-id="${k.id}"><td>${k.name || html`<span class="muted">unnamed</span>`}</td><td>${k.scope}</td><td><code>${k.prefix}…</code></td><td>${date(k.created_at)}</td><td>${date(k.last_used_at)}</td><td>${status(k)}</td><td class="actions">${actions(k)}</td></tr>`,
  );
  const newKey = data.newKey
    ? html`<section class="card secret" aria-labelledby="new-key-title" role="status">
  <h2 id="new-key-title">Your new API key “${data.newKey.name || 'unnamed'}” (${data.newKey.scope})</h2>
  <p><strong>Copy it now: you will not see this again.</strong> Only a fingerprint of it is stored.</p>
  <p class="copy-row"><code id="new-key" data-testid="new-key">${data.newKey.secret}</code> <button type="button" data-copy="new-key">Copy</button></p>
</section>`
    : '';
  const audit = data.audit.map(
    (a) =>
      html`<li>${date(a.at)} · <strong>${a.actor}</strong> ${a.type === 'api_key.revoked' ? 'revoked' : 'created'} <code>${a.key_prefix}…</code>${a.key_name ? html` (${a.key_name})` : ''}</li>`,
  );
  return layout(
    'Settings',
    html`${errorBox(data.error)}${data.notice ? html`<p class="notice" role="status">${data.notice}</p>` : ''}${newKey}
${planSection(s, data.limits)}
<section aria-labelledby="portal-title" class="card">
  <h2 id="portal-title">Customer portal</h2>
  <p class="muted">Link your buyers here (your site, receipts, your app's "manage licence" menu). They sign in with a one-time link sent to the e-mail they bought with, see their keys and licence files, and free machines they no longer use (as many per 30 days as each product's policy allows). Purchase e-mails carry this link.</p>
  ${copyable('portal-url', data.portalUrl)}
</section>
<section aria-labelledby="support-title" class="card">
  <h2 id="support-title">Support e-mail</h2>
  <p class="muted">Shown to your buyers in the purchase e-mail (with their key), and where their replies go.</p>
  <form method="post" action="/dashboard/settings/support-email" class="inline">
    <input type="hidden" name="_csrf" value="${s.csrfToken}">
    <div><label for="support-email">Support e-mail</label><input id="support-email" name="support_email" type="email" maxlength="254" value="${data.supportEmail}" placeholder="support@example.com"></div>
    <button type="submit">Save</button>
  </form>
</section>
<section aria-labelledby="password-title" class="card">
  <h2 id="password-title">Your password</h2>
  <p class="muted">Signed in as ${s.userEmail}. <a href="/dashboard/settings/password">Change your password</a> (every other session is signed out). <a href="/dashboard/settings/sessions">Your sessions</a>: where you are signed in. <a href="/dashboard/settings/mfa">Two-factor sign-in</a>: a code from your phone as well as your password.</p>
</section>
${requireMfaSection(s, data.requireMfa)}
${keysSection(s, data, rows)}
<section aria-labelledby="audit-title">
  <h2 id="audit-title">Recent key actions</h2>
  ${audit.length ? html`<ul class="audit">${audit}</ul>` : html`<p class="muted">Nothing yet.</p>`}
</section>`,
    s,
    '/dashboard/settings',
  );
}

export function confirmPage(s: DashboardSession, action: 'revoke' | 'regenerate', key: ApiKey): Html {
  const what = action === 'revoke' ? 'Revoke' : 'Regenerate';
  const consequence =
    action === 'revoke'
      ? 'Apps using it will get 401 within a second. This cannot be undone.'
      : 'The current key stops working within a second and a new one is shown once.';
  return layout(
    `${what} API key?`,
    html`<form method="post" action="/dashboard/settings/keys/${key.id}/${action}" class="card narrow">
  <input type="hidden" name="_csrf" value="${s.csrfToken}">
  <input type="hidden" name="confirm" value="yes">
  <p>${what} <code>${key.prefix}…</code>${key.name ? html` (“${key.name}”)` : ''}? ${consequence}</p>
  <button type="submit" class="${action === 'revoke' ? 'danger' : ''}">${what} key</button>
  <a href="/dashboard/settings">Cancel</a>
</form>`,
    s,
    '/dashboard/settings',
  );
}

/** Confirmation of revoking every live key of the account. */
export function revokeAllPage(s: DashboardSession): Html {
  return layout(
    'Revoke all API keys?',
    html`<form method="post" action="/dashboard/settings/keys/revoke-all" class="card narrow">
  <input type="hidden" name="_csrf" value="${s.csrfToken}">
  <input type="hidden" name="confirm" value="yes">
  <p>Revoke <strong>every</strong> live API key of ${s.accountName}? Every server and app using one gets 401 within a second, until you give it a new key. Your dashboard session stays signed in. This cannot be undone.</p>
  <button type="submit" class="danger">Revoke all keys</button>
  <a href="/dashboard/settings">Cancel</a>
</form>`,
    s,
    '/dashboard/settings',
  );
}
