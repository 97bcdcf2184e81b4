import type { Request, Response, Router } from 'express';
import { AppError, isId } from '@licensing/runtime';
import {
  entitlementsFromText,
  entitlementsProblem,
  isOneOf,
  licenseActions,
  licenseStatuses,
  parseLicenseKey,
  MAX_LICENSE_KEY_LENGTH,
  type Activation,
  type License,
  type LicenseAction,
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
  ACTIONS,
  actionConfirmPage,
  deactivateConfirmPage,
  detailPage,
  listPage,
  type DetailData,
  type IssueForm,
} from './license-views';
import { ENTITLEMENTS_TEXT_MAX } from './product-views';
import { downloadsOf } from './releases';
import type { DashboardSession } from './session';

// /dashboard/licenses: issue, search, and one licence's page with its
// activations, lifecycle actions (each confirmed first) and its licence file.
// Every call is the licence service's, scoped to the signed-in account, and
// tells the gateway's validation cache, as the REST routes do. The pages are license-views.ts.

const PAGE = 25;

const allProducts = async ({ clients }: DashboardContext, s: DashboardSession) =>
  (await clients.products.listProducts({ account_id: s.accountId, page: { limit: 100, starting_after: '' } })).data;

/** A query value of the given id kind, or ''. */
const idQuery = (req: Request, name: string, prefix: string) =>
  isId(prefix, queryOf(req, name, 64)) ? queryOf(req, name, 64) : '';

async function showList(
  ctx: DashboardContext,
  req: Request,
  res: Response,
  s: DashboardSession,
  status: number,
  extra: { form?: IssueForm; errors?: FormErrors; issued?: License } = {},
) {
  const { clients, page } = ctx;
  const q = queryOf(req, 'q', 254);
  const statusFilter = isOneOf(licenseStatuses, queryOf(req, 'status', 20)) ? queryOf(req, 'status', 20) : '';
  const productId = idQuery(req, 'product_id', 'prod');
  const after = idQuery(req, 'starting_after', 'lic');
  const base = {
    q,
    status: statusFilter,
    productId,
    after,
    next: '',
    form: extra.form ?? { product_id: productId, customer_email: '' },
    errors: extra.errors,
    issued: extra.issued,
  };
  const products = await allProducts(ctx, s);
  if (q && !q.includes('@')) {
    // A key: one exact look-up (keys are unique per account).
    try {
      const license = await clients.licenses.getLicense({
        account_id: s.accountId,
        key: q.slice(0, MAX_LICENSE_KEY_LENGTH),
      });
      return page(res, status, listPage(s, { ...base, products, licenses: [license] }));
    } catch (err) {
      if (!(err instanceof AppError) || !['not_found', 'invalid_request'].includes(err.code)) throw err;
      const message = 'No licence with this key in this account.';
      return page(res, status, listPage(s, { ...base, products, licenses: [], message }));
    }
  }
  const out = await clients.licenses.listLicenses({
    account_id: s.accountId,
    page: { limit: PAGE, starting_after: after },
    product_id: productId,
    customer_email: q,
    status: statusFilter,
  });
  page(
    res,
    status,
    listPage(s, {
      ...base,
      products,
      licenses: out.data,
      next: out.page!.has_more ? out.page!.next_cursor : '',
      message: q && !out.data.length ? `No licences for ${q}.` : undefined,
    }),
  );
}

/** The licence key in the URL, canonical; a malformed one names no licence (404), like another account's. */
export const keyOf = (req: Request): string => {
  const parsed = parseLicenseKey(String(req.params.key).slice(0, MAX_LICENSE_KEY_LENGTH + 1));
  if (!parsed.ok) throw AppError.notFound('licence');
  return parsed.key;
};

type DetailExtra = Partial<
  Pick<DetailData, 'notice' | 'error' | 'fileErrors' | 'file' | 'entitlementErrors' | 'extras'>
>;

async function showDetail(
  ctx: DashboardContext,
  req: Request,
  res: Response,
  s: DashboardSession,
  status: number,
  extra: DetailExtra = {},
) {
  const { clients, page } = ctx;
  const license = await clients.licenses.getLicense({ account_id: s.accountId, key: keyOf(req) });
  const after = idQuery(req, 'starting_after', 'act');
  const [product, activations, recent, downloads] = await Promise.all([
    // Its name, and its current policy for whether Renew applies: without the product service the
    // page still shows the licence (Renew then judged by the licence's own policy).
    clients.products.getProduct({ account_id: s.accountId, id: license.product_id }).catch(() => undefined),
    clients.licenses.listActivations({
      account_id: s.accountId,
      key: license.key,
      page: { limit: PAGE, starting_after: after },
    }),
    clients.licenses.listRecentValidations({ account_id: s.accountId, key: license.key, limit: 10 }),
    downloadsOf(ctx, s, license),
  ]);
  const next = activations.page!.has_more ? activations.page!.next_cursor : '';
  page(
    res,
    status,
    detailPage(s, {
      license,
      product,
      activations: activations.data,
      recent: recent.data,
      downloads,
      after,
      next,
      ...extra,
    }),
  );
}

