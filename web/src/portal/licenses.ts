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

// The signed-in customer's licences with this vendor, one licence with its machines, freeing a
// machine and the licence file. A licence is the customer's only when it is this account's (the
// licence service's look-up is scoped to it) and its customer e-mail is the session's (compared
// case-insensitively); anything else, a key or id changed in a URL or form included, is the 404 page,
// and nothing changes.

/** Licences per page of the list; machines per page of a licence. */
const LICENSES_PAGE = 20;
const MACHINES_PAGE = 50;

type SignedInHandler = (req: Request, res: Response, s: PortalSession, vendor: Vendor) => Promise<void>;

export function portalLicenses(r: Router, page: PortalPage, clients: Clients, secureCookies: boolean): void {
  /** Pages behind sign-in: without a session, the sign-in page; a POST must carry the session's CSRF token. */
  const signedIn =
    (handler: SignedInHandler) =>
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
  async function shown(accountId: string, licenses: License[]): Promise<ShownLicense[]> {
    const ids = [...new Set(licenses.map((l) => l.product_id))];
    const names = new Map(
      await Promise.all(
        ids.map(async (id) => [id, (await clients.products.getProduct({ account_id: accountId, id })).name] as const),
      ),
    );
    return licenses.map((license) => ({ license, productName: names.get(license.product_id) ?? 'Licence' }));
  }

  /** The session's licence named in the URL, or the 404 page (thrown: the portal's error page shows it). */
  async function ownLicense(vendor: Vendor, s: PortalSession, raw: string): Promise<License> {
    const parsed = parseLicenseKey(raw);
    if (!parsed.ok) throw AppError.notFound('licence');
    const license = await clients.licenses.getLicense({ account_id: vendor.id, key: parsed.key });
    if (license.customer_email.toLowerCase() !== s.email) throw AppError.notFound('licence');
    return license;
  }

  async function showLicense(
    req: Request,
    res: Response,
    s: PortalSession,
    vendor: Vendor,
    status: number,
    opts: { notice?: string; error?: string } = {},
  ): Promise<void> {
    const license = await ownLicense(vendor, s, String(req.params.key));
    const after = queryOf(req, 'starting_after', 64);
    const startingAfter = isId('act', after) ? after : '';
    const [[one], machines] = await Promise.all([
      shown(vendor.id, [license]),
      clients.licenses.listActivations({
        account_id: vendor.id,
        key: license.key,
        page: { limit: MACHINES_PAGE, starting_after: startingAfter },
      }),
    ]);
    const path = `${portalPath(vendor.id)}/licenses/${encodeURIComponent(license.key)}`;
    page(
      res,
      status,
      licensePage(vendor, s, one, machines.data, {
        ...opts,
        pager: pager(path, {}, startingAfter, machines.page?.next_cursor ?? ''),
      }),
    );
  }

  r.get('/', async (req, res) => {
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
    page(
      res,
      200,
      licensesPage(
        vendor,
        s,
        await shown(vendor.id, out.data),
        pager(portalPath(vendor.id), {}, startingAfter, out.page?.next_cursor ?? ''),
        !startingAfter,
      ),
    );
  });

  r.get(
    '/licenses/:key',
    signedIn(async (req, res, s, vendor) =>
      showLicense(req, res, s, vendor, 200, {
        notice: queryOf(req, 'freed', 1) === '1' ? 'The machine is freed: its seat is available again.' : undefined,
      }),
    ),
  );

  r.post(
    '/licenses/:key/activations/:id/deactivate',
    signedIn(async (req, res, s, vendor) => {
      const license = await ownLicense(vendor, s, String(req.params.key));
      const id = String(req.params.id);
      if (!isId('act', id)) throw AppError.notFound('activation');
      try {
        await clients.licenses.deactivateForCustomer({
          account_id: vendor.id,
          key: license.key,
          activation_id: id,
          customer_email: s.email,
        });
      } catch (err) {
        if (!(err instanceof AppError) || !['rate_limited', 'conflict'].includes(err.code)) throw err;
        if (err.retryAfterS !== undefined) res.setHeader('Retry-After', String(err.retryAfterS));
        if (err.code === 'rate_limited') res.locals.rateLimitWindow = 'portal_deactivations';
        return showLicense(req, res, s, vendor, err.code === 'rate_limited' ? 429 : 409, { error: err.message });
      }
      res.redirect(303, `${portalPath(vendor.id)}/licenses/${encodeURIComponent(license.key)}?freed=1`);
    }),
  );

  r.get(
    '/licenses/:key/file',
    signedIn(async (req, res, s, vendor) => {
      const license = await ownLicense(vendor, s, String(req.params.key));
      try {
        const file = await clients.licenses.issueLicenseFile({
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
        page(
          res,
          409,
          portalMessagePage(
            'No licence file',
            `No licence file can be issued for this licence: ${err.message}.`,
            vendor,
            s,
          ),
        );
      }
    }),
  );
}
