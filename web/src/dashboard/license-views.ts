import {
  allowedActions,
  isOneOf,
  licenseStatuses,
  storedStatusOf,
  withPolicyDefaults,
  type Activation,
  type License,
  type LicenseAction,
  type Product,
  type RecentValidation,
} from '@licensing/proto';
import { html, joinHtml, nothing, type Html } from '../kit/template';
import type { FormErrors } from './context';
import { layout } from './pages';
import { ENTITLEMENTS_TEXT_MAX } from './product-views';
import { licenseReleasesSection, type LicenseDownloads } from './release-views';
import type { DashboardSession } from './session';
import {
  allErrors,
  badge,
  confirmForm,
  copyable,
  csrfInput,
  date,
  empty,
  formError,
  input,
  notice,
  pager,
  select,
  table,
  textarea,
} from './widgets';

// The pages of /dashboard/licenses (licenses.ts registers their routes): the list with the issue
// form, one licence's page and the confirmations of its actions.

/** How the dashboard words each lifecycle action (which ones a licence allows is the lifecycle rules'). */
export const ACTIONS: Record<LicenseAction, { verb: string; done: string; consequence: string; danger: boolean }> = {
  suspend: {
    verb: 'Suspend',
    done: 'Suspended',
    consequence: 'Validation answers "suspended" until you reinstate it.',
    danger: true,
  },
  reinstate: { verb: 'Reinstate', done: 'Reinstated', consequence: 'It validates again as before.', danger: false },
  revoke: {
    verb: 'Revoke',
    done: 'Revoked',
    consequence: 'It stops validating for good. This cannot be undone.',
    danger: true,
  },
  renew: {
    verb: 'Renew',
    done: 'Renewed',
    consequence: 'Its expiry moves on by the product’s licence duration, under the product’s current policy.',
    danger: false,
  },
};

/**
 * The actions the lifecycle rules (proto/rules/lifecycle.ts) allow this licence, which the licence
 * service applies too: a renewal takes the product's current policy when the page has the product.
 */
export function allowed(l: License, product?: Product): LicenseAction[] {
  if (!isOneOf(licenseStatuses, l.status)) return [];
  const state = { status: storedStatusOf(l.status), expires_at: l.expires_at ? new Date(l.expires_at) : null };
  return allowedActions(state, withPolicyDefaults(product?.policy ?? l.policy));
}

export interface IssueForm {
  product_id: string;
  customer_email: string;
}

const productOptions = (products: Product[]): [string, string][] => [
  ['', 'Choose a product'],
  ...products.map((p): [string, string] => [p.id, p.name]),
];

function issueSection(s: DashboardSession, products: Product[], form: IssueForm, errors?: FormErrors): Html {
  if (!products.length)
    return html`<section class="card"><h2>Issue a licence</h2>${allErrors(errors)}${empty(html`Licences are issued for a product, and there is none yet. <a href="/dashboard/products">Create a product</a> first.`)}</section>`;
  return html`<section class="card" aria-labelledby="issue-title">
  <h2 id="issue-title">Issue a licence</h2>
  ${formError(errors)}
  <form method="post" action="/dashboard/licenses" class="inline" novalidate>
    ${csrfInput(s)}
    ${select({ name: 'product_id', label: 'Product', options: productOptions(products), value: form.product_id, errors })}
    ${input({ name: 'customer_email', label: 'Customer e-mail', type: 'email', value: form.customer_email, errors, attrs: html`maxlength="254" autocomplete="off"` })}
    <div><button type="submit">Issue licence</button></div>
  </form>
  <p class="muted">Many at once? <a href="/dashboard/licenses/batch">Issue licences to a CSV of e-mails</a>.</p>
</section>`;
}

