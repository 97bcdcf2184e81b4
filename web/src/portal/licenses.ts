import type { Request, Response, Router } from 'express';
import { licenseFileJson, parseLicenseKey, type License } from '@licensing/proto';
import { AppError, isId } from '@licensing/runtime';
import type { Clients } from '../backends/clients';
import { queryOf } from '../kit/form';
import { pager } from '../kit/html';
import { licensePage, licensesPage, type ShownLicense } from './license-pages';
import { portalMessagePage, signInPage } from './pages';
import type { PortalPage } from './routes';
import {
  issuePortalCsrf,
  portalPath,
  portalSessionOf,
  sessionCsrfOk,
  vendorOf,
  type PortalSession,
  type Vendor,
} from './session';
import { registerPageRoutes, type PageRoute } from '../kit/route-table';

// The signed-in customer's licences with this vendor, one licence with its machines, freeing a
// machine and the licence file. A licence is the customer's only when it is this account's (the
// licence service's look-up is scoped to it) and its customer e-mail is the session's (compared
// case-insensitively); anything else, a key or id changed in a URL or form included, is the 404 page,
// and nothing changes.

/** Licences per page of the list; machines per page of a licence. */
const LICENSES_PAGE = 20;
const MACHINES_PAGE = 50;

type SignedInHandler = (req: Request, res: Response, s: PortalSession, vendor: Vendor) => Promise<void>;

/** What the portal's licence pages reach. */
interface PortalLicensesContext {
  page: PortalPage;
  clients: Clients;
  secureCookies: boolean;
}

/** Pages behind sign-in: without a session, the sign-in page; a POST must carry the session's CSRF token. */
const signedIn =
  ({ page }: PortalLicensesContext, handler: SignedInHandler) =>
  async (req: Request, res: Response): Promise<void> => {
    const vendor = vendorOf(res);
    const s = portalSessionOf(res);
    if (!s) return void res.redirect(303, portalPath(vendor.id));
    if (req.method === 'POST' && !sessionCsrfOk(req, s))
      return page(
        res,
        403,
        portalMessagePage(
          'This form has expired',
          'The form was not sent from this page or your session changed. Reload the page and try again.',
          vendor,
          s,
        ),
      );
    await handler(req, res, s, vendor);
  };

/** Product names of a page of licences (one look-up per product). */
async function shown(clients: Clients, accountId: string, licenses: License[]): Promise<ShownLicense[]> {
  const ids = [...new Set(licenses.map((l) => l.product_id))];
  const names = new Map(
    await Promise.all(
      ids.map(async (id) => [id, (await clients.products.getProduct({ account_id: accountId, id })).name] as const),
    ),
  );
  return licenses.map((license) => ({ license, productName: names.get(license.product_id) ?? 'Licence' }));
}

/** The session's licence named in the URL, or the 404 page (thrown: the portal's error page shows it). */
async function ownLicense(clients: Clients, vendor: Vendor, s: PortalSession, raw: string): Promise<License> {
  const parsed = parseLicenseKey(raw);
  if (!parsed.ok) throw AppError.notFound('licence');
  const license = await clients.licenses.getLicense({ account_id: vendor.id, key: parsed.key });
  if (license.customer_email.toLowerCase() !== s.email) throw AppError.notFound('licence');
  return license;
}

async function showLicense(
  { clients, page }: PortalLicensesContext,
  req: Request,
  res: Response,
  s: PortalSession,
  vendor: Vendor,
  status: number,
  opts: { notice?: string; error?: string } = {},
): Promise<void> {
  const license = await ownLicense(clients, vendor, s, String(req.params.key));
  const after = queryOf(req, 'starting_after', 64);
  const startingAfter = isId('act', after) ? after : '';
  const [[one], machines] = await Promise.all([
    shown(clients, vendor.id, [license]),
    clients.licenses.listActivations({
      account_id: vendor.id,
      key: license.key,
      page: { limit: MACHINES_PAGE, starting_after: startingAfter },
    }),
  ]);
  const path = `${portalPath(vendor.id)}/licenses/${encodeURIComponent(license.key)}`;
  const machinesPager = pager(path, {}, startingAfter, machines.page?.next_cursor ?? '');
  page(res, status, licensePage(vendor, s, one, machines.data, { ...opts, pager: machinesPager }));
}

