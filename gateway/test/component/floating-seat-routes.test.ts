import type { Product } from '@licensing/proto';
import { eventually } from '../../../test/support/eventually';
import { cacheHits } from '../../../test/support/metrics';
import { TestClock } from '../../../test/support/stack';
import { productHandlers } from './fake-service-answers';
import { fakeLicenceService } from './fake-licence-service';
import { type GatewayOverFakes, startGatewayOverFakes } from './gateway-over-fakes';

// Floating seats (policy lease_seconds) at the gateway, over product and licence services faked with
// what they answer (fake-licence-service.ts, on the test's clock): the policy's range refused naming
// the field, leases shown and renewed by a heartbeat (200), a lapse judged at answer time from the
// gateway's cache (which never trusts a copy whose lease has run out: a heartbeat sends no event, so
// it asks again), and the heartbeat's refusals as 404 / 409 problems. What the licence service decides
// (leases, reclaiming, the sweep): services/license/test/component/floating-seats.test.ts.

const clock = new TestClock();
const products: Product[] = [];
const licences = fakeLicenceService(products, clock);
let gw: GatewayOverFakes;
let api: GatewayOverFakes['request'];

beforeAll(async () => {
  gw = await startGatewayOverFakes({ product: productHandlers(products), license: licences.handlers }, { clock });
  api = gw.request;
});

afterAll(async () => {
  await gw?.stop();
});

async function licenseWith(policy: Record<string, unknown>): Promise<string> {
  const product = await api('POST', '/api/v1/products', { name: 'Floating', policy });
  expect(product.status).toBe(201);
  const license = await api('POST', '/api/v1/licenses', {
    product_id: product.body.id,
    customer_email: 'f@example.com',
  });
  return license.body.license_key as string;
}

const activate = (key: string, fingerprint: string) =>
  api('POST', `/api/v1/licenses/${key}/activations`, { fingerprint });
const heartbeat = (key: string, id: string) => api('POST', `/api/v1/licenses/${key}/activations/${id}/heartbeat`);
const validate = (key: string, fingerprint: string) => api('POST', '/api/v1/keys/validate', { key, fingerprint });
const asks = () =>
  gw.peers.license.requestsTo('validateLicenses').length + gw.peers.license.requestsTo('validateLicense').length;

describe('policy.lease_seconds', () => {
  it.each([29, 86_401, 0, 1.5, 'sixty'])(
    '%p is refused with 400 naming the field, on create and on update',
    async (bad) => {
      const created = await api('POST', '/api/v1/products', { name: 'Bad lease', policy: { lease_seconds: bad } });
      expect(created.status).toBe(400);
      expect(JSON.stringify(created.body)).toContain('lease_seconds');
      const product = (await api('POST', '/api/v1/products', { name: 'Good' })).body.id;
      const updated = await api('PATCH', `/api/v1/products/${product}`, { policy: { lease_seconds: bad } });
      expect(updated.status).toBe(400);
      expect(JSON.stringify(updated.body)).toContain('lease_seconds');
    },
  );

  it('30 and 86,400 are floating, null (the default) node-locked', async () => {
    for (const lease of [30, 86_400, null]) {
      const res = await api('POST', '/api/v1/products', { name: 'Lease', policy: { lease_seconds: lease } });
      expect(res.status).toBe(201);
      expect(res.body.policy.lease_seconds).toBe(lease);
    }
    expect((await api('POST', '/api/v1/products', { name: 'Default' })).body.policy.lease_seconds).toBeNull();
  });
});

