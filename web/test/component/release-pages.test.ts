import { EXAMPLE_LICENSE_KEY, License, Product, Release, ValidateLicenseResponse } from '@licensing/proto';
import { AppError, newId } from '@licensing/runtime';
import { WebClient } from '../../../test/support/web-client';
import { fakeOwner, sessionHandlers } from './fake-account-answers';
import { startWebWithFakeServices, type WebWithFakeServices } from './web-with-fake-services';

// A product's Releases page and a licence's "Releases it may download" over faked product and licence
// services: a developer creates a draft, publishes it, yanks and deletes once confirmed, and gets an
// upload grant as JSON (its gateway path; a refusal as JSON too) for the page's script; a support member
// reads the page without its forms and is refused every change before the product service is asked.
// The licence's page validates it (never counted) and lists what FindReleases offers its grant, or
// says why it may have nothing. What the product service decides: services/product/test/component.

const developer = { ...fakeOwner('dev@example.com'), role: 'developer' };
const support = { ...fakeOwner('support@example.com'), role: 'support' };
support.account = developer.account;
const accountId = developer.account.id;
const product = Product.fromPartial({
  id: newId('prod'),
  account_id: accountId,
  name: 'Editor',
  created_at: new Date().toISOString(),
});
const otherProduct = newId('prod');
const releases: Release[] = [];
const license = License.fromPartial({
  id: newId('lic'),
  account_id: accountId,
  product_id: product.id,
  key: EXAMPLE_LICENSE_KEY,
  customer_email: 'buyer@example.com',
  status: 'active',
  created_at: new Date().toISOString(),
  entitlements: ['pdf', 'channel.beta'],
});
let validation = ValidateLicenseResponse.fromPartial({ valid: true, code: 'valid', license });
let w: WebWithFakeServices;

const found = (id: string) => {
  const r = releases.find((x) => x.id === id);
  if (!r) throw AppError.notFound('release');
  return r;
};
const inState = (status: string) => (req: { id: string }) => {
  const r = found(req.id);
  if (r.status === 'yanked' && status === 'published') throw new AppError('conflict', 'this release is yanked');
  r.status = status;
  return r;
};

beforeAll(async () => {
  w = await startWebWithFakeServices({
    handlers: {
      account: sessionHandlers([developer, support]),
      product: {
        getProduct: ({ id }) => {
          if (id !== product.id) throw AppError.notFound('product');
          return product;
        },
        listReleases: () => ({ data: releases, page: { has_more: false, next_cursor: '' } }),
        getRelease: ({ id }) => found(id),
        createRelease: (req) => {
          if (req.version === '1.0.0' && releases.some((r) => r.version === '1.0.0'))
            throw new AppError('conflict', 'this product already has version 1.0.0');
          const r = Release.fromPartial({
            id: newId('rel'),
            product_id: req.product_id,
            version: req.version,
            channel: req.channel ?? 'stable',
            status: 'draft',
            notes: req.notes,
            entitlements: req.entitlements,
            created_at: new Date().toISOString(),
          });
          releases.unshift(r);
          return r;
        },
        publishRelease: inState('published'),
        yankRelease: inState('yanked'),
        deleteRelease: (req) => {
          const r = found(req.id);
          releases.splice(releases.indexOf(r), 1);
          return r;
        },
        createUploadGrant: (req) => {
          if (found(req.release_id).status !== 'draft')
            throw new AppError('conflict', 'this release is published: files can be added to a draft only');
          if (req.filename.includes('/'))
            throw AppError.invalid('filename', 'the filename must not contain a path separator (/ or \\)');
          return { token: 'T'.repeat(43), expires_at: '2026-12-07T10:15:00.000Z' };
        },
        findReleases: () => ({
          data: releases.filter((r) => r.status === 'published'),
          page: { has_more: false, next_cursor: '' },
        }),
      },
      license: {
        getLicense: () => license,
        listActivations: () => ({ data: [], page: { has_more: false, next_cursor: '' } }),
        listRecentValidations: () => ({ data: [] }),
        validateLicense: () => validation,
      },
    },
  });
});

afterAll(async () => {
  await w?.stop();
});

