import type { Request, Response, Router } from 'express';
import { isId } from '@licensing/runtime';
import {
  DEFAULT_POLICY,
  entitlementsFromText,
  priceIntervals,
  policyRules,
  policyToContract,
  withPolicyDefaults,
  type LicensePolicy,
  type Policy,
  type PolicyField,
  type PolicyRule,
  type Price,
  type Product,
  type SigningKey,
} from '@licensing/proto';
import {
  field,
  formErrorsOf,
  idOrNotFound,
  queryOf,
  wholeNumber,
  type DashboardContext,
  type FormErrors,
} from './context';
import { h, layout } from './pages';
import type { DashboardSession } from './session';
import {
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
  select,
  table,
  textarea,
} from './widgets';

// /dashboard/products: list and create products, edit one (name, description,
// price, licence policy), see and rotate its signing keys. Every change goes
// through the product service, as POST/PATCH /api/v1/products do.

const PAGE = 25;

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
  entitlements: {
    label: 'Entitlements',
    hint: '(feature codes such as pdf-export, separated by commas, spaces or lines; a change reaches every licence of the product at once)',
  },
};
const formPolicy = (Object.keys(POLICY_ON_FORM) as PolicyField[]).flatMap((name) => {
  const shown = POLICY_ON_FORM[name];
  return shown === 'kept' ? [] : [{ name, rule: policyRules[name] as PolicyRule, ...shown }];
});