function licenseRows(licenses: License[], products: Map<string, string>): Html[] {
  return licenses.map(
    (l) =>
      html`<tr data-license-key="${l.key}"><td><a href="/dashboard/licenses/${l.key}"><code>${l.key}</code></a></td><td>${l.customer_email}</td><td>${products.get(l.product_id) ?? l.product_id}</td><td>${badge(l.status)}</td><td>${l.expires_at ? date(l.expires_at) : 'never'}</td><td>${date(l.created_at)}</td></tr>`,
  );
}

export interface ListData {
  q: string;
  status: string;
  productId: string;
  after: string;
  next: string;
  licenses: License[];
  products: Product[];
  form: IssueForm;
  errors?: FormErrors;
  message?: string;
  issued?: License;
}

export function listPage(s: DashboardSession, d: ListData): Html {
  const names = new Map(d.products.map((p) => [p.id, p.name]));
  const filtered = !!(d.q || d.status || d.productId);
  const issued = d.issued
    ? html`<section class="card secret" role="status" aria-labelledby="issued-title">
  <h2 id="issued-title">Licence issued to ${d.issued.customer_email}</h2>
  <p>Send this key to your customer. You can find it again here at any time.</p>
  ${copyable('new-license-key', d.issued.key)}
  <p><a href="/dashboard/licenses/${d.issued.key}">Open the licence</a></p>
</section>`
    : nothing;
  const list = d.licenses.length
    ? html`${table(['Key', 'Customer', 'Product', 'Status', 'Expires', 'Issued'], licenseRows(d.licenses, names))}${pager('/dashboard/licenses', { q: d.q, status: d.status, product_id: d.productId }, d.after, d.next)}`
    : empty(
        filtered
          ? html`No licence matches. Check the key or e-mail for typos, or <a href="/dashboard/licenses">show all licences</a>.`
          : d.products.length
            ? 'No licences yet. Issue one above: the customer gets a key to enter in your app.'
            : 'No licences yet.',
      );
  return layout(
    'Licences',
    html`${issued}${issueSection(s, d.products, d.form, d.errors)}
<h2>Find licences</h2>
<form method="get" action="/dashboard/licenses" class="search" role="search">
  <label for="q">Licence key or customer e-mail</label>
  <input id="q" name="q" value="${d.q}" maxlength="254">
  <label for="status">Status</label>
  <select id="status" name="status"><option value="">any</option>${licenseStatuses.map((x) => html`<option${x === d.status ? ' selected' : ''}>${x}</option>`)}</select>
  ${d.productId ? html`<input type="hidden" name="product_id" value="${d.productId}">` : nothing}
  <button type="submit">Search</button>
</form>
${d.message ? html`<p class="muted">${d.message}</p>` : nothing}
${list}`,
    s,
    '/dashboard/licenses',
  );
}

/** What one licence's page shows, and the refused forms it shows again. */
export interface DetailData {
  license: License;
  product?: Product;
  activations: Activation[];
  recent: RecentValidation[];
  /** The releases it may download (release-views.ts), or why none. */
  downloads: LicenseDownloads;
  after: string;
  next: string;
  notice?: string;
  error?: string;
  fileErrors?: FormErrors;
  file?: { fingerprint: string; ttl_days: string };
  entitlementErrors?: FormErrors;
  /** The extras as typed, when a refused form comes back. */
  extras?: string;
}

const policySummary = (pol: License['policy']): string =>
  [
    pol?.max_activations ? `up to ${pol.max_activations} machines` : 'unlimited machines',
    pol?.grace_days ? `${pol.grace_days} days grace` : '',
    pol?.require_activation ? 'activation required' : '',
    pol?.lease_seconds ? `floating seats (${pol.lease_seconds} s lease)` : '',
  ]
    .filter(Boolean)
    .join(', ');

