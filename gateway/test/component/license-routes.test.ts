import type { Product } from '@licensing/proto';
import { newId } from '@licensing/runtime';
import { fakeLicence, fakeProduct, fakeVendor, productHandlers } from './fake-service-answers';
import { fakeLicenceService } from './fake-licence-service';
import { type GatewayOverFakes, startGatewayOverFakes } from './gateway-over-fakes';
import { DEFAULT_POLICY_JSON } from './rest-shapes';

// The REST face of a licence's life: products with their policy spelled out, licences read, changed,
// suspended, reinstated, revoked, activated and validated through /api/v1, over product and licence
// services faked with what they answer (proto/rules' policy and lifecycle tables, the licence
// service's refusals in its words). The gateway refuses the shapes it cannot pass on before a
// service is asked (400 naming the field), maps the services' refusals to 404 / 409 problem JSON, and
// shows a validate-scope key no e-mail the service withheld. What the licence service itself decides:
// services/license/test/component/license-lifecycle.test.ts.

let gw: GatewayOverFakes;
const products: Product[] = [];
const licenceService = fakeLicenceService(products);

beforeAll(async () => {
  gw = await startGatewayOverFakes({
    product: productHandlers(products),
    license: licenceService.handlers,
  });
});

afterAll(async () => {
  await gw?.stop();
});

const api = (method: string, path: string, body?: unknown) => gw.request(method, path, body);

