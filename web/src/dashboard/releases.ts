import type { Request, Response, Router } from 'express';
import { AppError, isId } from '@licensing/runtime';
import {
  ARTIFACT_FILENAME_MAX_BYTES,
  ARTIFACT_SIGNATURE_MAX_LENGTH,
  RELEASE_NOTES_MAX_LENGTH,
  RELEASE_VERSION_MAX_LENGTH,
  entitlementsFromText,
  grantMessage,
  grantValidation,
  releaseGrant,
  type License,
  type Release,
} from '@licensing/proto';
import { registerPageRoutes, type PageRoute } from '../kit/route-table';
import { field, formErrorsOf, idOrNotFound, queryOf, type DashboardContext, type FormErrors } from './context';
import { ENTITLEMENTS_TEXT_MAX } from './product-views';
import {
  blankReleaseForm,
  releaseConfirmPage,
  releasesPage,
  type LicenseDownloads,
  type ReleaseForm,
} from './release-views';
import type { DashboardSession } from './session';

// /dashboard/products/{id}/releases: a product's releases (create a draft, publish, yank, delete a
// draft, see each file's downloads), through the product service as the REST API's release routes go.
// A file is not uploaded here: the dashboard has a session, not an API key, and the files live in the
// gateway's store, so the page's script asks this side for an upload grant (CreateUploadGrant) and
// sends the file to the gateway with it (PUT /api/v1/uploads/{token}). The pages are release-views.ts.

const PAGE = 25;

const productIdOf = (req: Request) => idOrNotFound('prod', String(req.params.id).slice(0, 64), 'product');

/** The release of the path, of the signed-in account and of the product the path names; else not found. */
async function releaseOf({ clients }: DashboardContext, req: Request, s: DashboardSession): Promise<Release> {
  const productId = productIdOf(req);
  const id = idOrNotFound('rel', String(req.params.release).slice(0, 64), 'release');
  const release = await clients.products.getRelease({ account_id: s.accountId, id });
  if (release.product_id !== productId) throw AppError.notFound('release');
  return release;
}

async function showReleases(
  { clients, page }: DashboardContext,
  req: Request,
  res: Response,
  s: DashboardSession,
  status: number,
  extra: { form?: ReleaseForm; errors?: FormErrors; notice?: string; error?: string } = {},
) {
  const productId = productIdOf(req);
  const after = isId('rel', queryOf(req, 'starting_after', 64)) ? queryOf(req, 'starting_after', 64) : '';
  const [product, out] = await Promise.all([
    clients.products.getProduct({ account_id: s.accountId, id: productId }),
    clients.products.listReleases({
      account_id: s.accountId,
      product_id: productId,
      channel: '',
      status: '',
      page: { limit: PAGE, starting_after: after },
    }),
  ]);
  const next = out.page!.has_more ? out.page!.next_cursor : '';
  page(
    res,
    status,
    releasesPage(s, { product, releases: out.data, after, next, form: extra.form ?? blankReleaseForm, ...extra }),
  );
}

const listReleases = (ctx: DashboardContext) =>
  ctx.signedIn((req, res, s) =>
    showReleases(ctx, req, res, s, 200, {
      notice: req.query.created ? 'Draft created. Upload its files, then publish it.' : undefined,
    }),
  );

const createRelease = (ctx: DashboardContext) =>
  ctx.signedIn(async (req, res, s) => {
    const form: ReleaseForm = {
      version: field(req, 'version', RELEASE_VERSION_MAX_LENGTH + 1).trim(),
      channel: field(req, 'channel', 16),
      notes: field(req, 'notes', RELEASE_NOTES_MAX_LENGTH + 1),
      entitlements: field(req, 'entitlements', ENTITLEMENTS_TEXT_MAX),
    };
    const productId = productIdOf(req);
    try {
      await ctx.clients.products.createRelease({
        account_id: s.accountId,
        product_id: productId,
        version: form.version,
        channel: form.channel || undefined,
        notes: form.notes.trim(),
        entitlements: entitlementsFromText(form.entitlements),
      });
      res.redirect(303, `/dashboard/products/${productId}/releases?created=1`);
    } catch (err) {
      // An entitlement's error (entitlements[2]) is shown next to the one field.
      const e = formErrorsOf(err, (f) => f.replace(/\[\d+\]$/, ''));
      await showReleases(ctx, req, res, s, e.status, { form, errors: e });
    }
  });