describe('a floating seat', () => {
  it('takes a lease, a heartbeat renews it, and a node-locked activation has none', async () => {
    const key = await licenseWith({ lease_seconds: 30, max_activations: 2 });
    const before = clock.now().getTime();
    const first = await activate(key, 'float-a');
    expect(first.status).toBe(201);
    const lease = Date.parse(first.body.lease_expires_at);
    expect(lease).toBeGreaterThanOrEqual(before + 30_000);
    expect(lease).toBeLessThanOrEqual(clock.now().getTime() + 30_000);
    clock.advance(20_000);
    const beat = await heartbeat(key, first.body.id);
    expect(beat.status).toBe(200);
    expect(beat.body.id).toBe(first.body.id);
    expect(Date.parse(beat.body.lease_expires_at)).toBeGreaterThanOrEqual(lease + 20_000);
    const nodeLocked = await licenseWith({ max_activations: 2 });
    expect((await activate(nodeLocked, 'fixed-a')).body.lease_expires_at).toBeNull();
  });

  it('lapses: validation answers lease_expired from the gateway cache and the service, heartbeat 409, re-activation renews', async () => {
    const key = await licenseWith({ lease_seconds: 30, max_activations: 2, require_activation: true });
    const act = (await activate(key, 'lapse-a')).body;
    await eventually(async () => expect((await validate(key, 'lapse-a')).body.code).toBe('valid'));
    const hits = await cacheHits(gw.metricsUrl);
    const valid = (await validate(key, 'lapse-a')).body; // from the gateway's memory
    expect(await cacheHits(gw.metricsUrl)).toBeGreaterThan(hits);
    expect(Date.parse(valid.cache_until)).toBeLessThanOrEqual(Date.parse(act.lease_expires_at));
    clock.advance(31_000);
    for (let i = 0; i < 2; i++) {
      const answer = await validate(key, 'lapse-a');
      expect(answer.body).toMatchObject({ valid: false, code: 'lease_expired', next_action: 'activate' });
    }
    const refused = await heartbeat(key, act.id);
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(/^lease_expired/);
    // Idempotent as ever: the same activation, a fresh lease.
    const again = await activate(key, 'lapse-a');
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(act.id);
    expect(Date.parse(again.body.lease_expires_at)).toBeGreaterThan(clock.now().getTime());
    expect((await validate(key, 'lapse-a')).body.code).toBe('valid');
  });

  it("a heartbeat needs no event: a cache's copy of the old lease is not trusted once it has run out", async () => {
    const key = await licenseWith({ lease_seconds: 30, require_activation: true });
    const act = (await activate(key, 'renewed-a')).body;
    await eventually(async () => expect((await validate(key, 'renewed-a')).body.code).toBe('valid'));
    expect((await validate(key, 'renewed-a')).body.code).toBe('valid'); // the cache now holds the first lease
    clock.advance(20_000);
    expect((await heartbeat(key, act.id)).status).toBe(200);
    clock.advance(20_000); // past the first lease, within the renewed one
    const asked = asks();
    expect((await validate(key, 'renewed-a')).body.code).toBe('valid');
    expect(asks()).toBeGreaterThan(asked); // its copy said lapsed: the licence service was asked
    expect((await validate(key, 'renewed-a')).body.code).toBe('valid');
  });
});

describe('heartbeat refusals', () => {
  it("another licence's activation and an unknown one are 404; node-locked and deactivated ones 409", async () => {
    const key = await licenseWith({ lease_seconds: 60 });
    const other = await licenseWith({ lease_seconds: 60 });
    const theirs = (await activate(other, 'theirs')).body;
    const wrong = await heartbeat(key, theirs.id);
    expect(wrong.status).toBe(404);
    expect(wrong.body.code).toBe('not_found');
    expect(gw.peers.license.requestsTo('heartbeat').at(-1)).toEqual({
      account_id: gw.account,
      key,
      activation_id: theirs.id,
    });
    expect((await heartbeat(key, 'act_01JD8Z3K6Q2W4E5R6T7Y8V9X0P')).status).toBe(404);
    expect((await heartbeat(key, 'not-an-id')).status).toBe(404);

    const fixed = await licenseWith({ max_activations: 2 });
    const pinned = (await activate(fixed, 'pinned')).body;
    const locked = await heartbeat(fixed, pinned.id);
    expect(locked.status).toBe(409);
    expect(locked.body.code).toBe('conflict');
    expect(locked.body.detail).toMatch(/no lease/);
  });
});
