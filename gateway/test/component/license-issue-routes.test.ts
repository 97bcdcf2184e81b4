import type { Product } from '@licensing/proto';
import { ALPHABET } from '@licensing/proto';
import { fakeLicence, fakeProduct, fakeVendor, productHandlers } from './fake-service-answers';
import { fakeLicenceService } from './fake-licence-service';
import { type GatewayOverFakes, startGatewayOverFakes } from './gateway-over-fakes';
import { DEFAULT_POLICY_JSON } from './rest-shapes';

// The REST face of issuing, listing and validating licences: POST /api/v1/licenses (201 with the
// licence spelled out, Idempotency-Key passed to the licence service and its reuse answered 422),
// cursor pages, problem JSON for what the gateway refuses itself (the body's and the query's shapes,
// before any service is asked) and for what the services refuse (404, 400 naming the field), the
// validation answers of GET /licenses/validate and POST /keys/validate (with their /v1 aliases), and
// what a validate-scope key may do. The licence service is faked with what it answers
// (fake-licence-service.ts); what it decides itself: services/license/test/component/licenses.test.ts.

const KEY_SHAPE = /^[0-9A-HJKMNP-TV-Z]{5}(-[0-9A-HJKMNP-TV-Z]{5}){5}$/;
const products: Product[] = [];
const licences = fakeLicenceService(products);
let gw: GatewayOverFakes;
let api: GatewayOverFakes['request'];
let productId: string;

beforeAll(async () => {
  gw = await startGatewayOverFakes({ product: productHandlers(products), license: licences.handlers });
  api = gw.request;
  productId = (await api('POST', '/api/v1/products', { name: 'CAD Suite' })).body.id;
});

afterAll(async () => {
  await gw?.stop();
});

/** The same key with one character replaced by another valid one. */
function mistype(key: string): string {
  const i = 7; // inside the second group
  const replacement = ALPHABET[(ALPHABET.indexOf(key[i]) + 1) % 32];
  return key.slice(0, i) + replacement + key.slice(i + 1);
}

async function newLicense(email = 'buyer@example.com', product = productId) {
  const res = await api('POST', '/api/v1/licenses', { product_id: product, customer_email: email });
  expect(res.status).toBe(201);
  return res.body.license_key as string;
}

/** Another vendor's product and licence, in the services' stores. */
function strangers() {
  const stranger = fakeVendor();
  const product = fakeProduct(stranger, 'Theirs');
  const licence = fakeLicence(stranger, product.id, 'x@example.com');
  products.push(product);
  licences.licences.push(licence);
  return { product, licence };
}
const mineOnly = () => licences.licences.filter((l) => l.account_id === gw.account);

