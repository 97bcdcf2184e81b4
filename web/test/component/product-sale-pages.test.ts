import { License, Product, Release } from '@licensing/proto';
import { AppError, newId } from '@licensing/runtime';
import { WebClient } from '../../../test/support/web-client';
import { fakeOwner, sessionHandlers } from './fake-account-answers';
import { startWebWithFakeServices, type WebWithFakeServices } from './web-with-fake-services';

// A product's page and the product list over faked product and licence services: a developer archives
// and unarchives (the product service's 409 said on the page), archived products are marked in the
// list, the Delete button is there only for a product without licences and releases, and deleting asks
// for a confirmation first; a support member sees the product's state without the buttons and is
// refused every change before the product service is asked. Every form carries the session's CSRF
// token. What the product service decides: services/product/test/component/product-states.test.ts.

const developer = { ...fakeOwner('dev@example.com'), role: 'developer' };
const support = { ...fakeOwner('support@example.com'), role: 'support' };
support.account = developer.account;
const accountId = developer.account.id;

const products = new Map<string, Product>();
const licences: License[] = [];
const releases: Release[] = [];
const newProduct = (name: string) => {
  const p = Product.fromPartial({
    id: newId('prod'),
    account_id: accountId,
    name,
    created_at: new Date().toISOString(),
  });
  products.set(p.id, p);
  return p;
};
const own = (id: string) => {
  const p = products.get(id);
  if (!p) throw AppError.notFound('product');
  return p;
};
const none = { has_more: false, next_cursor: '' };
let w: WebWithFakeServices;

beforeAll(async () => {
  w = await startWebWithFakeServices({
    handlers: {
      account: sessionHandlers([developer, support]),
      product: {
        getProduct: ({ id }) => own(id),
        listProducts: () => ({ data: [...products.values()], page: none }),
        listSigningKeys: () => ({ data: [] }),
        listReleases: ({ product_id }) => ({ data: releases.filter((r) => r.product_id === product_id), page: none }),
        archiveProduct: ({ id }) => {
          const p = own(id);
          if (p.archived_at) throw new AppError('conflict', 'the product is archived already');
          p.archived_at = '2026-12-07T10:00:00.000Z';
          return p;
        },
        unarchiveProduct: ({ id }) => {
          const p = own(id);
          if (!p.archived_at) throw new AppError('conflict', 'the product is not archived');
          p.archived_at = '';
          return p;
        },
        deleteProduct: ({ id }) => {
          const p = own(id);
          if (licences.some((l) => l.product_id === id))
            throw new AppError('conflict', 'the product has licences: archive it instead');
          products.delete(id);
          return p;
        },
      },
      license: {
        listLicenses: ({ product_id }) => ({ data: licences.filter((l) => l.product_id === product_id), page: none }),
      },
    },
  });
});

afterAll(async () => {
  await w?.stop();
});

async function signedIn(who: typeof developer, path: string) {
  const web = new WebClient(w.url);
  expect((await web.signIn(who.user.email, who.password)).status).toBe(303);
  const page = await web.get(path);
  expect(page.status).toBe(200);
  return { web, page, csrf: WebClient.csrf(page.html) };
}

const buttonTo = (html: string, action: string) => html.includes(`action="${action}"`);