const base = `/dashboard/products/${product.id}/releases`;

async function signedIn(who: typeof developer) {
  const web = new WebClient(w.url);
  expect((await web.signIn(who.user.email, who.password)).status).toBe(303);
  const page = await web.get(base);
  expect(page.status).toBe(200);
  return { web, csrf: WebClient.csrf(page.html) };
}

it('a developer creates a draft, publishes it, and yanks it once confirmed', async () => {
  const { web, csrf } = await signedIn(developer);
  const created = await web.post(base, {
    _csrf: csrf,
    version: ' 1.0.0 ',
    channel: '',
    notes: 'First.\nSecond line.',
    entitlements: 'pdf, export',
  });
  expect([created.status, created.location]).toEqual([303, `${base}?created=1`]);
  expect(w.fakes.product!.requestsTo('createRelease').at(-1)).toMatchObject({
    account_id: accountId,
    product_id: product.id,
    version: '1.0.0',
    notes: 'First.\nSecond line.',
    entitlements: ['pdf', 'export'],
  });
  expect(w.fakes.product!.requestsTo('createRelease').at(-1)!.channel).toBeUndefined();
  const [draft] = releases;
  const page = await web.get(`${base}?created=1`);
  expect(page.html).toContain('Draft created.');
  expect(page.html).toContain(`<tr data-release-id="${draft.id}" data-release-version="1.0.0">`);
  expect(page.html).toContain(`action="${base}/${draft.id}/upload-grant"`);

  const again = await web.post(base, { _csrf: csrf, version: '1.0.0' });
  expect(again.status).toBe(409);
  expect(again.html).toContain('this product already has version 1.0.0');
  expect(again.html).toContain('value="1.0.0"');

  const published = await web.post(`${base}/${draft.id}/publish`, { _csrf: csrf });
  expect([published.status, published.html]).toEqual([200, expect.stringContaining('Published 1.0.0.')]);
  const asked = await web.post(`${base}/${draft.id}/yank`, { _csrf: csrf });
  expect(asked.html).toContain('Yank release?');
  expect(draft.status).toBe('published');
  const yanked = await web.post(`${base}/${draft.id}/yank`, { _csrf: csrf, confirm: 'yes' });
  expect([yanked.status, yanked.html]).toEqual([200, expect.stringContaining('Yanked 1.0.0')]);
  expect(draft.status).toBe('yanked');
  const refused = await web.post(`${base}/${draft.id}/publish`, { _csrf: csrf });
  expect([refused.status, refused.html]).toEqual([409, expect.stringContaining('this release is yanked')]);
});

it('answers the page script an upload grant as JSON: the gateway path to send the file to', async () => {
  const { web, csrf } = await signedIn(developer);
  await web.post(base, { _csrf: csrf, version: '2.0.0-beta.1', channel: 'beta' });
  const [draft] = releases;
  const grant = await web.post(`${base}/${draft.id}/upload-grant`, {
    _csrf: csrf,
    filename: 'Editor Setup.exe',
    platform: 'windows',
    arch: 'x86_64',
    signature: ' minisign:abc ',
  });
  expect(grant.status).toBe(201);
  expect(grant.headers.get('content-type')).toContain('application/json');
  expect(grant.headers.get('cache-control')).toBe('no-store');
  expect(JSON.parse(grant.html)).toEqual({
    url: `/api/v1/uploads/${'T'.repeat(43)}`,
    expires_at: '2026-12-07T10:15:00.000Z',
  });
  expect(w.fakes.product!.requestsTo('createUploadGrant').at(-1)).toEqual({
    account_id: accountId,
    release_id: draft.id,
    filename: 'Editor Setup.exe',
    platform: 'windows',
    arch: 'x86_64',
    signature: 'minisign:abc',
  });
  const bad = await web.post(`${base}/${draft.id}/upload-grant`, {
    _csrf: csrf,
    filename: 'a/b.exe',
    platform: 'any',
    arch: 'any',
  });
  expect([bad.status, JSON.parse(bad.html)]).toEqual([400, { message: expect.stringContaining('path separator') }]);
  await web.post(`${base}/${draft.id}/publish`, { _csrf: csrf });
  const late = await web.post(`${base}/${draft.id}/upload-grant`, {
    _csrf: csrf,
    filename: 'a.exe',
    platform: 'any',
    arch: 'any',
  });
  expect([late.status, JSON.parse(late.html)]).toEqual([409, { message: expect.stringContaining('draft only') }]);
  // Without the form's token: the dashboard's 403, no grant.
  const calls = w.fakes.product!.requestsTo('createUploadGrant').length;
  expect((await web.post(`${base}/${draft.id}/upload-grant`, { filename: 'a.exe' })).status).toBe(403);
  expect(w.fakes.product!.requestsTo('createUploadGrant')).toHaveLength(calls);
});

