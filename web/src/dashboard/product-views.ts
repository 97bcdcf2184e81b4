import {
  priceIntervals,
  policyRules,
  roleCovers,
  type PolicyField,
  type PolicyRule,
  type Product,
  type SigningKey,
} from '@licensing/proto';
import { html, joinHtml, nothing, type Html } from '../kit/template';
import type { FormErrors } from './context';
import { layout } from './pages';
import type { DashboardSession } from './session';
import {
  badge,
  checkbox,
  confirmForm,
  csrfInput,
  date,
  empty,
  formError,
  input,
  money,
  notice,
  pager,
  postButton,
  select,
  table,
  textarea,
} from './widgets';

// The pages of /dashboard/products (products.ts registers their routes): the list with the new
// product form, one product with its policy and signing keys, and the key rotation's confirmation.

/**
 * How the product form offers each licence-policy field (proto/rules/policy.ts gives its type, range
 * and default), in the form's order: a label and hint, or 'kept' for a field set through the API only,
 * which an edit here keeps as it is. A policy field added to the rules does not compile without one.
 */
const POLICY_ON_FORM: Record<PolicyField, { label: string; hint?: string } | 'kept'> = {
  duration_days: { label: 'Licence duration in days', hint: '(empty: perpetual)' },
  grace_days: { label: 'Grace days after expiry' },
  max_activations: { label: 'Maximum activations', hint: '(empty: unlimited)' },
  require_activation: { label: 'Validation requires an activated machine' },
  lease_seconds: { label: 'Floating seats: lease in seconds', hint: '(empty: node-locked; 30–86400)' },
  validate_keys_see_email: 'kept',
  refund_action: 'kept',
  customer_deactivations_per_30_days: {
    label: 'Machines a customer may free in the portal per 30 days',
    hint: '(0: only you free machines)',
  },
  payment_grace_days: {
    label: 'Subscriptions: days a licence stays valid after a failed payment',
    hint: '(0–60, default 7)',
  },
  max_file_ttl_days: {
    label: 'Most days a licence file asked for by your app stays valid',
    hint: '(1–365, default 30; your full API keys may ask for up to 365)',
  },
  expiration_strategy: {
    label:
      'Downloads after a licence expires (restrict: none; maintain_access: releases published before its expiry; revoke_access: none, and it is revoked)',
  },
  entitlements: {
    label: 'Entitlements',
    hint: '(feature codes such as pdf-export, separated by commas, spaces or lines; a change reaches every licence of the product at once)',
  },
};
export const formPolicy = (Object.keys(POLICY_ON_FORM) as PolicyField[]).flatMap((name) => {
  const shown = POLICY_ON_FORM[name];
  return shown === 'kept' ? [] : [{ name, rule: policyRules[name] as PolicyRule, ...shown }];
});

/** What the product form holds, as typed (so a refused form comes back as it was); a ticked box is 'yes'. */
export interface ProductForm {
  name: string;
  description: string;
  price_amount: string;
  price_currency: string;
  /** '' (one-time), month or year; with it, every price_interval_count intervals after price_trial_days free. */
  price_interval: string;
  price_interval_count: string;
  price_trial_days: string;
  /** 'yes' when a purchase e-mails the buyer their key. */
  email_on_purchase: string;
  policy: Partial<Record<PolicyField, string>>;
}

/** Room for 100 codes of 64 characters and their separators; anything longer is more than 100 codes. */
export const ENTITLEMENTS_TEXT_MAX = 8000;

function policyInput({ name, rule, label, hint }: (typeof formPolicy)[number], form: ProductForm, errors?: FormErrors) {
  const value = form.policy[name] ?? '';
  switch (rule.kind) {
    case 'int':
      return input({ name, label, value, errors, hint, attrs: html`inputmode="numeric"` });
    case 'bool':
      return html`<div class="field">${checkbox({ name, label, checked: value === 'yes' })}</div>`;
    case 'enum':
      return select({ name, label, options: rule.values.map((v): [string, string] => [v, v]), value, errors });
    case 'entitlements':
      return textarea({ name, label, value, errors, hint, attrs: html`maxlength="${ENTITLEMENTS_TEXT_MAX}"` });
  }
}