it('a developer archives a product (marked in the list) and unarchives it; each twice is refused on the page', async () => {
  const p = newProduct('Editor');
  licences.push(License.fromPartial({ id: newId('lic'), account_id: accountId, product_id: p.id, key: 'K' }));
  const at = `/dashboard/products/${p.id}`;
  const { web, page, csrf } = await signedIn(developer, at);
  expect(page.html).toContain('data-product-state="on_sale"');
  expect(buttonTo(page.html, `${at}/archive`)).toBe(true);
  expect(buttonTo(page.html, `${at}/unarchive`)).toBe(false);

  const archived = await web.post(`${at}/archive`, { _csrf: csrf });
  expect([archived.status, archived.html]).toEqual([200, expect.stringContaining('Archived: it sells nothing')]);
  expect(w.fakes.product!.requestsTo('archiveProduct').at(-1)).toEqual({ account_id: accountId, id: p.id });
  expect(archived.html).toContain('data-product-state="archived"');
  expect(buttonTo(archived.html, `${at}/unarchive`)).toBe(true);
  expect(buttonTo(archived.html, `${at}/archive`)).toBe(false);

  const list = await web.get('/dashboard/products');
  expect(list.html).toMatch(new RegExp(`<tr data-product-id="${p.id}" class="archived">.*?data-archived`));

  const again = await web.post(`${at}/archive`, { _csrf: csrf });
  expect([again.status, again.html]).toEqual([409, expect.stringContaining('archived already')]);

  const back = await web.post(`${at}/unarchive`, { _csrf: csrf });
  expect([back.status, back.html]).toEqual([200, expect.stringContaining('Back on sale.')]);
  expect(back.html).toContain('data-product-state="on_sale"');
  const twice = await web.post(`${at}/unarchive`, { _csrf: csrf });
  expect([twice.status, twice.html]).toEqual([409, expect.stringContaining('not archived')]);

  // Without the form's token: the dashboard's 403, and the product service is not asked.
  const calls = w.fakes.product!.requestsTo('archiveProduct').length;
  expect((await web.post(`${at}/archive`, {})).status).toBe(403);
  expect(w.fakes.product!.requestsTo('archiveProduct')).toHaveLength(calls);
});

it('offers Delete only for a product without licences and releases, and deletes it once confirmed', async () => {
  const withLicence = newProduct('Sold');
  licences.push(License.fromPartial({ id: newId('lic'), account_id: accountId, product_id: withLicence.id, key: 'L' }));
  const withRelease = newProduct('Shipped');
  releases.push(
    Release.fromPartial({ id: newId('rel'), product_id: withRelease.id, version: '1.0.0', status: 'draft' }),
  );
  const mistake = newProduct('Typo');

  const { web, csrf } = await signedIn(developer, '/dashboard/products');
  for (const p of [withLicence, withRelease]) {
    const page = await web.get(`/dashboard/products/${p.id}`);
    expect(buttonTo(page.html, `/dashboard/products/${p.id}/delete`)).toBe(false);
    expect(page.html).toContain('cannot be deleted: archive it instead');
  }
  const at = `/dashboard/products/${mistake.id}`;
  const page = await web.get(at);
  expect(buttonTo(page.html, `${at}/delete`)).toBe(true);

  const asked = await web.post(`${at}/delete`, { _csrf: csrf });
  expect([asked.status, asked.html]).toEqual([200, expect.stringContaining('Delete product?')]);
  expect(products.has(mistake.id)).toBe(true);
  const deleted = await web.post(`${at}/delete`, { _csrf: csrf, confirm: 'yes' });
  expect([deleted.status, deleted.location]).toEqual([303, '/dashboard/products?deleted=1']);
  expect(products.has(mistake.id)).toBe(false);
  expect((await web.get('/dashboard/products?deleted=1')).html).toContain('Product deleted.');

  // The product service's refusal (a licence issued since the page was shown) is said on the page.
  const refused = await web.post(`/dashboard/products/${withLicence.id}/delete`, { _csrf: csrf, confirm: 'yes' });
  expect([refused.status, refused.html]).toEqual([409, expect.stringContaining('has licences')]);
  expect(products.has(withLicence.id)).toBe(true);
});

it('a support member sees the state without the buttons, and is refused every change', async () => {
  const p = newProduct('Viewer');
  const at = `/dashboard/products/${p.id}`;
  const { web, page, csrf } = await signedIn(support, at);
  expect(page.html).toContain('data-product-state="on_sale"');
  for (const action of ['archive', 'unarchive', 'delete']) expect(buttonTo(page.html, `${at}/${action}`)).toBe(false);
  const before = ['archiveProduct', 'unarchiveProduct', 'deleteProduct'].map(
    (m) => w.fakes.product!.requestsTo(m as 'archiveProduct').length,
  );
  for (const action of ['archive', 'unarchive', 'delete'])
    expect((await web.post(`${at}/${action}`, { _csrf: csrf, confirm: 'yes' })).status).toBe(403);
  expect(
    ['archiveProduct', 'unarchiveProduct', 'deleteProduct'].map(
      (m) => w.fakes.product!.requestsTo(m as 'archiveProduct').length,
    ),
  ).toEqual(before);
});