describe('issuing licences', () => {
  it('creates a licence: 201 {success, license_key, license}', async () => {
    const res = await api('POST', '/api/v1/licenses', { product_id: productId, customer_email: 'ada@example.com' });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`/api/v1/licenses/${res.body.license_key}`);
    expect(res.body).toEqual({
      success: true,
      license_key: expect.stringMatching(KEY_SHAPE),
      license: {
        id: expect.stringMatching(/^lic_/),
        key: res.body.license_key,
        product_id: productId,
        customer_email: 'ada@example.com',
        status: 'active',
        expires_at: null,
        policy: DEFAULT_POLICY_JSON,
        overrides: {},
        activations: 0,
        metadata: {},
        entitlements: [],
        extra_entitlements: [],
        created_at: expect.any(String),
        last_validated_at: null,
        subscription: null,
      },
    });
    expect(gw.peers.license.requestsTo('createLicense').at(-1)).toEqual({
      account_id: gw.account,
      product_id: productId,
      customer_email: 'ada@example.com',
      idempotency_key: '',
      send_email: false,
    });
    const read = await api('GET', `/api/v1/licenses/${res.body.license_key}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(res.body.license);
  });

  it('lists licences newest first, filtered by product, with pagination', async () => {
    const p1 = (await api('POST', '/api/v1/products', { name: 'One' })).body.id;
    const p2 = (await api('POST', '/api/v1/products', { name: 'Two' })).body.id;
    const k1 = await newLicense('a@example.com', p1);
    const k2 = await newLicense('b@example.com', p2);
    const k3 = await newLicense('c@example.com', p1);
    const all = await api('GET', '/api/v1/licenses');
    expect(all.body.data.map((l: { key: string }) => l.key).slice(0, 3)).toEqual([k3, k2, k1]);
    const filtered = await api('GET', `/api/v1/licenses?product_id=${p1}&limit=1`);
    expect(filtered.body).toMatchObject({ data: [{ key: k3 }], has_more: true });
    expect(gw.peers.license.requestsTo('listLicenses').at(-1)).toMatchObject({
      product_id: p1,
      page: { limit: 1, starting_after: '' },
    });
    const next = await api(
      'GET',
      `/api/v1/licenses?product_id=${p1}&limit=1&starting_after=${filtered.body.next_cursor}`,
    );
    expect(next.body).toMatchObject({ data: [{ key: k1 }], has_more: false, next_cursor: null });
    expect((await api('GET', '/api/v1/licenses?product_id=bad')).status).toBe(400);
  });

  it('refuses bad input with problem+json and writes nothing', async () => {
    const theirs = strangers();
    const before = mineOnly().length;
    const cases: [unknown, number, string, string | undefined][] = [
      [{ customer_email: 'a@example.com' }, 400, 'invalid_request', 'product_id'],
      [{ product_id: productId }, 400, 'invalid_request', 'customer_email'],
      [{ product_id: productId, customer_email: 12 }, 400, 'invalid_request', 'customer_email'],
      [{ product_id: [productId], customer_email: 'a@example.com' }, 400, 'invalid_request', 'product_id'],
      [{ product_id: productId, customer_email: 'not-an-email' }, 400, 'invalid_request', 'customer_email'],
      [{ product_id: productId, customer_email: 'a@b' }, 400, 'invalid_request', 'customer_email'],
      [{ product_id: productId, customer_email: 'a b@example.com' }, 400, 'invalid_request', 'customer_email'],
      [{ product_id: productId, customer_email: 'a@example.com', seats: 3 }, 400, 'invalid_request', 'seats'],
      [{ product_id: 'prod_123', customer_email: 'a@example.com' }, 400, 'invalid_request', 'product_id'],
      [{ product_id: 'prod_01M82BCFGS21FWB5Z5A498AR3N', customer_email: 'a@example.com' }, 404, 'not_found', undefined],
      [{ product_id: theirs.product.id, customer_email: 'a@example.com' }, 404, 'not_found', undefined], // another account's product
      [[1, 2], 400, 'invalid_request', undefined],
      ['"just a string"', 400, 'invalid_request', undefined],
    ];
    for (const [body, status, code, field] of cases) {
      const res = await api('POST', '/api/v1/licenses', body);
      expect({ body, status: res.status, code: res.body.code }).toEqual({ body, status, code });
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({
        type: expect.any(String),
        title: expect.any(String),
        status,
        detail: expect.any(String),
        request_id: expect.any(String),
      });
      if (field) expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
    }
    expect(mineOnly()).toHaveLength(before);
  });

  it('the same Idempotency-Key twice yields one licence; with another body, 422', async () => {
    const body = { product_id: productId, customer_email: 'idem@example.com' };
    const headers = { 'idempotency-key': 'order-4711' };
    const send = (b: unknown, h: Record<string, string> = headers) =>
      fetch(`${gw.url}/api/v1/licenses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json', ...h },
        body: JSON.stringify(b),
      }).then(async (r) => ({ status: r.status, body: await r.json() }));
    const before = mineOnly().length;
    const first = await send(body);
    const again = await send(body);
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(gw.peers.license.requestsTo('createLicense').at(-1)).toMatchObject({ idempotency_key: 'order-4711' });
    const other = await send({ ...body, customer_email: 'other@example.com' });
    expect(other.status).toBe(422);
    expect(other.body.code).toBe('idempotency_key_reused');
    expect(mineOnly()).toHaveLength(before + 1);
    const asked = gw.peers.license.requestsTo('createLicense').length;
    expect((await send(body, { 'idempotency-key': 'bad key with spaces' })).status).toBe(400);
    expect(gw.peers.license.requestsTo('createLicense')).toHaveLength(asked); // refused before the service
  });
});

