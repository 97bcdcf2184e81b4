import { client } from '../support/stack';
import { useStackWithAccount } from '../support/fixture';
import { ALPHABET } from '@licensing/proto';

const f = useStackWithAccount();
let productId: string;

beforeAll(async () => {
  productId = (await f.api('POST', '/api/v1/products', { name: 'CAD Suite' })).body.id;
});

const KEY_SHAPE = /^[0-9A-HJKMNP-TV-Z]{5}(-[0-9A-HJKMNP-TV-Z]{5}){5}$/;

/** The same key with one character replaced by another valid one. */
function mistype(key: string): string {
  const i = 7; // inside the second group
  const replacement = ALPHABET[(ALPHABET.indexOf(key[i]) + 1) % 32];
  return key.slice(0, i) + replacement + key.slice(i + 1);
}

async function newLicense(email = 'buyer@example.com') {
  const res = await f.api('POST', '/api/v1/licenses', { product_id: productId, customer_email: email });
  expect(res.status).toBe(201);
  return res.body.license_key as string;
}

describe('issuing licences', () => {
  it('creates a licence: 201 {success, license_key, license}', async () => {
    const res = await f.api('POST', '/api/v1/licenses', { product_id: productId, customer_email: 'ada@example.com' });
    expect(res.status).toBe(201);
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
        policy: {
          duration_days: null,
          max_activations: null,
          grace_days: 0,
          require_activation: false,
          validate_keys_see_email: false,
          refund_action: 'revoke',
          lease_seconds: null,
          entitlements: [],
          customer_deactivations_per_30_days: 3,
          payment_grace_days: 7,
          max_file_ttl_days: 30,
        },
        activations: 0,
        metadata: {},
        entitlements: [],
        extra_entitlements: [],
        created_at: expect.any(String),
        last_validated_at: null,
        subscription: null,
      },
    });
    const read = await f.api('GET', `/api/v1/licenses/${res.body.license_key}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(res.body.license);
  });

  it('publishes license.created on NATS with the documented envelope', async () => {
    const key = await newLicense('events@example.com');
    const event = await f.events.waitFor(
      (e) => e.type === 'license.created' && (e.data as { license: { key: string } }).license.key === key,
    );
    expect(event).toMatchObject({
      id: expect.stringMatching(/^evt_/),
      type: 'license.created',
      account_id: f.accountId,
      created_at: expect.any(String),
    });
    expect(event.data).toEqual({
      license: {
        id: expect.any(String),
        key,
        product_id: productId,
        customer_email: 'events@example.com',
        status: 'active',
        expires_at: null,
        created_at: expect.any(String),
        entitlements: [],
      },
    });
    expect(f.events.subjectOf(event.id)).toBe(`${f.stack.topology.subjectPrefix}.license.created`);
  });

  it('lists licences newest first, filtered by product, with pagination', async () => {
    const fresh = await f.stack.newAccount();
    const own = client(f.stack.url, fresh.apiKey);
    const p1 = (await own('POST', '/api/v1/products', { name: 'One' })).body.id;
    const p2 = (await own('POST', '/api/v1/products', { name: 'Two' })).body.id;
    const k1 = (await own('POST', '/api/v1/licenses', { product_id: p1, customer_email: 'a@example.com' })).body
      .license_key;
    const k2 = (await own('POST', '/api/v1/licenses', { product_id: p2, customer_email: 'b@example.com' })).body
      .license_key;
    const k3 = (await own('POST', '/api/v1/licenses', { product_id: p1, customer_email: 'c@example.com' })).body
      .license_key;
    const all = await own('GET', '/api/v1/licenses');
    expect(all.body.data.map((l: { key: string }) => l.key)).toEqual([k3, k2, k1]);
    const filtered = await own('GET', `/api/v1/licenses?product_id=${p1}&limit=1`);
    expect(filtered.body).toMatchObject({ data: [{ key: k3 }], has_more: true });
    const next = await own(
      'GET',
      `/api/v1/licenses?product_id=${p1}&limit=1&starting_after=${filtered.body.next_cursor}`,
    );
    expect(next.body).toMatchObject({ data: [{ key: k1 }], has_more: false, next_cursor: null });
    expect((await own('GET', '/api/v1/licenses?product_id=bad')).status).toBe(400);
  });

  it('refuses bad input with problem+json and writes nothing', async () => {
    const fresh = await f.stack.newAccount();
    const own = client(f.stack.url, fresh.apiKey);
    const product = (await own('POST', '/api/v1/products', { name: 'Empty' })).body.id;
    const cases: [unknown, number, string, string | undefined][] = [
      [{ customer_email: 'a@example.com' }, 400, 'invalid_request', 'product_id'],
      [{ product_id: product }, 400, 'invalid_request', 'customer_email'],
      [{ product_id: product, customer_email: 12 }, 400, 'invalid_request', 'customer_email'],
      [{ product_id: [product], customer_email: 'a@example.com' }, 400, 'invalid_request', 'product_id'],
      [{ product_id: product, customer_email: 'not-an-email' }, 400, 'invalid_request', 'customer_email'],
      [{ product_id: product, customer_email: 'a@b' }, 400, 'invalid_request', 'customer_email'],
      [{ product_id: product, customer_email: 'a b@example.com' }, 400, 'invalid_request', 'customer_email'],
      [{ product_id: product, customer_email: 'a@example.com', seats: 3 }, 400, 'invalid_request', 'seats'],
      [{ product_id: 'prod_123', customer_email: 'a@example.com' }, 400, 'invalid_request', 'product_id'],
      [{ product_id: 'prod_01M82BCFGS21FWB5Z5A498AR3N', customer_email: 'a@example.com' }, 404, 'not_found', undefined],
      [{ product_id: productId, customer_email: 'a@example.com' }, 404, 'not_found', undefined], // another account's product
      [[1, 2], 400, 'invalid_request', undefined],
      ['"just a string"', 400, 'invalid_request', undefined],
    ];
    for (const [body, status, code, field] of cases) {
      const res = await own('POST', '/api/v1/licenses', body);
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
    expect((await own('GET', '/api/v1/licenses')).body.data).toEqual([]);
  });

  it('the same Idempotency-Key twice yields one licence; with another body, 422', async () => {
    const fresh = await f.stack.newAccount();
    const own = client(f.stack.url, fresh.apiKey);
    const product = (await own('POST', '/api/v1/products', { name: 'Idem' })).body.id;
    const body = { product_id: product, customer_email: 'idem@example.com' };
    const headers = { 'idempotency-key': 'order-4711' };
    const first = await own('POST', '/api/v1/licenses', body, headers);
    const again = await own('POST', '/api/v1/licenses', body, headers);
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    const other = await own('POST', '/api/v1/licenses', { ...body, customer_email: 'other@example.com' }, headers);
    expect(other.status).toBe(422);
    expect(other.body.code).toBe('idempotency_key_reused');
    expect((await own('GET', '/api/v1/licenses')).body.data).toHaveLength(1);
    // Keys are per account: another account may use the same key for its own request.
    const second = await f.stack.newAccount();
    const theirs = client(f.stack.url, second.apiKey);
    const theirProduct = (await theirs('POST', '/api/v1/products', { name: 'Theirs' })).body.id;
    expect(
      (await theirs('POST', '/api/v1/licenses', { product_id: theirProduct, customer_email: 'x@example.com' }, headers))
        .status,
    ).toBe(201);
    expect((await own('POST', '/api/v1/licenses', body, { 'idempotency-key': 'bad key with spaces' })).status).toBe(
      400,
    );
  });

  it('concurrent requests with one Idempotency-Key create one licence (the others get it or 409)', async () => {
    const fresh = await f.stack.newAccount();
    const own = client(f.stack.url, fresh.apiKey);
    const product = (await own('POST', '/api/v1/products', { name: 'Race' })).body.id;
    const body = { product_id: product, customer_email: 'race@example.com' };
    const results = await Promise.all(
      Array.from({ length: 8 }, () => own('POST', '/api/v1/licenses', body, { 'idempotency-key': 'race-1' })),
    );
    for (const r of results) expect([201, 409]).toContain(r.status);
    const keys = new Set(results.filter((r) => r.status === 201).map((r) => r.body.license_key));
    expect(keys.size).toBe(1);
    expect((await own('GET', '/api/v1/licenses')).body.data).toHaveLength(1);
  });
});

describe('validating licences', () => {
  it('GET /licenses/validate answers valid with product and customer', async () => {
    const key = await newLicense('val@example.com');
    const res = await f.api('GET', `/api/v1/licenses/validate?license_key=${key}`);
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
    const ok = await f.api('POST', '/api/v1/keys/validate', { key, product_id: productId });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ valid: true, code: 'valid', license: { key, product_id: productId } });
    const otherProduct = (await f.api('POST', '/api/v1/products', { name: 'Other' })).body.id;
    const mismatch = await f.api('POST', '/api/v1/keys/validate', { key, product_id: otherProduct });
    expect(mismatch.body).toMatchObject({ valid: false, code: 'product_mismatch' });
    expect((await f.api('POST', '/api/v1/keys/validate', { key })).body).toMatchObject({ valid: true, code: 'valid' });
  });

  it('/v1/keys/validate and /api/v1/keys/validate answer identically', async () => {
    const key = await newLicense();
    // cache_until is relative to the moment of each answer; everything else is the same.
    const same = (body: Record<string, unknown>) => ({ ...body, cache_until: typeof body.cache_until });
    const a = await f.api('POST', '/api/v1/keys/validate', { key, product_id: productId });
    const b = await f.api('POST', '/v1/keys/validate', { key, product_id: productId });
    expect(b.status).toBe(a.status);
    expect(same(b.body)).toEqual(same(a.body));
    const c = await f.api('GET', `/v1/licenses/validate?license_key=${key}`);
    expect(same(c.body)).toEqual(same((await f.api('GET', `/api/v1/licenses/validate?license_key=${key}`)).body));
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
      const res = await f.api('POST', '/api/v1/keys/validate', { key: v });
      expect({ v, code: res.body.code }).toEqual({ v, code: 'valid' });
    }
  });

  it('rejects a key with one character changed by its checksum', async () => {
    const key = await newLicense();
    const res = await f.api('POST', '/api/v1/keys/validate', { key: mistype(key) });
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
    const key = await newLicense();
    const other = await f.stack.newAccount();
    const theirs = client(f.stack.url, other.apiKey);
    const res = await theirs('GET', `/api/v1/licenses/validate?license_key=${key}`);
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
    expect((await theirs('POST', '/api/v1/keys/validate', { key })).body).toMatchObject({
      valid: false,
      code: 'not_found',
      license: null,
    });
    expect((await theirs('GET', `/api/v1/licenses/${key}`)).status).toBe(404);
    expect((await f.api('POST', '/api/v1/keys/validate', { key: 'NOT-A-KEY' })).body).toMatchObject({
      valid: false,
      code: 'not_found',
    });
  });

  it('refuses malformed validation requests with 400', async () => {
    expect((await f.api('GET', '/api/v1/licenses/validate')).status).toBe(400);
    expect((await f.api('GET', '/api/v1/licenses/validate?license_key=')).status).toBe(400);
    expect((await f.api('GET', '/api/v1/licenses/validate?license_key=a&license_key=b')).status).toBe(400);
    expect((await f.api('GET', `/api/v1/licenses/validate?license_key=${'A'.repeat(65)}`)).status).toBe(400);
    expect((await f.api('POST', '/api/v1/keys/validate', {})).body).toMatchObject({
      code: 'invalid_request',
      errors: [{ field: 'key' }],
    });
    expect((await f.api('POST', '/api/v1/keys/validate', { key: 5 })).body).toMatchObject({
      code: 'invalid_request',
      errors: [{ field: 'key' }],
    });
    expect((await f.api('POST', '/api/v1/keys/validate', { key: 'X', product_id: 'nope' })).body).toMatchObject({
      code: 'invalid_request',
      errors: [{ field: 'product_id' }],
    });
    expect((await f.api('POST', '/api/v1/keys/validate', { key: 'X', extra: true })).body).toMatchObject({
      code: 'invalid_request',
      errors: [{ field: 'extra' }],
    });
  });

  it('a validate-scope key may validate but not issue licences (403, nothing written)', async () => {
    const fresh = await f.stack.newAccount();
    const own = client(f.stack.url, fresh.apiKey);
    const product = (await own('POST', '/api/v1/products', { name: 'Scoped' })).body.id;
    const key = (await own('POST', '/api/v1/licenses', { product_id: product, customer_email: 's@example.com' })).body
      .license_key;
    const scoped = await f.stack.admin.createApiKey({ account_id: fresh.accountId, scope: 'validate', name: 'in-app' });
    expect(scoped.secret).toMatch(/^lk_val_/);
    const app = client(f.stack.url, scoped.secret);
    expect((await app('POST', '/api/v1/keys/validate', { key })).body.code).toBe('valid');
    expect((await app('GET', `/api/v1/licenses/validate?license_key=${key}`)).body.code).toBe('valid');
    expect((await app('GET', '/api/v1/status')).status).toBe(200);
    const denied = await app('POST', '/api/v1/licenses', { product_id: product, customer_email: 'x@example.com' });
    expect(denied.status).toBe(403);
    expect(denied.body.code).toBe('forbidden');
    expect((await app('GET', '/api/v1/products')).status).toBe(403);
    expect((await own('GET', '/api/v1/licenses')).body.data).toHaveLength(1);
  });
});
