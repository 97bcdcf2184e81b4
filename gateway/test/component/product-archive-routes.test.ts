import { Product } from '@licensing/proto';
import { AppError, newId } from '@licensing/runtime';
import { type GatewayOverFakes, startGatewayOverFakes } from './gateway-over-fakes';

// The REST face of archiving, unarchiving and deleting a product: POST …/archive and …/unarchive and
// DELETE /api/v1/products/{id} become the product service's calls (faked here, with its rules: each
// state change once, a deletion refused while the product has licences) for the key's account; the
// answer is the product with archived_at (null while on sale), a refusal is 409 problem JSON naming
// why, a body on archive is refused before the service is asked, a malformed id is 400 and another
// account's product 404. What the service itself decides: services/product/test/component.

let gw: GatewayOverFakes;
const products = new Map<string, Product>();
const withLicences = new Set<string>();
const ARCHIVED_AT = '2026-12-07T10:00:00.000Z';

const newProduct = () => {
  const p = Product.fromPartial({ id: newId('prod'), name: 'Editor', created_at: '2026-01-01T00:00:00.000Z' });
  products.set(p.id, p);
  return p;
};
const own = (id: string) => {
  const p = products.get(id);
  if (!p) throw AppError.notFound('product');
  return p;
};

beforeAll(async () => {
  gw = await startGatewayOverFakes({
    product: {
      getProduct: ({ id }) => own(id),
      archiveProduct: ({ id }) => {
        const p = own(id);
        if (p.archived_at) throw new AppError('conflict', 'the product is archived already');
        p.archived_at = ARCHIVED_AT;
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
        if (withLicences.has(id)) throw new AppError('conflict', 'the product has licences: archive it instead');
        products.delete(id);
        return p;
      },
    },
  });
});

afterAll(async () => {
  await gw?.stop();
});

it('archives and unarchives: the product with archived_at, each state change once (409 naming why)', async () => {
  const p = newProduct();
  const read = await gw.request('GET', `/api/v1/products/${p.id}`);
  expect(read.body.archived_at).toBeNull();

  const archived = await gw.request('POST', `/api/v1/products/${p.id}/archive`);
  expect(archived.status).toBe(200);
  expect(archived.body).toMatchObject({ id: p.id, name: 'Editor', archived_at: ARCHIVED_AT });
  expect(gw.peers.product.requestsTo('archiveProduct').at(-1)).toEqual({ account_id: gw.account, id: p.id });
  expect((await gw.request('GET', `/api/v1/products/${p.id}`)).body.archived_at).toBe(ARCHIVED_AT);

  const again = await gw.request('POST', `/api/v1/products/${p.id}/archive`);
  expect(again.status).toBe(409);
  expect(again.body).toMatchObject({ code: 'conflict', detail: expect.stringContaining('archived already') });

  const back = await gw.request('POST', `/api/v1/products/${p.id}/unarchive`);
  expect([back.status, back.body.archived_at]).toEqual([200, null]);
  const twice = await gw.request('POST', `/api/v1/products/${p.id}/unarchive`);
  expect([twice.status, twice.body.code]).toEqual([409, 'conflict']);
  expect(twice.body.detail).toContain('not archived');
});

it('deletes a product without licences (the product as it was), and refuses one with licences (409)', async () => {
  const sold = newProduct();
  withLicences.add(sold.id);
  const refused = await gw.request('DELETE', `/api/v1/products/${sold.id}`);
  expect(refused.status).toBe(409);
  expect(refused.body).toMatchObject({ code: 'conflict', detail: expect.stringContaining('has licences') });
  expect(products.has(sold.id)).toBe(true);

  const mistake = newProduct();
  const deleted = await gw.request('DELETE', `/api/v1/products/${mistake.id}`);
  expect(deleted.status).toBe(200);
  expect(deleted.body).toMatchObject({ id: mistake.id, name: 'Editor', archived_at: null });
  expect(gw.peers.product.requestsTo('deleteProduct').at(-1)).toEqual({ account_id: gw.account, id: mistake.id });
  expect((await gw.request('GET', `/api/v1/products/${mistake.id}`)).status).toBe(404);
  expect((await gw.request('DELETE', `/api/v1/products/${mistake.id}`)).status).toBe(404);
});

it('refuses a body on archive and a malformed id before the service is asked; another account’s product is 404', async () => {
  const p = newProduct();
  const calls = gw.peers.product.requestsTo('archiveProduct').length;
  const withBody = await gw.request('POST', `/api/v1/products/${p.id}/archive`, { reason: 'old' });
  expect([withBody.status, withBody.body.code]).toEqual([400, 'invalid_request']);
  const malformed = await gw.request('POST', '/api/v1/products/not-an-id/archive');
  expect([malformed.status, malformed.body.code]).toEqual([400, 'invalid_request']);
  expect(gw.peers.product.requestsTo('archiveProduct')).toHaveLength(calls);
  expect((await gw.request('POST', `/api/v1/products/${newId('prod')}/unarchive`)).status).toBe(404);
});