describe('validating licences', () => {
  it('GET /licenses/validate answers valid with product and customer', async () => {
    const key = await newLicense('val@example.com');
    const res = await api('GET', `/api/v1/licenses/validate?license_key=${key}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      valid: true,
      code: 'valid',
      detail: expect.any(String),
      product_id: productId,
      customer_email: 'val@example.com',
      status: 'active',
      expires_at: null,
      entitlements: [],
      next_action: 'none',
      cache_until: expect.any(String),
      trial_end: null,
    });
    // A perpetual valid licence may be trusted offline for a day.
    expect(Date.parse(res.body.cache_until) - Date.now()).toBeGreaterThan(23 * 3600_000);
  });

  it('POST /keys/validate answers valid with the licence, and product_mismatch for another product', async () => {
    const key = await newLicense();
    const ok = await api('POST', '/api/v1/keys/validate', { key, product_id: productId });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ valid: true, code: 'valid', license: { key, product_id: productId } });
    const otherProduct = (await api('POST', '/api/v1/products', { name: 'Other' })).body.id;
    const mismatch = await api('POST', '/api/v1/keys/validate', { key, product_id: otherProduct });
    expect(mismatch.body).toMatchObject({ valid: false, code: 'product_mismatch' });
    expect((await api('POST', '/api/v1/keys/validate', { key })).body).toMatchObject({ valid: true, code: 'valid' });
  });

  it('/v1/keys/validate and /api/v1/keys/validate answer identically', async () => {
    const key = await newLicense();
    // cache_until is relative to the moment of each answer; everything else is the same.
    const same = (body: Record<string, unknown>) => ({ ...body, cache_until: typeof body.cache_until });
    const a = await api('POST', '/api/v1/keys/validate', { key, product_id: productId });
    const b = await api('POST', '/v1/keys/validate', { key, product_id: productId });
    expect(b.status).toBe(a.status);
    expect(same(b.body)).toEqual(same(a.body));
    const c = await api('GET', `/v1/licenses/validate?license_key=${key}`);
    expect(same(c.body)).toEqual(same((await api('GET', `/api/v1/licenses/validate?license_key=${key}`)).body));
  });

  it('ignores case, surrounding spaces, hyphens and Crockford aliases', async () => {
    const key = await newLicense();
    const variants = [
      key.toLowerCase(),
      `  ${key}  `,
      key.replace(/-/g, ''),
      key.replace(/0/g, 'O').replace(/1/g, 'l'),
    ];
    for (const v of variants) {
      const res = await api('POST', '/api/v1/keys/validate', { key: v });
      expect({ v, code: res.body.code }).toEqual({ v, code: 'valid' });
    }
  });

  it('rejects a key with one character changed by its checksum', async () => {
    const key = await newLicense();
    const res = await api('POST', '/api/v1/keys/validate', { key: mistype(key) });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      valid: false,
      code: 'not_found',
      detail: expect.stringContaining('typo'),
      status: null,
      expires_at: null,
      entitlements: [],
      next_action: 'contact_vendor',
      cache_until: expect.any(String),
      trial_end: null,
      license: null,
    });
  });

  it('answers not_found for unknown keys and for another account’s key', async () => {
    const key = strangers().licence.key;
    const res = await api('GET', `/api/v1/licenses/validate?license_key=${key}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      valid: false,
      code: 'not_found',
      detail: expect.any(String),
      product_id: null,
      customer_email: null,
      status: null,
      expires_at: null,
      entitlements: [],
      next_action: 'contact_vendor',
      cache_until: expect.any(String),
      trial_end: null,
    });
    expect((await api('POST', '/api/v1/keys/validate', { key })).body).toMatchObject({
      valid: false,
      code: 'not_found',
      license: null,
    });
    expect((await api('GET', `/api/v1/licenses/${key}`)).status).toBe(404);
    expect((await api('POST', '/api/v1/keys/validate', { key: 'NOT-A-KEY' })).body).toMatchObject({
      valid: false,
      code: 'not_found',
    });
  });

  it('refuses malformed validation requests with 400', async () => {
    expect((await api('GET', '/api/v1/licenses/validate')).status).toBe(400);
    expect((await api('GET', '/api/v1/licenses/validate?license_key=')).status).toBe(400);
    expect((await api('GET', '/api/v1/licenses/validate?license_key=a&license_key=b')).status).toBe(400);
    expect((await api('GET', `/api/v1/licenses/validate?license_key=${'A'.repeat(65)}`)).status).toBe(400);
    for (const [body, field] of [
      [{}, 'key'],
      [{ key: 5 }, 'key'],
      [{ key: 'X', product_id: 'nope' }, 'product_id'],
      [{ key: 'X', extra: true }, 'extra'],
    ] as const)
      expect((await api('POST', '/api/v1/keys/validate', body)).body).toMatchObject({
        code: 'invalid_request',
        errors: [{ field }],
      });
  });

  it('a validate-scope key may validate but not issue licences (403, nothing written)', async () => {
    const key = await newLicense('s@example.com');
    const app = (method: string, path: string, body?: unknown) => gw.request(method, path, body, gw.validateKey);
    expect((await app('POST', '/api/v1/keys/validate', { key })).body.code).toBe('valid');
    expect((await app('GET', `/api/v1/licenses/validate?license_key=${key}`)).body.code).toBe('valid');
    expect((await app('GET', '/api/v1/status')).status).toBe(200);
    const before = mineOnly().length;
    const asked = gw.peers.license.requestsTo('createLicense').length;
    const denied = await app('POST', '/api/v1/licenses', { product_id: productId, customer_email: 'x@example.com' });
    expect(denied.status).toBe(403);
    expect(denied.body.code).toBe('forbidden');
    expect((await app('GET', '/api/v1/products')).status).toBe(403);
    expect(gw.peers.license.requestsTo('createLicense')).toHaveLength(asked);
    expect(mineOnly()).toHaveLength(before);
  });
});