function factsSection(d: DetailData, base: string): Html {
  const l = d.license;
  const actions = joinHtml(
    allowed(l, d.product).map(
      (a) => html`<a class="${ACTIONS[a].danger ? 'danger' : ''}" href="${base}/${a}">${ACTIONS[a].verb}</a>`,
    ),
    ' ',
  );
  const hasActions = allowed(l, d.product).length > 0;
  return html`<section class="card" aria-labelledby="facts-title">
  <h2 id="facts-title" class="sr-only">Facts</h2>
  <dl class="facts">
    <dt>Key</dt><dd>${copyable('license-key', l.key)}</dd>
    <dt>Status</dt><dd data-testid="license-status">${badge(l.status)}</dd>
    <dt>Customer</dt><dd>${l.customer_email}</dd>
    <dt>Product</dt><dd>${d.product ? html`<a href="/dashboard/products/${d.product.id}">${d.product.name}</a>` : html`<code>${l.product_id}</code>`}</dd>
    <dt>Expires</dt><dd data-testid="license-expiry">${l.expires_at ? date(l.expires_at) : 'never (perpetual)'}</dd>
    <dt>Issued</dt><dd>${date(l.created_at)}</dd>
    <dt>Last validated</dt><dd data-testid="last-validated">${l.last_validated_at ? date(l.last_validated_at) : 'never: your app has not checked this key yet'}</dd>
    <dt>Policy</dt><dd>${policySummary(l.policy)}</dd>
  </dl>
  ${hasActions || l.status !== 'revoked' ? html`<p class="button-row actions">${actions}${l.status !== 'revoked' ? html` <a class="danger" href="${base}/reroll">New key</a>` : nothing}</p>` : nothing}
</section>`;
}

function entitlementsSection(s: DashboardSession, d: DetailData, base: string): Html {
  const l = d.license;
  return html`<section class="card" aria-labelledby="entitlements-title">
  <h2 id="entitlements-title">Entitlements</h2>
  <p data-testid="license-entitlements">${
    l.entitlements.length
      ? joinHtml(
          l.entitlements.map((e) => html`<code>${e}</code>`),
          ' ',
        )
      : html`<span class="muted">none</span>`
  }</p>
  <p class="muted">Its product’s current entitlements, and those of its own below. Your app asks for them with <code>POST /api/v1/keys/validate</code> <code>{"entitlements": [...]}</code>.</p>
  ${formError(d.entitlementErrors)}
  <form method="post" action="${base}/entitlements" novalidate>
    ${csrfInput(s)}
    ${textarea({ name: 'entitlements', label: 'This licence’s own entitlements', value: d.extras ?? l.extra_entitlements.join(', '), errors: d.entitlementErrors, hint: '(on top of its product’s; separated by commas, spaces or lines; empty: none)', attrs: html`maxlength="${ENTITLEMENTS_TEXT_MAX}"` })}
    <p><button type="submit">Save entitlements</button></p>
  </form>
</section>`;
}

function activationsSection(d: DetailData, base: string): Html {
  const rows = d.activations.map(
    (a) =>
      html`<tr data-activation-id="${a.id}"><td><code>${a.fingerprint}</code></td><td>${a.name || html`<span class="muted">unnamed</span>`}</td><td>${date(a.created_at)}${a.lease_expires_at ? html`<br><span class="muted">floating seat, lease until ${date(a.lease_expires_at)}</span>` : nothing}</td><td><a href="${base}/activations/${a.id}/deactivate">Deactivate</a></td></tr>`,
  );
  const recent = d.recent.map(
    (v) =>
      html`<tr><td>${date(v.last_at)}</td><td>${badge(v.code)}</td><td>${v.fingerprint ? html`<code>${v.fingerprint}</code>` : html`<span class="muted">none given</span>`}</td><td>${v.count}</td></tr>`,
  );
  return html`<section aria-labelledby="machines-title">
  <h2 id="machines-title">Activations (${d.license.activations})</h2>
  ${d.activations.length ? html`${table(['Fingerprint', 'Name', 'Activated', html`<span class="sr-only">Actions</span>`], rows)}${pager(base, {}, d.after, d.next)}` : empty(d.after ? html`No more activations. <a href="${base}">First page</a>.` : html`No machine is activated. Your app activates one with <code>POST /api/v1/licenses/{key}/activations</code>.`)}
</section>
<section aria-labelledby="recent-title">
  <h2 id="recent-title">Recent validations</h2>
  ${d.recent.length ? table(['Latest', 'Answer', 'Machine', 'Times that hour'], recent) : empty('No validations yet. They appear here a few seconds after your app checks this key.')}
</section>`;
}

