import type { Request, Response, Router } from 'express';
import { AppError, isId } from '@licensing/runtime';
import {
  DEFAULT_POLICY,
  roleCovers,
  entitlementsFromText,
  policyToContract,
  withPolicyDefaults,
  type LicensePolicy,
  type Policy,
  type PolicyField,
  type PolicyRule,
  type Price,
  type Product,
} from '@licensing/proto';
import { registerPageRoutes, type PageRoute } from '../kit/route-table';
import {
  field,
  formErrorsOf,
  idOrNotFound,
  queryOf,
  wholeNumber,
  type DashboardContext,
  type FormErrors,
} from './context';
import {
  deleteConfirm,
  detailPage,
  ENTITLEMENTS_TEXT_MAX,
  formPolicy,
  listPage,
  rotateConfirm,
  type ProductForm,
} from './product-views';
import type { DashboardSession } from './session';

// /dashboard/products: list and create products, edit one (name, description,
// price, licence policy), see and rotate its signing keys, archive, unarchive or delete it. Every change
// goes through the product service, as the /api/v1/products routes do. The pages are product-views.ts.

const PAGE = 25;

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

/** How much of a policy field the form reads: a list of codes, a word (maintain_access is 15 characters), a number. */
const fieldMax = (rule: PolicyRule): number =>
  rule.kind === 'entitlements' ? ENTITLEMENTS_TEXT_MAX : rule.kind === 'enum' ? 32 : 12;

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
        : [name, field(req, name, fieldMax(rule))],
    ),
  ),
});

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

async function showList(
  { clients, page }: DashboardContext,
  req: Request,
  res: Response,
  s: DashboardSession,
  status: number,
  form: ProductForm,
  errors?: FormErrors,
  notice?: string,
) {
  const after = queryOf(req, 'starting_after', 64);
  const startingAfter = isId('prod', after) ? after : '';
  const out = await clients.products.listProducts({
    account_id: s.accountId,
    page: { limit: PAGE, starting_after: startingAfter },
  });
  const next = out.page!.has_more ? out.page!.next_cursor : '';
  page(res, status, listPage(s, { products: out.data, after: startingAfter, next, form, errors, notice }));
}

// A product of another account (or a malformed id) is not found: the 404 page.
const idOf = (req: Request) => notFoundUnless(String(req.params.id).slice(0, 64));

async function showDetail(
  { clients, page }: DashboardContext,
  res: Response,
  s: DashboardSession,
  id: string,
  status: number,
  extra: { form?: ProductForm; errors?: FormErrors; notice?: string; error?: string } = {},
) {
  const [product, keys, deletable] = await Promise.all([
    clients.products.getProduct({ account_id: s.accountId, id }),
    clients.products.listSigningKeys({ account_id: s.accountId, id }),
    roleCovers(s.role, 'developer') ? mayDelete({ clients }, s, id) : false,
  ]);
  const form = extra.form ?? formOf(product);
  page(
    res,
    status,
    detailPage(s, {
      product,
      keys: keys.data,
      form,
      errors: extra.errors,
      notice: extra.notice,
      error: extra.error,
      deletable,
    }),
  );
}

/**
 * Whether the Delete button is offered: the product has no licence and no release (one of each looked
 * for). The product service decides again when asked (a licence may be issued in between); a service
 * that does not answer just leaves the button out.
 */
async function mayDelete({ clients }: Pick<DashboardContext, 'clients'>, s: DashboardSession, id: string) {
  const first = { limit: 1, starting_after: '' };
  try {
    const [licences, releases] = await Promise.all([
      clients.licenses.listLicenses({
        account_id: s.accountId,
        product_id: id,
        customer_email: '',
        status: '',
        page: first,
      }),
      clients.products.listReleases({ account_id: s.accountId, product_id: id, channel: '', status: '', page: first }),
    ]);
    return licences.data.length === 0 && releases.data.length === 0;
  } catch (err) {
    if (err instanceof AppError && err.code === 'service_unavailable') return false;
    throw err;
  }
}

const listProducts = (ctx: DashboardContext) =>
  ctx.signedIn((req, res, s) =>
    showList(ctx, req, res, s, 200, blankForm, undefined, req.query.deleted ? 'Product deleted.' : undefined),
  );