/** Publishes a draft: no confirmation (it is what a draft is for); a refusal is said on the page. */
const publishRelease = (ctx: DashboardContext) =>
  ctx.signedIn(async (req, res, s) => {
    const release = await releaseOf(ctx, req, s);
    try {
      const done = await ctx.clients.products.publishRelease({ account_id: s.accountId, id: release.id });
      await showReleases(ctx, req, res, s, 200, { notice: `Published ${done.version}.` });
    } catch (err) {
      const e = formErrorsOf(err);
      await showReleases(ctx, req, res, s, e.status, { error: e.form ?? Object.values(e.fields)[0] });
    }
  });

/** Yanks a release or deletes a draft, once confirmed (the button's first post shows the confirmation). */
const confirmedChange = (action: 'yank' | 'delete') => (ctx: DashboardContext) =>
  ctx.signedIn(async (req, res, s) => {
    const release = await releaseOf(ctx, req, s);
    if (field(req, 'confirm', 3) !== 'yes') {
      const product = await ctx.clients.products.getProduct({ account_id: s.accountId, id: release.product_id });
      return ctx.page(res, 200, releaseConfirmPage(s, product, release, action));
    }
    const ref = { account_id: s.accountId, id: release.id };
    try {
      if (action === 'yank') await ctx.clients.products.yankRelease(ref);
      else await ctx.clients.products.deleteRelease(ref);
      const done =
        action === 'yank'
          ? `Yanked ${release.version}: it is no longer offered.`
          : `Deleted the draft ${release.version}.`;
      await showReleases(ctx, req, res, s, 200, { notice: done });
    } catch (err) {
      const e = formErrorsOf(err);
      await showReleases(ctx, req, res, s, e.status, { error: e.form ?? Object.values(e.fields)[0] });
    }
  });

/**
 * The page's script asks here before an upload: a grant for one file of a draft, answered as JSON with
 * the gateway's path to send it to (the page's own origin, as its Content-Security-Policy allows) and
 * when the grant stops working. A refusal (a bad filename, a release no longer a draft) is JSON too.
 */
const uploadGrant = (ctx: DashboardContext) =>
  ctx.signedIn(async (req, res, s) => {
    const release = await releaseOf(ctx, req, s);
    try {
      const grant = await ctx.clients.products.createUploadGrant({
        account_id: s.accountId,
        release_id: release.id,
        // Cut past what any valid value holds (a name's 255 bytes are at most 255 characters).
        filename: field(req, 'filename', ARTIFACT_FILENAME_MAX_BYTES + 1),
        platform: field(req, 'platform', 16),
        arch: field(req, 'arch', 16),
        signature: field(req, 'signature', ARTIFACT_SIGNATURE_MAX_LENGTH + 1).trim(),
      });
      res.status(201).json({ url: `/api/v1/uploads/${grant.token}`, expires_at: grant.expires_at });
    } catch (err) {
      const e = formErrorsOf(err);
      res.status(e.status).json({ message: e.form ?? Object.values(e.fields)[0] });
    }
  });

/**
 * The published releases a licence may download, as its update feeds would offer them on every channel
 * it has: one validation (not counted: it is the vendor looking), its grant, FindReleases with it; or
 * the validation's refusal. Unavailable when a service does not answer: the licence's page still shows.
 */
export async function downloadsOf(
  { clients }: DashboardContext,
  s: DashboardSession,
  license: License,
): Promise<LicenseDownloads> {
  try {
    const answer = await clients.licenses.validateLicense(
      grantValidation(s.accountId, license.key, license.product_id),
    );
    const judged = releaseGrant(answer);
    if ('refusal' in judged) return { refusal: judged.refusal };
    const found = await clients.products.findReleases({
      account_id: s.accountId,
      product_id: license.product_id,
      grant: grantMessage(judged.grant),
      newer_than: '',
      platform: '',
      arch: '',
      // The least stable channel: every channel the grant has.
      channel: 'dev',
      limit: 100,
    });
    return { releases: found.data };
  } catch (err) {
    if (err instanceof AppError && err.code === 'service_unavailable') return { unavailable: true };
    throw err;
  }
}

const RELEASE_ROUTES: readonly PageRoute<DashboardContext>[] = [
  { method: 'get', path: '/products/:id/releases', handler: listReleases },
  { method: 'post', path: '/products/:id/releases', handler: createRelease },
  { method: 'post', path: '/products/:id/releases/:release/publish', handler: publishRelease },
  { method: 'post', path: '/products/:id/releases/:release/yank', handler: confirmedChange('yank') },
  { method: 'post', path: '/products/:id/releases/:release/delete', handler: confirmedChange('delete') },
  { method: 'post', path: '/products/:id/releases/:release/upload-grant', handler: uploadGrant },
];

export function releasePages(r: Router, ctx: DashboardContext): void {
  registerPageRoutes(r, RELEASE_ROUTES, ctx);
}
