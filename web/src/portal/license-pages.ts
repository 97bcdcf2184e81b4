import type { Activation, License } from '@licensing/proto';
import { badge, csrfField, date, empty, errorBox, notice, table } from '../kit/html';
import { keyEnding, maskKey } from './key-mask';
import { portalLayout } from './pages';
import { portalPath, type PortalSession, type Vendor } from './session';
import { html, joinHtml, nothing, type Html } from '../kit/template';

// The signed-in pages: the customer's licences with this vendor, and one licence with its machines.
// Keys are masked (the last group shown) until revealed: a <details> without script, plus a copy
// button the portal's script enables.

/** A licence as the portal shows it, with its product's name. */
export interface ShownLicense {
  license: License;
  productName: string;
}

const licensePath = (vendor: Vendor, key: string) => `${portalPath(vendor.id)}/licenses/${encodeURIComponent(key)}`;

/** The masked key, a reveal control and a copy button (`id` unique on the page). */
export function revealableKey(key: string, id: string): Html {
  return html`<div class="key"><code aria-label="Key ending ${keyEnding(key)}">${maskKey(key)}</code>
<details><summary>Reveal key</summary><code id="${id}" data-testid="${id}">${key}</code></details>
<button type="button" data-copy="${id}" hidden>Copy key</button></div>`;
}

const expiry = (l: License) => (l.expires_at ? date(l.expires_at) : 'never');
const entitlements = (l: License) =>
  l.entitlements.length
    ? joinHtml(
        l.entitlements.map((e) => html`<code>${e}</code>`),
        ', ',
      )
    : 'none';

function facts(shown: ShownLicense, keyId: string): Html {
  const l = shown.license;
  return html`<dl class="facts">
  <dt>Key</dt><dd>${revealableKey(l.key, keyId)}</dd>
  <dt>Status</dt><dd>${badge(l.status)}</dd>
  <dt>Expires</dt><dd>${expiry(l)}</dd>
  <dt>Features</dt><dd>${entitlements(l)}</dd>
</dl>`;
}

export function licensesPage(
  vendor: Vendor,
  s: PortalSession,
  licenses: ShownLicense[],
  pager: Html,
  first: boolean,
): Html {
  const items = licenses.map(
    (shown, i) => html`<li data-license="${shown.license.id}">
  <h2><a href="${licensePath(vendor, shown.license.key)}">${shown.productName}</a></h2>
  ${facts(shown, `key-${i}`)}
  <p><a href="${licensePath(vendor, shown.license.key)}" aria-label="Machines and licence file of ${shown.productName}, key ending ${keyEnding(shown.license.key)}">Machines and licence file</a></p>
</li>`,
  );
  return portalLayout(
    'Your licences',
    items.length
      ? html`<ul class="licenses" aria-label="Your licences">${items}</ul>${pager}`
      : empty(
          first
            ? html`No licences with ${vendor.name} under ${s.email}. Bought with another address? Sign out and use that one.`
            : html`No more licences. <a href="${portalPath(vendor.id)}">First page</a>.`,
        ),
    vendor,
    s,
  );
}

function activationRow(vendor: Vendor, s: PortalSession, key: string, a: Activation, canFree: boolean): Html {
  const free = canFree
    ? html`<form method="post" action="${licensePath(vendor, key)}/activations/${a.id}/deactivate" class="button-form">${csrfField(s.csrfToken)}<button type="submit" class="danger" aria-label="Free this machine: ${a.name || a.fingerprint}">Free this machine</button></form>`
    : '';
  return html`<tr data-activation="${a.id}"><td>${a.name || html`<span class="muted">unnamed</span>`}</td><td><code>${a.fingerprint}</code></td><td>${a.last_seen_at ? date(a.last_seen_at) : 'never'}</td><td>${date(a.created_at)}</td><td>${free}</td></tr>`;
}

export function licensePage(
  vendor: Vendor,
  s: PortalSession,
  shown: ShownLicense,
  activations: Activation[],
  opts: { notice?: string; error?: string; pager?: Html } = {},
): Html {
  const l = shown.license;
  const perMonth = l.policy?.customer_deactivations_per_30_days;
  const canFree = perMonth !== 0 && l.status === 'active';
  const rows = activations.map((a) => activationRow(vendor, s, l.key, a, canFree));
  const limit =
    perMonth === 0
      ? html`To free a machine of this licence, write to ${vendor.name}.`
      : html`You can free up to ${perMonth ?? 3} machine${perMonth === 1 ? '' : 's'} in 30 days; the app on a freed machine asks for the licence again.`;
  return portalLayout(
    shown.productName,
    html`${errorBox(opts.error)}${notice(opts.notice)}
<section class="card" aria-labelledby="licence-title"><h2 id="licence-title">Licence</h2>${facts(shown, 'license-key')}
<p><a href="${licensePath(vendor, l.key)}/file" download>Download the licence file</a> <small>(for using the app offline)</small></p></section>
<section aria-labelledby="machines-title">
  <h2 id="machines-title">Machines</h2>
  <p class="muted">${limit}</p>
  ${rows.length ? html`${table(['Name', 'Fingerprint', 'Last seen', 'Activated', html`<span class="sr-only">Actions</span>`], rows)}${opts.pager ?? nothing}` : empty('No machine uses this licence yet.')}
</section>`,
    vendor,
    s,
  );
}