async function product(policy?: Record<string, unknown>) {
  const res = await api('POST', '/api/v1/products', { name: 'Policy product', ...(policy ? { policy } : {}) });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

async function license(productId: string, email = 'buyer@example.com') {
  const res = await api('POST', '/api/v1/licenses', { product_id: productId, customer_email: email });
  expect(res.status).toBe(201);
  return res.body.license_key as string;
}

const validate = (key: string, extra: Record<string, string> = {}) =>
  api('POST', '/api/v1/keys/validate', { key, ...extra });
/** What the licence service was asked last by this method. */
const lastAsked = (method: Parameters<GatewayOverFakes['peers']['license']['requestsTo']>[0]) =>
  gw.peers.license.requestsTo(method).at(-1);

describe('licence policy on the product', () => {
  it('is set at creation, shown, and editable; licences keep the policy they were issued under', async () => {
    const id = await product({ duration_days: 30, max_activations: 3, grace_days: 7, require_activation: true });
    const read = await api('GET', `/api/v1/products/${id}`);
    expect(read.body.policy).toEqual({
      ...DEFAULT_POLICY_JSON,
      duration_days: 30,
      max_activations: 3,
      grace_days: 7,
      require_activation: true,
    });
    const key = await license(id);
    const patched = await api('PATCH', `/api/v1/products/${id}`, { policy: { duration_days: 365 } });
    expect(patched.status).toBe(200);
    expect(patched.body.policy).toEqual({ ...DEFAULT_POLICY_JSON, duration_days: 365 });
    expect((await api('GET', `/api/v1/licenses/${key}`)).body.policy.duration_days).toBe(30);
    expect(
      (await api('GET', '/api/v1/products')).body.data.find((p: { id: string }) => p.id === id).policy.duration_days,
    ).toBe(365);
  });

  it.each([
    [{ duration_days: 0 }, 'policy.duration_days'],
    [{ duration_days: -5 }, 'policy.duration_days'],
    [{ duration_days: 1.5 }, 'policy.duration_days'],
    [{ duration_days: '30' }, 'policy.duration_days'],
    [{ max_activations: 0 }, 'policy.max_activations'],
    [{ grace_days: 3 }, 'policy.grace_days'],
    [{ require_activation: 'yes' }, 'policy.require_activation'],
    [{ seats: 3 }, 'policy.seats'],
  ])('refuses policy %p (400, field %s)', async (policy, field) => {
    const res = await api('POST', '/api/v1/products', { name: 'Bad', policy });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
  });
});

describe('states and transitions', () => {
  it('suspend, reinstate, revoke: each changes validation and publishes its event', async () => {
    const key = await license(await product());
    const suspended = await api('POST', `/api/v1/licenses/${key}/suspend`);
    expect([suspended.status, suspended.body.status]).toEqual([200, 'suspended']);
    expect(lastAsked('transitionLicense')).toEqual({ account_id: gw.account, key, action: 'suspend' });
    // This gateway's next validation already sees the change (its cache forgets the key).
    expect((await validate(key)).body).toMatchObject({
      valid: false,
      code: 'suspended',
      next_action: 'contact_vendor',
      status: 'suspended',
    });
    expect((await api('POST', `/api/v1/licenses/${key}/reinstate`)).body.status).toBe('active');
    expect((await validate(key)).body).toMatchObject({ valid: true, code: 'valid', next_action: 'none' });
    expect((await api('POST', `/api/v1/licenses/${key}/revoke`)).body.status).toBe('revoked');
    expect((await validate(key)).body).toMatchObject({ valid: false, code: 'revoked' });
  });

  it('a transition that is not allowed is 409 conflict with a clear detail, and changes nothing', async () => {
    const key = await license(await product());
    await api('POST', `/api/v1/licenses/${key}/revoke`);
    const res = await api('POST', `/api/v1/licenses/${key}/reinstate`);
    expect(res.status).toBe(409);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({
      code: 'conflict',
      detail: 'a revoked licence cannot be reinstated: revocation is final',
    });
    expect((await api('POST', `/api/v1/licenses/${key}/suspend`)).status).toBe(409);
    expect((await api('POST', `/api/v1/licenses/${key}/renew`)).status).toBe(409);
    expect((await api('GET', `/api/v1/licenses/${key}`)).body.status).toBe('revoked');
    const fresh = await license(await product());
    expect((await api('POST', `/api/v1/licenses/${fresh}/reinstate`)).body.detail).toBe('the licence is not suspended');
    expect((await api('POST', `/api/v1/licenses/${fresh}/renew`)).body.detail).toMatch(/perpetual/);
    const asked = gw.peers.license.requestsTo('transitionLicense').length;
    expect((await api('POST', `/api/v1/licenses/${fresh}/suspend`, { reason: 'x' })).status).toBe(400);
    expect(gw.peers.license.requestsTo('transitionLicense')).toHaveLength(asked);
  });

  it('PATCH changes the customer e-mail and metadata; bad input is 400', async () => {
    const key = await license(await product());
    const res = await api('PATCH', `/api/v1/licenses/${key}`, {
      customer_email: 'new@example.com',
      metadata: { order: 'A-1', seats: '3' },
    });
    expect(res.body).toMatchObject({ customer_email: 'new@example.com', metadata: { order: 'A-1', seats: '3' } });
    expect((await api('PATCH', `/api/v1/licenses/${key}`, { metadata: { seats: '' } })).body.metadata).toEqual({
      order: 'A-1',
    });
    expect((await api('PATCH', `/api/v1/licenses/${key}`, { customer_email: 'nope' })).status).toBe(400);
    const asked = gw.peers.license.requestsTo('updateLicense').length;
    expect((await api('PATCH', `/api/v1/licenses/${key}`, { metadata: { n: 5 } })).status).toBe(400);
    expect((await api('PATCH', `/api/v1/licenses/${key}`, { metadata: { 'bad key!': 'x' } })).status).toBe(400);
    // A dotted key would be a path in the stored document (FerretDB refuses the write): 400 naming it, never 500.
    for (const bad of ['a.b', '$set', '.']) {
      const refused = await api('PATCH', `/api/v1/licenses/${key}`, { metadata: { [bad]: 'x' } });
      expect([refused.status, refused.body.errors]).toEqual([
        400,
        [{ field: `metadata.${bad}`, message: expect.stringContaining('no "." or "$"') }],
      ]);
    }
    expect((await api('PATCH', `/api/v1/licenses/${key}`, { status: 'revoked' })).status).toBe(400);
    expect(gw.peers.license.requestsTo('updateLicense')).toHaveLength(asked); // refused before the service
    expect((await api('GET', `/api/v1/licenses/${key}`)).body.metadata).toEqual({ order: 'A-1' });
    expect((await api('PATCH', `/api/v1/licenses/${key}`, {})).status).toBe(400);
  });
});

describe('activations', () => {
  it('re-activating a fingerprint returns the same activation (200); deactivating frees a slot', async () => {
    const key = await license(await product({ max_activations: 1, require_activation: true }));
    expect((await validate(key)).body).toMatchObject({ code: 'not_activated', next_action: 'activate' });
    const first = await api('POST', `/api/v1/licenses/${key}/activations`, {
      fingerprint: 'laptop',
      name: 'Ada’s laptop',
    });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      id: expect.stringMatching(/^act_/),
      fingerprint: 'laptop',
      name: 'Ada’s laptop',
      created_at: expect.any(String),
      lease_expires_at: null,
    });
    const again = await api('POST', `/api/v1/licenses/${key}/activations`, { fingerprint: 'laptop' });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(first.body.id);
    expect((await validate(key, { fingerprint: 'laptop' })).body).toMatchObject({ valid: true, code: 'valid' });
    expect((await api('GET', `/api/v1/licenses/validate?license_key=${key}&fingerprint=laptop`)).body.code).toBe(
      'valid',
    );
    expect((await api('POST', `/api/v1/licenses/${key}/activations`, { fingerprint: 'desktop' })).status).toBe(409);
    expect((await api('DELETE', `/api/v1/licenses/${key}/activations/${first.body.id}`)).status).toBe(204);
    expect((await api('DELETE', `/api/v1/licenses/${key}/activations/${first.body.id}`)).status).toBe(404);
    expect((await validate(key, { fingerprint: 'laptop' })).body.code).toBe('not_activated');
    expect((await api('POST', `/api/v1/licenses/${key}/activations`, { fingerprint: 'desktop' })).status).toBe(201);
  });

  it('refuses bad activation input and activating a suspended licence', async () => {
    const key = await license(await product());
    const asked = gw.peers.license.requestsTo('activate').length;
    expect((await api('POST', `/api/v1/licenses/${key}/activations`, {})).status).toBe(400);
    expect((await api('POST', `/api/v1/licenses/${key}/activations`, { fingerprint: 'x'.repeat(201) })).status).toBe(
      400,
    );
    expect((await api('POST', `/api/v1/licenses/${key}/activations`, { fingerprint: 'ok', extra: 1 })).status).toBe(
      400,
    );
    expect(gw.peers.license.requestsTo('activate')).toHaveLength(asked);
    await api('POST', `/api/v1/licenses/${key}/suspend`);
    const res = await api('POST', `/api/v1/licenses/${key}/activations`, { fingerprint: 'ok' });
    expect(res.status).toBe(409);
    expect(res.body.detail).toBe('the licence is suspended: it cannot be activated');
  });
});