const listLicenses = (ctx: DashboardContext) => ctx.signedIn((req, res, s) => showList(ctx, req, res, s, 200));

const issueLicense = (ctx: DashboardContext) =>
  ctx.signedIn(async (req, res, s) => {
    const form = {
      product_id: field(req, 'product_id', 64),
      customer_email: field(req, 'customer_email', 255).trim(),
    };
    const errors: Record<string, string> = {};
    if (!form.product_id) errors.product_id = 'Choose a product.';
    if (!form.customer_email) errors.customer_email = 'Enter the customer’s e-mail address.';
    if (Object.keys(errors).length) return showList(ctx, req, res, s, 400, { form, errors: { fields: errors } });
    try {
      const license = await ctx.clients.licenses.createLicense({
        account_id: s.accountId,
        product_id: form.product_id,
        customer_email: form.customer_email,
        idempotency_key: '',
        send_email: false,
      });
      await showList(ctx, req, res, s, 201, { issued: license });
    } catch (err) {
      // Another account's product id (a changed form) is not found: 404, said next to the field.
      if (err instanceof AppError && err.code === 'not_found')
        return showList(ctx, req, res, s, 404, {
          form,
          errors: { fields: { product_id: 'There is no such product in this account. Choose one of yours.' } },
        });
      const e = formErrorsOf(err);
      await showList(ctx, req, res, s, e.status, { form, errors: e });
    }
  });

const showLicense = (ctx: DashboardContext) => ctx.signedIn((req, res, s) => showDetail(ctx, req, res, s, 200));

const confirmAction = (action: LicenseAction) => (ctx: DashboardContext) =>
  ctx.signedIn(async (req, res, s) => {
    const license = await ctx.clients.licenses.getLicense({ account_id: s.accountId, key: keyOf(req) });
    ctx.page(res, 200, actionConfirmPage(s, license, action));
  });

const applyAction = (action: LicenseAction) => (ctx: DashboardContext) =>
  ctx.signedIn(async (req, res, s) => {
    const license = await ctx.clients.licenses.getLicense({ account_id: s.accountId, key: keyOf(req) });
    if (field(req, 'confirm', 3) !== 'yes') return ctx.page(res, 200, actionConfirmPage(s, license, action));
    try {
      await ctx.clients.licenses.transitionLicense({ account_id: s.accountId, key: license.key, action });
      await showDetail(ctx, req, res, s, 200, { notice: `${ACTIONS[action].done}. ${ACTIONS[action].consequence}` });
    } catch (err) {
      // Not allowed in this status (409): said on the licence's page, nothing changed.
      const e = formErrorsOf(err);
      await showDetail(ctx, req, res, s, e.status, { error: e.form ?? Object.values(e.fields)[0] });
    }
  });

/** The licence and one of its activations, both of the signed-in account, or not found. */
async function ownActivation(
  { clients }: DashboardContext,
  req: Request,
  s: DashboardSession,
): Promise<[License, Activation]> {
  const id = idOrNotFound('act', String(req.params.id).slice(0, 64), 'activation');
  const license = await clients.licenses.getLicense({ account_id: s.accountId, key: keyOf(req) });
  // A licence has few machines (max_activations); one page of 100 covers any sensible policy.
  const all = await clients.licenses.listActivations({
    account_id: s.accountId,
    key: license.key,
    page: { limit: 100, starting_after: '' },
  });
  const act = all.data.find((x) => x.id === id);
  if (!act) throw AppError.notFound('activation');
  return [license, act];
}

const confirmDeactivate = (ctx: DashboardContext) =>
  ctx.signedIn(async (req, res, s) => {
    const [license, act] = await ownActivation(ctx, req, s);
    ctx.page(res, 200, deactivateConfirmPage(s, license, act));
  });