/** The portal's front page: the sign-in form, or the signed-in customer's licences. */
const frontPage =
  ({ clients, page, secureCookies }: PortalLicensesContext) =>
  async (req: Request, res: Response) => {
    const vendor = vendorOf(res);
    const s = portalSessionOf(res);
    if (!s) return page(res, 200, signInPage(vendor, issuePortalCsrf(res, vendor.id, secureCookies)));
    const after = queryOf(req, 'starting_after', 64);
    const startingAfter = isId('lic', after) ? after : '';
    const out = await clients.licenses.listLicenses({
      account_id: vendor.id,
      customer_email: s.email,
      page: { limit: LICENSES_PAGE, starting_after: startingAfter },
      product_id: '',
      status: '',
    });
    const licensesPager = pager(portalPath(vendor.id), {}, startingAfter, out.page?.next_cursor ?? '');
    const licenses = await shown(clients, vendor.id, out.data);
    page(res, 200, licensesPage(vendor, s, licenses, licensesPager, !startingAfter));
  };

const licenseDetail = (ctx: PortalLicensesContext) =>
  signedIn(ctx, async (req, res, s, vendor) =>
    showLicense(ctx, req, res, s, vendor, 200, {
      notice: queryOf(req, 'freed', 1) === '1' ? 'The machine is freed: its seat is available again.' : undefined,
    }),
  );

const freeMachine = (ctx: PortalLicensesContext) =>
  signedIn(ctx, async (req, res, s, vendor) => {
    const license = await ownLicense(ctx.clients, vendor, s, String(req.params.key));
    const id = String(req.params.id);
    if (!isId('act', id)) throw AppError.notFound('activation');
    try {
      await ctx.clients.licenses.deactivateForCustomer({
        account_id: vendor.id,
        key: license.key,
        activation_id: id,
        customer_email: s.email,
      });
    } catch (err) {
      if (!(err instanceof AppError) || !['rate_limited', 'conflict'].includes(err.code)) throw err;
      if (err.retryAfterS !== undefined) res.setHeader('Retry-After', String(err.retryAfterS));
      if (err.code === 'rate_limited') res.locals.rateLimitWindow = 'portal_deactivations';
      return showLicense(ctx, req, res, s, vendor, err.code === 'rate_limited' ? 429 : 409, { error: err.message });
    }
    res.redirect(303, `${portalPath(vendor.id)}/licenses/${encodeURIComponent(license.key)}?freed=1`);
  });

const licenseFile = (ctx: PortalLicensesContext) =>
  signedIn(ctx, async (req, res, s, vendor) => {
    const license = await ownLicense(ctx.clients, vendor, s, String(req.params.key));
    try {
      const file = await ctx.clients.licenses.issueLicenseFile({
        account_id: vendor.id,
        key: license.key,
        fingerprint: '',
        ttl_days: 0,
        key_scope: 'full', // the customer, signed in to their own licence (their own e-mail)
      });
      res
        .type('application/json')
        .set('Content-Disposition', 'attachment; filename="license.json"')
        .send(JSON.stringify(licenseFileJson(file)));
    } catch (err) {
      // A licence that is not active (or a product that cannot sign) has no file: say so on a page.
      if (!(err instanceof AppError) || !['conflict', 'invalid_request'].includes(err.code)) throw err;
      const message = `No licence file can be issued for this licence: ${err.message}.`;
      ctx.page(res, 409, portalMessagePage('No licence file', message, vendor, s));
    }
  });

const PORTAL_LICENSE_ROUTES: readonly PageRoute<PortalLicensesContext>[] = [
  { method: 'get', path: '/', handler: frontPage },
  { method: 'get', path: '/licenses/:key', handler: licenseDetail },
  { method: 'post', path: '/licenses/:key/activations/:id/deactivate', handler: freeMachine },
  { method: 'get', path: '/licenses/:key/file', handler: licenseFile },
];

export function portalLicenses(r: Router, page: PortalPage, clients: Clients, secureCookies: boolean): void {
  registerPageRoutes(r, PORTAL_LICENSE_ROUTES, { page, clients, secureCookies });
}