/** What the product form holds, as typed (so a refused form comes back as it was); a ticked box is 'yes'. */
interface ProductForm {
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

/** A policy value as the form shows it: null (no limit) as empty, a list of codes one after another. */
const typed = (value: Policy[PolicyField]): string =>
  value === null || value === false
    ? ''
    : value === true
      ? 'yes'
      : Array.isArray(value)
        ? value.join(', ')
        : String(value);
const policyForm = (p: Policy): ProductForm['policy'] =>
  Object.fromEntries(formPolicy.map(({ name }) => [name, typed(p[name])]));

const blankForm: ProductForm = {
  name: '',
  description: '',
  price_amount: '',
  price_currency: 'USD',
  price_interval: '',
  price_interval_count: '',
  price_trial_days: '',
  email_on_purchase: 'yes',
  policy: policyForm(DEFAULT_POLICY),
};

const formOf = (p: Product): ProductForm => ({
  name: p.name,
  description: p.description,
  price_amount: p.price ? (p.price.amount / 100).toFixed(2) : '',
  price_currency: p.price?.currency ?? 'USD',
  price_interval: p.price?.interval ?? '',
  price_interval_count: p.price?.interval ? String(p.price.interval_count || 1) : '',
  price_trial_days: p.price?.interval ? String(p.price.trial_days ?? 0) : '',
  email_on_purchase: p.email_on_purchase ? 'yes' : '',
  policy: policyForm(withPolicyDefaults(p.policy)),
});

const readForm = (req: Request): ProductForm => ({
  name: field(req, 'name', 201),
  description: field(req, 'description', 2001),
  price_amount: field(req, 'price_amount', 20),
  price_currency: field(req, 'price_currency', 3).toUpperCase(),
  price_interval: field(req, 'price_interval', 10),
  price_interval_count: field(req, 'price_interval_count', 12),
  price_trial_days: field(req, 'price_trial_days', 12),
  email_on_purchase: field(req, 'email_on_purchase', 3) === 'yes' ? 'yes' : '',
  policy: Object.fromEntries(
    formPolicy.map(({ name, rule }) =>
      rule.kind === 'bool'
        ? [name, field(req, name, 3) === 'yes' ? 'yes' : '']
        : [name, field(req, name, rule.kind === 'entitlements' ? ENTITLEMENTS_TEXT_MAX : 12)],
    ),
  ),
});

/** Room for 100 codes of 64 characters and their separators; anything longer is more than 100 codes. */
export const ENTITLEMENTS_TEXT_MAX = 8000;

/**
 * The service names fields as the REST API does (policy.grace_days, price.amount, an entitlement
 * policy.entitlements[2]); the form flattens them.
 */
const renameField = (f: string) =>
  f
    .replace(/^policy\./, '')
    .replace(/^price\./, 'price_')
    .replace(/\[\d+\]$/, '');

/** A policy field as typed: a whole number ('' = its default, null for "no limit"), a box, or a word. */
function policyValue(rule: PolicyRule, raw: string, name: string, errors: Record<string, string>): unknown {
  switch (rule.kind) {
    case 'int':
      return wholeNumber(raw, name, errors);
    case 'bool':
      return raw === 'yes';
    case 'enum':
      return raw;
    case 'entitlements':
      // Checked by the product service as the API's are (policy.entitlements, shown next to the field).
      return entitlementsFromText(raw);
  }
}

/**
 * The form as a price and policy; typing mistakes (not a number) are found
 * here, ranges and rules are the product service's. An empty amount = no price.
 */
function parseForm(
  form: ProductForm,
  keep?: LicensePolicy,
): { price?: Price; policy: LicensePolicy; errors: Record<string, string> } {
  const errors: Record<string, string> = {};
  let price: Price | undefined;
  const amount = form.price_amount.trim();
  if (amount) {
    if (!/^\d{1,8}(\.\d{1,2})?$/.test(amount)) errors.price_amount = 'Enter an amount such as 19 or 19.99.';
    else price = { amount: Math.round(Number(amount) * 100), currency: form.price_currency.trim() };
  }
  // A recurring price: the interval, how many, and the trial (ranges are the product service's).
  if (form.price_interval) {
    const count = wholeNumber(form.price_interval_count, 'price_interval_count', errors);
    const trial = wholeNumber(form.price_trial_days, 'price_trial_days', errors);
    if (!price) errors.price_interval ??= 'A subscription needs a price: enter an amount.';
    else
      price = {
        ...price,
        interval: form.price_interval,
        interval_count: typeof count === 'number' ? count : undefined,
        trial_days: typeof trial === 'number' ? trial : undefined,
      };
  } else if (price && form.price_trial_days.trim() && form.price_trial_days.trim() !== '0')
    errors.price_trial_days = 'A trial needs a subscription: choose an interval.';
  // Fields not on this form keep their values; the rest come from the form, empty ones as their defaults.
  const typedIn = Object.fromEntries(
    formPolicy.map(({ name, rule }) => [name, policyValue(rule, form.policy[name] ?? '', name, errors)]),
  );
  const policy = policyToContract(withPolicyDefaults({ ...withPolicyDefaults(keep), ...typedIn }));
  return { price, policy, errors };
}

function policyInput({ name, rule, label, hint }: (typeof formPolicy)[number], form: ProductForm, errors?: FormErrors) {
  const value = form.policy[name] ?? '';
  switch (rule.kind) {
    case 'int':
      return input({ name, label, value, errors, hint, attrs: 'inputmode="numeric"' });
    case 'bool':
      return `<div class="field">${checkbox({ name, label, checked: value === 'yes' })}</div>`;
    case 'enum':
      return select({ name, label, options: rule.values.map((v): [string, string] => [v, v]), value, errors });
    case 'entitlements':
      return textarea({ name, label, value, errors, hint, attrs: `maxlength="${ENTITLEMENTS_TEXT_MAX}"` });
  }
}

function productFields(form: ProductForm, errors?: FormErrors): string {
  return `<div class="form-grid">
  ${input({ name: 'name', label: 'Name', value: form.name, errors, attrs: 'required maxlength="200"' })}
  ${input({ name: 'description', label: 'Description', value: form.description, errors, hint: '(optional)', attrs: 'maxlength="2000"' })}
  ${input({ name: 'price_amount', label: 'Price', value: form.price_amount, errors, hint: '(empty: not sold through checkout)', attrs: 'inputmode="decimal" placeholder="19.99"' })}
  ${input({ name: 'price_currency', label: 'Currency', value: form.price_currency, errors, hint: '(ISO code)', attrs: 'maxlength="3" autocapitalize="characters"' })}
  ${select({ name: 'price_interval', label: 'Billing', options: [['', 'One-time'], ...priceIntervals.map((i): [string, string] => [i, `Subscription, every ${i}`])], value: form.price_interval, errors })}
  ${input({ name: 'price_interval_count', label: 'Bill every this many intervals', value: form.price_interval_count, errors, hint: '(subscriptions: 1–12, empty: 1)', attrs: 'inputmode="numeric" placeholder="1"' })}
  ${input({ name: 'price_trial_days', label: 'Free trial in days', value: form.price_trial_days, errors, hint: '(subscriptions: 0–365, empty: none)', attrs: 'inputmode="numeric" placeholder="0"' })}
  ${formPolicy.map((f) => policyInput(f, form, errors)).join('\n  ')}
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
  return h(parts.join(', '));
}

function listPage(
  s: DashboardSession,
  data: { products: Product[]; after: string; next: string; form: ProductForm; errors?: FormErrors },
): string {
  const rows = data.products.map(
    (p) =>
      `<tr data-product-id="${h(p.id)}"><td><a href="/dashboard/products/${h(p.id)}">${h(p.name)}</a></td><td><code>${h(p.id)}</code></td><td>${p.price ? `${money(p.price.amount, p.price.currency)}${p.price.interval ? ` / ${h(p.price.interval)}` : ''}` : '<span class="muted">not for sale</span>'}</td><td>${policySummary(p)}</td><td>${date(p.created_at)}</td></tr>`,
  );
  const list = data.products.length
    ? table(['Name', 'Id', 'Price', 'Licence policy', 'Created'], rows) +
      pager('/dashboard/products', {}, data.after, data.next)
    : empty(
        data.after
          ? 'No more products. <a href="/dashboard/products">Back to the first page</a>.'
          : 'No products yet. Create your first one below: licences are issued for a product.',
      );
  return layout(
    'Products',
    `${list}
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

function detailPage(
  s: DashboardSession,
  data: { product: Product; keys: SigningKey[]; form: ProductForm; errors?: FormErrors; notice?: string },
): string {
  const p = data.product;
  const keyRows = data.keys.map(
    (k) =>
      `<tr><td><code>${h(k.kid)}</code></td><td>${h(k.algorithm)}</td><td>${k.current ? '<span class="badge active">current</span>' : '<span class="muted">earlier</span>'}</td><td>${date(k.created_at)}</td><td><details><summary>Public key</summary><pre><code>${h(k.public_key_pem)}</code></pre></details></td></tr>`,
  );
  return layout(
    p.name,
    `${notice(data.notice)}
<p class="muted">Product <code>${h(p.id)}</code>, created ${date(p.created_at)}. <a href="/dashboard/licenses?product_id=${h(p.id)}">Its licences</a></p>
<section class="card" aria-labelledby="edit-title">
  <h2 id="edit-title">Details and licence policy</h2>
  <p class="muted">A new policy applies to licences issued or renewed from now on.</p>
  ${formError(data.errors)}
  <form method="post" action="/dashboard/products/${h(p.id)}" novalidate>
    ${csrfInput(s)}
    ${productFields(data.form, data.errors)}
    <p><button type="submit">Save changes</button></p>
  </form>
</section>
<section aria-labelledby="keys-title">
  <h2 id="keys-title">Signing keys</h2>
  <p class="muted">Apps verify licence files offline with these public keys. Earlier keys stay listed so files they signed still verify.</p>
  ${data.keys.length ? table(['Key id', 'Algorithm', 'Status', 'Created', '<span class="sr-only">Public key</span>'], keyRows) : empty('No signing key yet: one is made when the first licence file is issued, or rotate to make one now.')}
  <p><a href="/dashboard/products/${h(p.id)}/rotate-key">Rotate signing key</a></p>
</section>`,
    s,
    '/dashboard/products',
  );
}

export function productPages(r: Router, ctx: DashboardContext): void {
  const { clients, page, signedIn } = ctx;

  async function showList(
    req: Request,
    res: Response,
    s: DashboardSession,
    status: number,
    form: ProductForm,
    errors?: FormErrors,
  ) {
    const after = queryOf(req, 'starting_after', 64);
    const startingAfter = isId('prod', after) ? after : '';
    const out = await clients.products.listProducts({
      account_id: s.accountId,
      page: { limit: PAGE, starting_after: startingAfter },
    });
    page(
      res,
      status,
      listPage(s, {
        products: out.data,
        after: startingAfter,
        next: out.page!.has_more ? out.page!.next_cursor : '',
        form,
        errors,
      }),
    );
  }

  // A product of another account (or a malformed id) is not found: the 404 page.
  const idOf = (req: Request) => String(req.params.id).slice(0, 64);

  async function showDetail(
    res: Response,
    s: DashboardSession,
    id: string,
    status: number,
    extra: { form?: ProductForm; errors?: FormErrors; notice?: string } = {},
  ) {
    const [product, keys] = await Promise.all([
      clients.products.getProduct({ account_id: s.accountId, id }),
      clients.products.listSigningKeys({ account_id: s.accountId, id }),
    ]);
    page(
      res,
      status,
      detailPage(s, {
        product,
        keys: keys.data,
        form: extra.form ?? formOf(product),
        errors: extra.errors,
        notice: extra.notice,
      }),
    );
  }

  r.get(
    '/products',
    signedIn((req, res, s) => showList(req, res, s, 200, blankForm)),
  );

  r.post(
    '/products',
    signedIn(async (req, res, s) => {
      const form = readForm(req);
      const { price, policy, errors } = parseForm(form);
      if (Object.keys(errors).length) return showList(req, res, s, 400, form, { fields: errors });
      try {
        const product = await clients.products.createProduct({
          account_id: s.accountId,
          name: form.name.trim(),
          description: form.description.trim(),
          policy,
          price,
          email_on_purchase: form.email_on_purchase === 'yes',
        });
        res.redirect(303, `/dashboard/products/${product.id}?created=1`);
      } catch (err) {
        const e = formErrorsOf(err, renameField);
        await showList(req, res, s, e.status, form, e);
      }
    }),
  );

  r.get(
    '/products/:id',
    signedIn((req, res, s) =>
      showDetail(res, s, notFoundUnless(idOf(req)), 200, {
        notice: req.query.created ? 'Product created. Issue licences for it on the Licences page.' : undefined,
      }),
    ),
  );

  r.post(
    '/products/:id',
    signedIn(async (req, res, s) => {
      const id = notFoundUnless(idOf(req));
      const current = await clients.products.getProduct({ account_id: s.accountId, id });
      const form = readForm(req);
      const { price, policy, errors } = parseForm(form, current.policy);
      if (Object.keys(errors).length) return showDetail(res, s, id, 400, { form, errors: { fields: errors } });
      try {
        await clients.products.updateProduct({
          account_id: s.accountId,
          id,
          name: form.name.trim(),
          description: form.description.trim(),
          policy,
          price,
          remove_price: !price && !!current.price,
          email_on_purchase: form.email_on_purchase === 'yes',
        });
        await showDetail(res, s, id, 200, { notice: 'Saved.' });
      } catch (err) {
        const e = formErrorsOf(err, renameField);
        await showDetail(res, s, id, e.status, { form, errors: e });
      }
    }),
  );

  r.get(
    '/products/:id/rotate-key',
    signedIn(async (req, res, s) => {
      const product = await clients.products.getProduct({ account_id: s.accountId, id: notFoundUnless(idOf(req)) });
      page(res, 200, rotateConfirm(s, product));
    }),
  );

  r.post(
    '/products/:id/rotate-key',
    signedIn(async (req, res, s) => {
      const id = notFoundUnless(idOf(req));
      const product = await clients.products.getProduct({ account_id: s.accountId, id });
      if (field(req, 'confirm', 3) !== 'yes') return page(res, 200, rotateConfirm(s, product));
      const key = await clients.products.rotateSigningKey({ account_id: s.accountId, id });
      await showDetail(res, s, id, 201, {
        notice: `New signing key ${key.kid}. New licence files are signed with it; files signed before still verify.`,
      });
    }),
  );
}

const rotateConfirm = (s: DashboardSession, p: Product) =>
  layout(
    'Rotate signing key?',
    confirmForm(s, {
      action: `/dashboard/products/${p.id}/rotate-key`,
      question: `Make a new signing key for <strong>${h(p.name)}</strong>?`,
      consequence:
        'Licence files are signed with the new key from now on. Apps need its public key to verify them; files signed before keep verifying with the earlier key.',
      button: 'Rotate key',
      back: `/dashboard/products/${p.id}`,
    }),
    s,
    '/dashboard/products',
  );

const notFoundUnless = (id: string) => idOrNotFound('prod', id, 'product');