it('deletes a draft once confirmed; a release under another product’s path is not found', async () => {
  const { web, csrf } = await signedIn(developer);
  await web.post(base, { _csrf: csrf, version: '3.0.0' });
  const [draft] = releases;
  const elsewhere = await web.post(`/dashboard/products/${otherProduct}/releases/${draft.id}/delete`, {
    _csrf: csrf,
    confirm: 'yes',
  });
  expect(elsewhere.status).toBe(404);
  expect((await web.post(`${base}/${draft.id}/delete`, { _csrf: csrf })).html).toContain('Delete release?');
  const deleted = await web.post(`${base}/${draft.id}/delete`, { _csrf: csrf, confirm: 'yes' });
  expect([deleted.status, deleted.html]).toEqual([200, expect.stringContaining('Deleted the draft 3.0.0.')]);
  expect(releases.find((r) => r.id === draft.id)).toBeUndefined();
});

it('a support member reads the page without its forms and is refused every change', async () => {
  const { web, csrf } = await signedIn(support);
  const page = await web.get(base);
  expect(page.html).toContain('Your role (support) reads releases');
  expect(page.html).not.toContain('upload-grant');
  const draft = releases[0];
  const before = w.fakes.product!.requestsTo('createUploadGrant').length;
  for (const path of [
    base,
    `${base}/${draft.id}/publish`,
    `${base}/${draft.id}/yank`,
    `${base}/${draft.id}/upload-grant`,
  ]) {
    const refused = await web.post(path, { _csrf: csrf, version: '9.0.0', filename: 'a.exe', confirm: 'yes' });
    expect([path, refused.status]).toEqual([path, 403]);
  }
  expect(w.fakes.product!.requestsTo('createUploadGrant')).toHaveLength(before);
});

it("a licence's page lists the releases it may download, or why none", async () => {
  const { web } = await signedIn(developer);
  const shown = await web.get(`/dashboard/licenses/${license.key}`);
  expect(shown.status).toBe(200);
  expect(shown.html).toContain('Releases it may download');
  expect(shown.html).toContain('<tr data-release-version="2.0.0-beta.1">');
  expect(w.fakes.license!.requestsTo('validateLicense').at(-1)).toMatchObject({
    account_id: accountId,
    key: license.key,
    product_id: product.id,
    key_scope: 'full',
    already_counted: true,
  });
  expect(w.fakes.product!.requestsTo('findReleases').at(-1)).toMatchObject({
    account_id: accountId,
    product_id: product.id,
    grant: { channels: ['stable', 'beta'], entitlements: ['pdf', 'channel.beta'], published_before: '' },
    channel: 'dev',
  });
  const calls = w.fakes.product!.requestsTo('findReleases').length;
  validation = ValidateLicenseResponse.fromPartial({
    valid: false,
    code: 'suspended',
    detail: 'the licence is suspended',
    next_action: 'contact_vendor',
    license,
  });
  const refused = await web.get(`/dashboard/licenses/${license.key}`);
  expect(refused.html).toContain('<span class="badge suspended">suspended</span> the licence is suspended');
  expect(w.fakes.product!.requestsTo('findReleases')).toHaveLength(calls);
});

it('serves the upload script with the dashboard’s own assets', async () => {
  const js = await fetch(`${w.url}/dashboard/assets/app.js`);
  const text = await js.text();
  expect(text).toContain('xhr.upload.onprogress');
  expect(text).toContain('data-copy');
});