describe('who sees what', () => {
  it('a validate key sees customer_email only when the product allows it', async () => {
    const hidden = await license(await product(), 'private@example.com');
    const shown = await license(await product({ validate_keys_see_email: true }), 'shared@example.com');
    const app = (method: string, path: string, body?: unknown) => gw.request(method, path, body, gw.validateKey);
    expect((await app('POST', '/api/v1/keys/validate', { key: hidden })).body.license.customer_email).toBeNull();
    expect((await app('GET', `/api/v1/licenses/validate?license_key=${hidden}`)).body.customer_email).toBeNull();
    expect((await app('POST', '/api/v1/keys/validate', { key: shown })).body.license.customer_email).toBe(
      'shared@example.com',
    );
    expect((await validate(hidden)).body.license.customer_email).toBe('private@example.com'); // full keys see it
  });

  it('another account gets 404 on every licence endpoint', async () => {
    // Another vendor's product and licence in the services' stores: every call for them by this account is not_found.
    const stranger = fakeVendor();
    const theirProduct = fakeProduct(stranger, 'Theirs');
    const theirs = fakeLicence(stranger, theirProduct.id, 'x@example.com');
    products.push(theirProduct);
    licenceService.licences.push(theirs);
    const key = theirs.key;
    const calls: [string, string, unknown?][] = [
      ['GET', `/api/v1/licenses/${key}`],
      ['PATCH', `/api/v1/licenses/${key}`, { customer_email: 'x@example.com' }],
      ['POST', `/api/v1/licenses/${key}/suspend`],
      ['POST', `/api/v1/licenses/${key}/reinstate`],
      ['POST', `/api/v1/licenses/${key}/revoke`],
      ['POST', `/api/v1/licenses/${key}/renew`],
      ['GET', `/api/v1/licenses/${key}/activations`],
      ['POST', `/api/v1/licenses/${key}/activations`, { fingerprint: 'evil' }],
      ['DELETE', `/api/v1/licenses/${key}/activations/${newId('act')}`],
      ['PATCH', `/api/v1/products/${theirProduct.id}`, { name: 'hijacked' }],
      ['GET', `/api/v1/products/${theirProduct.id}`],
    ];
    for (const [method, path, body] of calls)
      expect({ method, path, status: (await api(method, path, body)).status }).toEqual({ method, path, status: 404 });
    expect([theirs.status, theirProduct.name]).toEqual(['active', 'Theirs']);
  });

  it('lists by status and refuses an unknown status', async () => {
    const id = await product();
    const a = await license(id);
    const b = await license(id);
    await api('POST', `/api/v1/licenses/${b}/suspend`);
    const suspended = (await api('GET', `/api/v1/licenses?status=suspended&product_id=${id}`)).body.data.map(
      (l: { key: string }) => l.key,
    );
    expect(suspended).toEqual([b]);
    expect(lastAsked('listLicenses')).toMatchObject({ account_id: gw.account, product_id: id, status: 'suspended' });
    expect(
      (await api('GET', `/api/v1/licenses?status=active&product_id=${id}`)).body.data.map(
        (l: { key: string }) => l.key,
      ),
    ).toEqual([a]);
    expect((await api('GET', '/api/v1/licenses?status=paused')).status).toBe(400);
  });
});
