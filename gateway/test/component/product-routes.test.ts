import { Product } from '@licensing/proto';
import { AppError, newId } from '@licensing/runtime';
import { type GatewayOverFakes, startGatewayOverFakes } from './gateway-over-fakes';
import { DEFAULT_POLICY_JSON } from './rest-shapes';

// The REST face of the product service: the gateway turns /api/v1/products requests into the product
// service's gRPC calls (faked here) for the key's account, refuses a query or body it cannot pass on
// before the service is asked, and answers with the API's statuses and shapes (201 with Location, the
// policy's defaults spelled out, cursor pages, problem JSON naming the field, 404). What the service
// itself does with these calls: services/product/test/component.

let gw: GatewayOverFakes;
const known = newId('prod');
const CREATED_AT = '2026-01-01T00:00:00.000Z';
const stored = (over: Partial<Product> = {}): Product =>
  Product.fromPartial({
    id: known,
    name: 'Photo Editor Pro',
    description: 'Desktop app',
    created_at: CREATED_AT,
    ...over,
  });
const requestIds: string[] = [];

beforeAll(async () => {
  gw = await startGatewayOverFakes({
    product: {
      createProduct: ({ name, description }, { metadata }) => {
        requestIds.push(String(metadata.get('x-request-id')[0] ?? ''));
        if (!name.trim()) throw AppError.invalid('name', 'name must not be empty');
        return stored({ name: name.trim(), description, email_on_purchase: true });
      },
      getProduct: ({ id }) => {
        if (id !== known) throw AppError.notFound('product');
        return stored({ email_on_purchase: true });
      },
      listProducts: ({ page }) =>
        page?.starting_after
          ? { data: [stored({ id: newId('prod') })], page: { has_more: false, next_cursor: '' } }
          : { data: [stored()], page: { has_more: true, next_cursor: known } },
    },
  });
});

afterAll(async () => {
  await gw?.stop();
});

it('creates a product: 201 with its Location, the policy spelled out with its defaults, and reads it back', async () => {
  const created = await gw.request('POST', '/api/v1/products', {
    name: '  Photo Editor Pro ',
    description: 'Desktop app',
  });
  expect(created.status).toBe(201);
  expect(created.body).toEqual({
    id: known,
    name: 'Photo Editor Pro',
    description: 'Desktop app',
    policy: DEFAULT_POLICY_JSON,
    price: null,
    email_on_purchase: true,
    created_at: CREATED_AT,
    archived_at: null,
  });
  expect(created.headers.get('location')).toBe(`/api/v1/products/${known}`);
  expect(gw.peers.product.requestsTo('createProduct').at(-1)).toMatchObject({ account_id: gw.account });
  const read = await gw.request('GET', `/api/v1/products/${known}`);
  expect(read.status).toBe(200);
  expect(read.body).toEqual(created.body);
});

it("passes the caller's request id to the service and answers with it", async () => {
  const res = await fetch(`${gw.url}/api/v1/products`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json', 'x-request-id': 'trace-1' },
    body: JSON.stringify({ name: 'Evented' }),
  });
  expect(res.status).toBe(201);
  expect(res.headers.get('x-request-id')).toBe('trace-1');
  expect(requestIds.at(-1)).toBe('trace-1');
});

it('lists in cursor pages: has_more and next_cursor, then null on the last page', async () => {
  const first = await gw.request('GET', '/api/v1/products?limit=2');
  expect(first.status).toBe(200);
  expect(first.body).toEqual({ data: [expect.objectContaining({ id: known })], has_more: true, next_cursor: known });
  expect(gw.peers.product.requestsTo('listProducts').at(-1)).toEqual({
    account_id: gw.account,
    page: { limit: 2, starting_after: '' },
  });
  const last = await gw.request('GET', `/api/v1/products?limit=2&starting_after=${known}`);
  expect(last.body).toEqual({ data: [expect.any(Object)], has_more: false, next_cursor: null });
});

it.each([['0'], ['1000'], ['-1'], ['abc'], ['1.5']])(
  'refuses limit=%s with 400, before the service is asked',
  async (limit) => {
    const asked = gw.peers.product.requestsTo('listProducts').length;
    const res = await gw.request('GET', `/api/v1/products?limit=${limit}`);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({
      status: 400,
      code: 'invalid_request',
      errors: [{ field: 'limit', message: expect.any(String) }],
    });
    expect(gw.peers.product.requestsTo('listProducts')).toHaveLength(asked);
  },
);

it('refuses a malformed cursor and unknown query parameters, naming them', async () => {
  expect((await gw.request('GET', '/api/v1/products?starting_after=nope')).body).toMatchObject({
    code: 'invalid_request',
    errors: [{ field: 'starting_after' }],
  });
  expect((await gw.request('GET', '/api/v1/products?sort=name')).body).toMatchObject({
    code: 'invalid_request',
    errors: [{ field: 'sort' }],
  });
});

it('answers 400 for a malformed product id and 404 (problem JSON) for one the service does not know', async () => {
  expect((await gw.request('GET', '/api/v1/products/xyz')).status).toBe(400);
  const missing = await gw.request('GET', `/api/v1/products/${newId('prod')}`);
  expect(missing.status).toBe(404);
  expect(missing.body).toMatchObject({ code: 'not_found', detail: 'product not found' });
});

it('refuses a bad body naming the field: the shape before the service, its own rules from the service', async () => {
  const asked = gw.peers.product.requestsTo('createProduct').length;
  for (const [body, field] of [
    [{}, 'name'],
    [{ name: 42 }, 'name'],
    [{ name: 'x'.repeat(201) }, 'name'],
    [{ name: 'ok', description: 'd'.repeat(2001) }, 'description'],
    [{ name: 'ok', color: 'red' }, 'color'],
  ] as const) {
    const res = await gw.request('POST', '/api/v1/products', body);
    expect({ body, status: res.status }).toEqual({ body, status: 400 });
    expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
  }
  expect(gw.peers.product.requestsTo('createProduct')).toHaveLength(asked);
  const blank = await gw.request('POST', '/api/v1/products', { name: '   ' });
  expect(blank.status).toBe(400);
  expect(blank.body.errors).toEqual([expect.objectContaining({ field: 'name' })]);
});