const createProduct = (ctx: DashboardContext) =>
  ctx.signedIn(async (req, res, s) => {
    const form = readForm(req);
    const { price, policy, errors } = parseForm(form);
    if (Object.keys(errors).length) return showList(ctx, req, res, s, 400, form, { fields: errors });
    try {
      const product = await ctx.clients.products.createProduct({
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
      await showList(ctx, req, res, s, e.status, form, e);
    }
  });

const showProduct = (ctx: DashboardContext) =>
  ctx.signedIn((req, res, s) =>
    showDetail(ctx, res, s, idOf(req), 200, {
      notice: req.query.created ? 'Product created. Issue licences for it on the Licences page.' : undefined,
    }),
  );

const updateProduct = (ctx: DashboardContext) =>
  ctx.signedIn(async (req, res, s) => {
    const id = idOf(req);
    const current = await ctx.clients.products.getProduct({ account_id: s.accountId, id });
    const form = readForm(req);
    const { price, policy, errors } = parseForm(form, current.policy);
    if (Object.keys(errors).length) return showDetail(ctx, res, s, id, 400, { form, errors: { fields: errors } });
    try {
      await ctx.clients.products.updateProduct({
        account_id: s.accountId,
        id,
        name: form.name.trim(),
        description: form.description.trim(),
        policy,
        price,
        remove_price: !price && !!current.price,
        email_on_purchase: form.email_on_purchase === 'yes',
      });
      await showDetail(ctx, res, s, id, 200, { notice: 'Saved.' });
    } catch (err) {
      const e = formErrorsOf(err, renameField);
      await showDetail(ctx, res, s, id, e.status, { form, errors: e });
    }
  });

const confirmRotate = (ctx: DashboardContext) =>
  ctx.signedIn(async (req, res, s) => {
    const product = await ctx.clients.products.getProduct({ account_id: s.accountId, id: idOf(req) });
    ctx.page(res, 200, rotateConfirm(s, product));
  });

const rotateKey = (ctx: DashboardContext) =>
  ctx.signedIn(async (req, res, s) => {
    const id = idOf(req);
    const product = await ctx.clients.products.getProduct({ account_id: s.accountId, id });
    if (field(req, 'confirm', 3) !== 'yes') return ctx.page(res, 200, rotateConfirm(s, product));
    const key = await ctx.clients.products.rotateSigningKey({ account_id: s.accountId, id });
    await showDetail(ctx, res, s, id, 201, {
      notice: `New signing key ${key.kid}. New licence files are signed with it; files signed before still verify.`,
    });
  });

/** Archives or unarchives (no confirmation: each undoes the other); a refusal is said on the page. */
const changeSale = (action: 'archive' | 'unarchive') => (ctx: DashboardContext) =>
  ctx.signedIn(async (req, res, s) => {
    const ref = { account_id: s.accountId, id: idOf(req) };
    try {
      if (action === 'archive') await ctx.clients.products.archiveProduct(ref);
      else await ctx.clients.products.unarchiveProduct(ref);
      const done =
        action === 'archive'
          ? 'Archived: it sells nothing and issues no new licence; its licences keep working.'
          : 'Back on sale.';
      await showDetail(ctx, res, s, ref.id, 200, { notice: done });
    } catch (err) {
      const e = formErrorsOf(err);
      await showDetail(ctx, res, s, ref.id, e.status, { error: e.form ?? Object.values(e.fields)[0] });
    }
  });

/** Deletes the product once confirmed (the button's first post shows the confirmation); then the list. */
const deleteProduct = (ctx: DashboardContext) =>
  ctx.signedIn(async (req, res, s) => {
    const id = idOf(req);
    if (field(req, 'confirm', 3) !== 'yes') {
      const product = await ctx.clients.products.getProduct({ account_id: s.accountId, id });
      return ctx.page(res, 200, deleteConfirm(s, product));
    }
    try {
      await ctx.clients.products.deleteProduct({ account_id: s.accountId, id });
      res.redirect(303, '/dashboard/products?deleted=1');
    } catch (err) {
      const e = formErrorsOf(err);
      await showDetail(ctx, res, s, id, e.status, { error: e.form ?? Object.values(e.fields)[0] });
    }
  });

const PRODUCT_ROUTES: readonly PageRoute<DashboardContext>[] = [
  { method: 'get', path: '/products', handler: listProducts },
  { method: 'post', path: '/products', handler: createProduct },
  { method: 'get', path: '/products/:id', handler: showProduct },
  { method: 'post', path: '/products/:id', handler: updateProduct },
  { method: 'get', path: '/products/:id/rotate-key', handler: confirmRotate },
  { method: 'post', path: '/products/:id/rotate-key', handler: rotateKey },
  { method: 'post', path: '/products/:id/archive', handler: changeSale('archive') },
  { method: 'post', path: '/products/:id/unarchive', handler: changeSale('unarchive') },
  { method: 'post', path: '/products/:id/delete', handler: deleteProduct },
];

export function productPages(r: Router, ctx: DashboardContext): void {
  registerPageRoutes(r, PRODUCT_ROUTES, ctx);
}

const notFoundUnless = (id: string) => idOrNotFound('prod', id, 'product');
