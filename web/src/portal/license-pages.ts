import type { Activation, License } from '@licensing/proto';
import { badge, csrfField, date, empty, errorBox, h, notice, table } from '../kit/html';
import { keyEnding, maskKey } from './key-mask';
import { portalLayout } from './pages';
import { portalPath, type PortalSession, type Vendor } from './session';

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
export function revealableKey(key: string, id: string): string {
  return `<div class="key"><code aria-label="Key ending ${h(keyEnding(key))}">${h(maskKey(key))}</code>
<details><summary>Reveal key</summary><code id="${h(id)}" data-testid="${h(id)}">${h(key)}</code></details>
<button type="button" data-copy="${h(id)}" hidden>Copy key</button></div>`;
}

const expiry = (l: License) => (l.expires_at ? date(l.expires_at) : 'never');
const entitlements = (l: License) =>
  l.entitlements.length ? l.entitlements.map((e) => `<code>${h(e)}</code>`).join(', ') : 'none';

function facts(shown: ShownLicense, keyId: string): string {
  const l = shown.license;
  return `<dl class="facts">
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
  pager: string,
  first: boolean,
): string {
  const items = licenses
    .map(
      (shown, i) => `<li data-license="${h(shown.license.id)}">
  <h2><a href="${h(licensePath(vendor, shown.license.key))}">${h(shown.productName)}</a></h2>
  ${facts(shown, `key-${i}`)}
  <p><a href="${h(licensePath(vendor, shown.license.key))}" aria-label="Machines and licence file of ${h(shown.productName)}, key ending ${h(keyEnding(shown.license.key))}">Machines and licence file</a></p>
</li>`,
    )
    .join('');
  return portalLayout(
    'Your licences',
    items
      ? `<ul class="licenses" aria-label="Your licences">${items}</ul>${pager}`
      : empty(
          first
            ? `No licences with ${h(vendor.name)} under ${h(s.email)}. Bought with another address? Sign out and use that one.`
            : `No more licences. <a href="${h(portalPath(vendor.id))}">First page</a>.`,
        ),
    vendor,
    s,
  );
}

function activationRow(vendor: Vendor, s: PortalSession, key: string, a: Activation, canFree: boolean): string {
  const free = canFree
    ? `<form method="post" action="${h(licensePath(vendor, key))}/activations/${h(a.id)}/deactivate" class="button-form">${csrfField(s.csrfToken)}<button type="submit" class="danger" aria-label="Free this machine: ${h(a.name || a.fingerprint)}">Free this machine</button></form>`
    : '';
  return `<tr data-activation="${h(a.id)}"><td>${h(a.name) || '<span class="muted">unnamed</span>'}</td><td><code>${h(a.fingerprint)}</code></td><td>${a.last_seen_at ? date(a.last_seen_at) : 'never'}</td><td>${date(a.created_at)}</td><td>${free}</td></tr>`;
}

export function licensePage(
  vendor: Vendor,
  s: PortalSession,
  shown: ShownLicense,
  activations: Activation[],
  opts: { notice?: string; error?: string; pager?: string } = {},
): string {
  const l = shown.license;
  const perMonth = l.policy?.customer_deactivations_per_30_days;
  const canFree = perMonth !== 0 && l.status === 'active';
  const rows = activations.map((a) => activationRow(vendor, s, l.key, a, canFree));
  const limit =
    perMonth === 0
      ? `To free a machine of this licence, write to ${h(vendor.name)}.`
      : `You can free up to ${h(perMonth ?? 3)} machine${perMonth === 1 ? '' : 's'} in 30 days; the app on a freed machine asks for the licence again.`;
  return portalLayout(
    shown.productName,
    `${errorBox(opts.error)}${notice(opts.notice)}
<section class="card" aria-labelledby="licence-title"><h2 id="licence-title">Licence</h2>${facts(shown, 'license-key')}
<p><a href="${h(licensePath(vendor, l.key))}/file" download>Download the licence file</a> <small>(for using the app offline)</small></p></section>
<section aria-labelledby="machines-title">
  <h2 id="machines-title">Machines</h2>
  <p class="muted">${limit}</p>
  ${rows.length ? table(['Name', 'Fingerprint', 'Last seen', 'Activated', '<span class="sr-only">Actions</span>'], rows) + (opts.pager ?? '') : empty('No machine uses this licence yet.')}
</section>`,
    vendor,
    s,
  );
}