function productFields(form: ProductForm, errors?: FormErrors): Html {
  return html`<div class="form-grid">
  ${input({ name: 'name', label: 'Name', value: form.name, errors, attrs: html`required maxlength="200"` })}
  ${input({ name: 'description', label: 'Description', value: form.description, errors, hint: '(optional)', attrs: html`maxlength="2000"` })}
  ${input({ name: 'price_amount', label: 'Price', value: form.price_amount, errors, hint: '(empty: not sold through checkout)', attrs: html`inputmode="decimal" placeholder="19.99"` })}
  ${input({ name: 'price_currency', label: 'Currency', value: form.price_currency, errors, hint: '(ISO code)', attrs: html`maxlength="3" autocapitalize="characters"` })}
  ${select({ name: 'price_interval', label: 'Billing', options: [['', 'One-time'], ...priceIntervals.map((i): [string, string] => [i, `Subscription, every ${i}`])], value: form.price_interval, errors })}
  ${input({ name: 'price_interval_count', label: 'Bill every this many intervals', value: form.price_interval_count, errors, hint: '(subscriptions: 1–12, empty: 1)', attrs: html`inputmode="numeric" placeholder="1"` })}
  ${input({ name: 'price_trial_days', label: 'Free trial in days', value: form.price_trial_days, errors, hint: '(subscriptions: 0–365, empty: none)', attrs: html`inputmode="numeric" placeholder="0"` })}
  ${joinHtml(
    formPolicy.map((f) => policyInput(f, form, errors)),
    '\n  ',
  )}
  <div class="field">${checkbox({ name: 'email_on_purchase', label: 'E-mail buyers their key after a purchase', checked: form.email_on_purchase === 'yes' })}</div>
</div>`;
}

function policySummary(p: Product): string {
  const pol = p.policy;
  const parts = [
    pol?.duration_days ? `${pol.duration_days} days` : 'perpetual',
    pol?.max_activations ? `${pol.max_activations} machines` : 'unlimited machines',
  ];
  if (pol?.grace_days) parts.push(`${pol.grace_days} days grace`);
  if (pol?.require_activation) parts.push('activation required');
  if (pol?.entitlements.length) parts.push(`entitlements: ${pol.entitlements.join(' ')}`);
  return parts.join(', ');
}

/** An archived product's mark, in the list and on its page. */
const archivedBadge = (p: Product) =>
  p.archived_at
    ? html` <span class="badge archived" data-archived title="Archived ${p.archived_at}">archived</span>`
    : nothing;

export function listPage(
  s: DashboardSession,
  data: {
    products: Product[];
    after: string;
    next: string;
    form: ProductForm;
    errors?: FormErrors;
    notice?: string;
  },
): Html {
  const rows = data.products.map(
    (p) =>
      html`<tr data-product-id="${p.id}"${p.archived_at ? html` class="archived"` : nothing}><td><a href="/dashboard/products/${p.id}">${p.name}</a>${archivedBadge(p)}</td><td><code>${p.id}</code></td><td>${p.price ? html`${money(p.price.amount, p.price.currency)}${p.price.interval ? html` / ${p.price.interval}` : nothing}` : html`<span class="muted">not for sale</span>`}</td><td>${policySummary(p)}</td><td>${date(p.created_at)}</td></tr>`,
  );
  const list = data.products.length
    ? html`${table(['Name', 'Id', 'Price', 'Licence policy', 'Created'], rows)}${pager('/dashboard/products', {}, data.after, data.next)}`
    : empty(
        data.after
          ? html`No more products. <a href="/dashboard/products">Back to the first page</a>.`
          : 'No products yet. Create your first one below: licences are issued for a product.',
      );
  return layout(
    'Products',
    html`${notice(data.notice)}${list}
<section class="card" aria-labelledby="new-product-title">
  <h2 id="new-product-title">New product</h2>
  ${formError(data.errors)}
  <form method="post" action="/dashboard/products" novalidate>
    ${csrfInput(s)}
    ${productFields(data.form, data.errors)}
    <p><button type="submit">Create product</button></p>
  </form>
</section>`,
    s,
    '/dashboard/products',
  );
}

/**
 * Archiving, unarchiving and deleting (a developer's): Archive or Unarchive by its state, and Delete only
 * for a product that may be deleted (no licence, no release), which asks for a confirmation first.
 */