const deactivate = (ctx: DashboardContext) =>
  ctx.signedIn(async (req, res, s) => {
    const id = idOrNotFound('act', String(req.params.id).slice(0, 64), 'activation');
    const license = await ctx.clients.licenses.getLicense({ account_id: s.accountId, key: keyOf(req) });
    if (field(req, 'confirm', 3) !== 'yes') {
      const [, act] = await ownActivation(ctx, req, s);
      return ctx.page(res, 200, deactivateConfirmPage(s, license, act));
    }
    // The service looks the activation up within this licence of this account.
    const act = await ctx.clients.licenses.deactivate({
      account_id: s.accountId,
      key: license.key,
      activation_id: id,
      key_scope: 'full', // the vendor, signed in: not counted against the customer's allowance
      fingerprint: '',
    });
    await showDetail(ctx, req, res, s, 200, { notice: `Deactivated ${act.fingerprint}.` });
  });

// The licence's extra entitlements, replaced whole as PATCH /api/v1/licenses/{key} {entitlements} does.
const saveEntitlements = (ctx: DashboardContext) =>
  ctx.signedIn(async (req, res, s) => {
    const typed = field(req, 'entitlements', ENTITLEMENTS_TEXT_MAX);
    const codes = entitlementsFromText(typed);
    const problem = entitlementsProblem('entitlements', codes);
    if (problem)
      return showDetail(ctx, req, res, s, 400, {
        extras: typed,
        entitlementErrors: { fields: { entitlements: problem.message } },
      });
    try {
      await ctx.clients.licenses.updateLicense({
        account_id: s.accountId,
        key: keyOf(req),
        metadata: {},
        set_entitlements: true,
        entitlements: codes,
      });
      await showDetail(ctx, req, res, s, 200, { notice: 'Entitlements saved.' });
    } catch (err) {
      // An item's error (entitlements[2]) is shown next to the one field.
      const e = formErrorsOf(err, (f) => f.replace(/\[\d+\]$/, ''));
      await showDetail(ctx, req, res, s, e.status, { extras: typed, entitlementErrors: e });
    }
  });

// Queued in the notification service, as POST /api/v1/licenses/{key}/email does.
const resendEmail = (ctx: DashboardContext) =>
  ctx.signedIn(async (req, res, s) => {
    const mail = await ctx.clients.notifications.sendLicenseEmail({
      account_id: s.accountId,
      key: keyOf(req),
      dedupe_key: '',
    });
    await showDetail(ctx, req, res, s, 202, { notice: `The e-mail to ${mail.to} is queued.` });
  });

const downloadFile = (ctx: DashboardContext) =>
  ctx.signedIn(async (req, res, s) => {
    const form = { fingerprint: field(req, 'fingerprint', 201).trim(), ttl_days: field(req, 'ttl_days', 12) };
    const errors: Record<string, string> = {};
    const ttl = wholeNumber(form.ttl_days, 'ttl_days', errors);
    if (Object.keys(errors).length)
      return showDetail(ctx, req, res, s, 400, { file: form, fileErrors: { fields: errors } });
    try {
      const file = await ctx.clients.licenses.issueLicenseFile({
        account_id: s.accountId,
        key: keyOf(req),
        fingerprint: form.fingerprint,
        ttl_days: ttl ?? 0,
        key_scope: 'full', // the vendor, signed in
      });
      const body = JSON.stringify(
        { kid: file.kid, algorithm: file.algorithm, payload: file.payload, signature: file.signature },
        null,
        2,
      );
      res
        .status(200)
        .type('application/json')
        .attachment(`licence-${keyOf(req).slice(0, 11)}.json`)
        .send(body);
    } catch (err) {
      const e = formErrorsOf(err);
      await showDetail(ctx, req, res, s, e.status, { file: form, fileErrors: e });
    }
  });

const LICENSE_ROUTES: readonly PageRoute<DashboardContext>[] = [
  { method: 'get', path: '/licenses', handler: listLicenses },
  { method: 'post', path: '/licenses', handler: issueLicense },
  { method: 'get', path: '/licenses/:key', handler: showLicense },
  ...licenseActions.flatMap((action): PageRoute<DashboardContext>[] => [
    { method: 'get', path: `/licenses/:key/${action}`, handler: confirmAction(action) },
    { method: 'post', path: `/licenses/:key/${action}`, handler: applyAction(action) },
  ]),
  { method: 'get', path: '/licenses/:key/activations/:id/deactivate', handler: confirmDeactivate },
  { method: 'post', path: '/licenses/:key/activations/:id/deactivate', handler: deactivate },
  { method: 'post', path: '/licenses/:key/entitlements', handler: saveEntitlements },
  { method: 'post', path: '/licenses/:key/email', handler: resendEmail },
  { method: 'post', path: '/licenses/:key/file', handler: downloadFile },
];

export function licensePages(r: Router, ctx: DashboardContext): void {
  registerPageRoutes(r, LICENSE_ROUTES, ctx);
}