function fileAndEmailSections(s: DashboardSession, d: DetailData, base: string): Html {
  return html`<section class="card" aria-labelledby="file-title">
  <h2 id="file-title">Licence file</h2>
  <p class="muted">A signed file your app verifies offline with the product’s public key.</p>
  ${formError(d.fileErrors)}
  <form method="post" action="${base}/file" class="inline" novalidate>
    ${csrfInput(s)}
    ${input({ name: 'fingerprint', label: 'Machine fingerprint', value: d.file?.fingerprint, errors: d.fileErrors, hint: d.license.policy?.require_activation ? '(required: an activated machine)' : '(optional)', attrs: html`maxlength="200"` })}
    ${input({ name: 'ttl_days', label: 'Valid for days', value: d.file?.ttl_days ?? '30', errors: d.fileErrors, attrs: html`inputmode="numeric"` })}
    <div><button type="submit">Download licence file</button></div>
  </form>
</section>
<section class="card" aria-labelledby="email-title">
  <h2 id="email-title">Purchase e-mail</h2>
  <p class="muted">Sends the customer the key, expiry, portal link and licence file again. <a href="/dashboard/emails">E-mail log</a>.</p>
  <form method="post" action="${base}/email" class="inline" novalidate>
    ${csrfInput(s)}
    <div><button type="submit">Send the e-mail again</button></div>
  </form>
</section>`;
}

/**
 * One licence's page: its facts and actions, entitlements, machines, recent validations, the releases it
 * may download, file and e-mail.
 */
export function detailPage(s: DashboardSession, d: DetailData): Html {
  const base = `/dashboard/licenses/${d.license.key}`;
  return layout(
    'Licence',
    html`${notice(d.notice)}${d.error ? html`<p class="error" role="alert">${d.error}</p>` : nothing}
${factsSection(d, base)}
${entitlementsSection(s, d, base)}
${activationsSection(d, base)}
${licenseReleasesSection(d.downloads)}
${fileAndEmailSections(s, d, base)}`,
    s,
    '/dashboard/licenses',
  );
}

/** The confirmation of a lifecycle action (suspend, reinstate, revoke, renew). */
export const actionConfirmPage = (s: DashboardSession, l: License, action: LicenseAction): Html =>
  layout(
    `${ACTIONS[action].verb} licence?`,
    confirmForm(s, {
      action: `/dashboard/licenses/${l.key}/${action}`,
      question: html`${ACTIONS[action].verb} <code>${l.key}</code> of ${l.customer_email}?`,
      consequence: ACTIONS[action].consequence,
      button: `${ACTIONS[action].verb} licence`,
      danger: ACTIONS[action].danger,
      back: `/dashboard/licenses/${l.key}`,
    }),
    s,
    '/dashboard/licenses',
  );

/** The confirmation of freeing one machine of a licence. */
export const deactivateConfirmPage = (s: DashboardSession, l: License, act: Activation): Html =>
  layout(
    'Deactivate machine?',
    confirmForm(s, {
      action: `/dashboard/licenses/${l.key}/activations/${act.id}/deactivate`,
      question: html`Deactivate <code>${act.fingerprint}</code>${act.name ? html` (${act.name})` : nothing}?`,
      consequence: 'The machine frees its slot; it must activate again to validate where activation is required.',
      button: 'Deactivate machine',
      danger: true,
      back: `/dashboard/licenses/${l.key}`,
    }),
    s,
    '/dashboard/licenses',
  );