function saleSection(s: DashboardSession, p: Product, deletable: boolean): Html {
  const state = p.archived_at
    ? html`<p>${badge('archived')} since ${date(p.archived_at)}: it sells nothing and issues no new licence; its licences keep working (validation, activations, files, renewals).</p>`
    : html`<p class="muted">On sale. Archiving takes it off sale: new checkouts and new licences are refused, while its licences keep working.</p>`;
  if (!roleCovers(s.role, 'developer'))
    return html`<section class="card" aria-labelledby="sale-title" data-product-state="${p.archived_at ? 'archived' : 'on_sale'}"><h2 id="sale-title">Sale</h2>${state}</section>`;
  const buttons = [
    p.archived_at
      ? postButton(s, `/dashboard/products/${p.id}/unarchive`, 'Unarchive')
      : postButton(s, `/dashboard/products/${p.id}/archive`, 'Archive'),
    deletable ? postButton(s, `/dashboard/products/${p.id}/delete`, 'Delete product', 'danger') : undefined,
  ].filter((b): b is Html => b !== undefined);
  return html`<section class="card" aria-labelledby="sale-title" data-product-state="${p.archived_at ? 'archived' : 'on_sale'}">
  <h2 id="sale-title">Sale</h2>
  ${state}
  <div class="button-row">${joinHtml(buttons, ' ')}</div>
  ${deletable ? nothing : html`<p class="muted">It has licences or releases, so it cannot be deleted: archive it instead.</p>`}
</section>`;
}

export function detailPage(
  s: DashboardSession,
  data: {
    product: Product;
    keys: SigningKey[];
    form: ProductForm;
    errors?: FormErrors;
    notice?: string;
    /** A refused archive, unarchive or deletion, in the service's words. */
    error?: string;
    /** No licence and no release: the Delete button is offered. */
    deletable?: boolean;
  },
): Html {
  const p = data.product;
  const keyRows = data.keys.map(
    (k) =>
      html`<tr><td><code>${k.kid}</code></td><td>${k.algorithm}</td><td>${k.current ? html`<span class="badge active">current</span>` : html`<span class="muted">earlier</span>`}</td><td>${date(k.created_at)}</td><td><details><summary>Public key</summary><pre><code>${k.public_key_pem}</code></pre></details></td></tr>`,
  );
  return layout(
    p.name,
    html`${notice(data.notice)}${data.error ? html`<p class="error" role="alert">${data.error}</p>` : nothing}
<p class="muted">Product <code>${p.id}</code>${archivedBadge(p)}, created ${date(p.created_at)}. <a href="/dashboard/licenses?product_id=${p.id}">Its licences</a> · <a href="/dashboard/products/${p.id}/releases">Releases</a></p>
${saleSection(s, p, data.deletable ?? false)}
<section class="card" aria-labelledby="edit-title">
  <h2 id="edit-title">Details and licence policy</h2>
  <p class="muted">A new policy applies to licences issued or renewed from now on.</p>
  ${formError(data.errors)}
  <form method="post" action="/dashboard/products/${p.id}" novalidate>
    ${csrfInput(s)}
    ${productFields(data.form, data.errors)}
    <p><button type="submit">Save changes</button></p>
  </form>
</section>
<section aria-labelledby="keys-title">
  <h2 id="keys-title">Signing keys</h2>
  <p class="muted">Apps verify licence files offline with these public keys. Earlier keys stay listed so files they signed still verify.</p>
  ${data.keys.length ? table(['Key id', 'Algorithm', 'Status', 'Created', html`<span class="sr-only">Public key</span>`], keyRows) : empty('No signing key yet: one is made when the first licence file is issued, or rotate to make one now.')}
  <p><a href="/dashboard/products/${p.id}/rotate-key">Rotate signing key</a></p>
</section>`,
    s,
    '/dashboard/products',
  );
}

export const rotateConfirm = (s: DashboardSession, p: Product) =>
  layout(
    'Rotate signing key?',
    confirmForm(s, {
      action: `/dashboard/products/${p.id}/rotate-key`,
      question: html`Make a new signing key for <strong>${p.name}</strong>?`,
      consequence:
        'Licence files are signed with the new key from now on. Apps need its public key to verify them; files signed before keep verifying with the earlier key.',
      button: 'Rotate key',
      back: `/dashboard/products/${p.id}`,
    }),
    s,
    '/dashboard/products',
  );

export const deleteConfirm = (s: DashboardSession, p: Product) =>
  layout(
    'Delete product?',
    confirmForm(s, {
      action: `/dashboard/products/${p.id}/delete`,
      question: html`Delete <strong>${p.name}</strong>?`,
      consequence:
        'The product and its signing keys are removed. It has no licence and no release; this cannot be undone.',
      button: 'Delete product',
      danger: true,
      back: `/dashboard/products/${p.id}`,
    }),
    s,
    '/dashboard/products',
  );
