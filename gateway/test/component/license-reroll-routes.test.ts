import type { Product } from '@licensing/proto';
import { eventually } from '../../../test/support/eventually';
import { cacheHits } from '../../../test/support/metrics';
import { client, TestClock } from '../../../test/support/stack';
import { productHandlers } from './fake-service-answers';
import { fakeLicenceService } from './fake-licence-service';
import { type GatewayOverFakes, startGatewayOverFakes } from './gateway-over-fakes';

// POST /api/v1/licenses/{key}/reroll at the gateway, over a licence service faked with what it answers
// (fake-licence-service.ts): 200 with the licence under its new key, 400 naming grace_hours, 404 and
// 409 problems; and the validation caches through the grace: the old key answers update_key from this
// gateway's memory, then not_found when the grace ends (no event, no new ask), and a second gateway
// that remembers the old key hears of the reroll, and of a later revocation naming only the new key,
// by the events the licence service publishes (published here on the stack's stream as it would). What
// the licence service itself decides: services/license/test/component/license-reroll.test.ts.

const HOUR = 3_600_000;
const clock = new TestClock();
const products: Product[] = [];
const licences = fakeLicenceService(products, clock);
let gw: GatewayOverFakes;
let product: string;

beforeAll(async () => {
  gw = await startGatewayOverFakes({ product: productHandlers(products), license: licences.handlers }, { clock });
  product = (
    await gw.request('POST', '/api/v1/products', {
      name: 'Rerolled',
      policy: { duration_days: 365, max_activations: 3, entitlements: ['pdf'] },
    })
  ).body.id;
});

afterAll(async () => {
  await gw?.stop();
});

type Api = ReturnType<typeof client>;
const api: Api = (method, path, body) => gw.request(method, path, body);
const issue = async () =>
  (await api('POST', '/api/v1/licenses', { product_id: product, customer_email: 'reroll@example.com' })).body
    .license_key as string;
const validate = async (key: string, via: Api = api) =>
  (await via('GET', `/api/v1/licenses/validate?license_key=${key}`)).body as Record<string, unknown>;
const validateKey = async (key: string, via: Api = api) =>
  (await via('POST', '/api/v1/keys/validate', { key })).body as Record<string, any>;
const licenceOf = (key: string) => licences.licences.find((l) => l.key === key)!;

it('gives a new key and keeps the id, activations, entitlements, metadata and expiry; the old key validates with update_key until the grace ends, from the caches', async () => {
  const oldKey = await issue();
  await api('PATCH', `/api/v1/licenses/${oldKey}`, { metadata: { order: '42' } });
  expect((await api('POST', `/api/v1/licenses/${oldKey}/activations`, { fingerprint: 'machine-1' })).status).toBe(201);
  const before = (await api('GET', `/api/v1/licenses/${oldKey}`)).body;

  const res = await api('POST', `/api/v1/licenses/${oldKey}/reroll`, { grace_hours: 2 });
  expect(res.status).toBe(200);
  expect(gw.peers.license.requestsTo('rerollLicense').at(-1)).toEqual({
    account_id: gw.account,
    key: oldKey,
    grace_hours: 2,
    send_email: false,
  });
  const after = res.body;
  const newKey = after.key as string;
  expect(newKey).not.toBe(oldKey);
  expect(after).toMatchObject({ id: before.id, expires_at: before.expires_at, metadata: { order: '42' } });
  expect((await api('GET', `/api/v1/licenses/${newKey}`)).body.activations).toBe(1);
  // The old key works only for validating: every other route knows the licence by its new key alone.
  expect((await api('GET', `/api/v1/licenses/${oldKey}`)).status).toBe(404);

  const newAnswer = await validate(newKey);
  expect(newAnswer).toMatchObject({ valid: true, code: 'valid', next_action: 'none' });
  const hits = await cacheHits(gw.metricsUrl);
  for (let i = 0; i < 2; i++) {
    const old = await validateKey(oldKey);
    expect(old).toMatchObject({ valid: true, code: 'valid', next_action: 'update_key' });
    // The holder of the old key is never shown the new one.
    expect(JSON.stringify(old)).not.toContain(newKey);
    expect(old.license.key).toBe(oldKey);
  }
  // The second answer came from the gateway's memory.
  expect(await cacheHits(gw.metricsUrl)).toBeGreaterThan(hits);
  expect(await validate(oldKey)).toMatchObject({ valid: true, next_action: 'update_key' });

  // After the grace: not found, answered from the cache entry that said valid a moment ago (no event, no new ask).
  const asks = () =>
    gw.peers.license.requestsTo('validateLicenses').length + gw.peers.license.requestsTo('validateLicense').length;
  const asked = asks();
  clock.advance(2 * HOUR + 1000);
  const hitsBefore = await cacheHits(gw.metricsUrl);
  expect(await validate(oldKey)).toMatchObject({ valid: false, code: 'not_found' });
  expect(await cacheHits(gw.metricsUrl)).toBeGreaterThan(hitsBefore);
  expect(asks()).toBe(asked);
  expect(await validateKey(oldKey)).toMatchObject({ valid: false, code: 'not_found', license: null });
  expect(await validate(newKey)).toMatchObject({ valid: true, code: 'valid' });
});

it('a gateway that cached the old key sees the reroll through its event, and a later revocation of the licence too', async () => {
  const oldKey = await issue();
  const other = await gw.extraGateway();
  const otherApi = client(other.url, gw.key);
  const otherHits = () => cacheHits(other.metricsUrl);
  // The other gateway remembers the key as valid (its second answer is a cache hit). A gateway just
  // started serves from its cache only once it follows the licence events (until then every validation
  // asks the service): on a busy machine that takes a moment, so the hit is waited for.
  await eventually(async () => {
    expect(await validate(oldKey, otherApi)).toMatchObject({ valid: true, next_action: 'none' });
    const hits = await otherHits();
    expect(await validate(oldKey, otherApi)).toMatchObject({ valid: true, next_action: 'none' });
    expect(await otherHits()).toBeGreaterThan(hits);
  });
  // The reroll goes through the first gateway: the other hears of it by event alone.
  const { key: newKey } = (await api('POST', `/api/v1/licenses/${oldKey}/reroll`, { grace_hours: 24 })).body;
  const valid_until = new Date(clock.now().getTime() + 24 * HOUR).toISOString();
  await gw.publish(
    licences.licenceEvent('license.rerolled', licenceOf(newKey), {
      previous_key: oldKey,
      previous_key_valid_until: valid_until,
    }),
  );
  await eventually(
    async () => expect(await validate(oldKey, otherApi)).toMatchObject({ valid: true, next_action: 'update_key' }),
    { timeoutMs: 2000, intervalMs: 50 },
  );
  // ... and answers the old key from its memory again.
  const hits2 = await otherHits();
  expect(await validate(oldKey, otherApi)).toMatchObject({ valid: true, next_action: 'update_key' });
  expect(await otherHits()).toBeGreaterThan(hits2);
  // A revocation names only the new key (the old among previous_keys), yet the old key's answers follow the licence, on both gateways.
  expect((await api('POST', `/api/v1/licenses/${newKey}/revoke`)).status).toBe(200);
  await gw.publish(licences.licenceEvent('license.revoked', licenceOf(newKey)));
  await eventually(
    async () => expect(await validate(oldKey, otherApi)).toMatchObject({ valid: false, code: 'revoked' }),
    { timeoutMs: 2000, intervalMs: 50 },
  );
  expect(await validate(oldKey)).toMatchObject({ valid: false, code: 'revoked' });
  expect(await validate(newKey, otherApi)).toMatchObject({ valid: false, code: 'revoked' });
});

it('grace_hours 0: the old key is not found at once, and the new key is mailed when asked', async () => {
  const oldKey = await issue();
  expect(await validate(oldKey)).toMatchObject({ valid: true });
  const res = await api('POST', `/api/v1/licenses/${oldKey}/reroll`, { grace_hours: 0, send_email: true });
  expect(res.status).toBe(200);
  expect(gw.peers.license.requestsTo('rerollLicense').at(-1)).toMatchObject({ grace_hours: 0, send_email: true });
  const newKey = res.body.key as string;
  // This gateway forgets both keys on its own reroll: no event needed.
  expect(await validate(oldKey)).toMatchObject({ valid: false, code: 'not_found' });
  expect(await validate(newKey)).toMatchObject({ valid: true, code: 'valid' });
  // A retry with the old key (its answer lost) answers the licence with its new key.
  const again = await api('POST', `/api/v1/licenses/${oldKey}/reroll`, { grace_hours: 0, send_email: true });
  expect(again.status).toBe(200);
  expect(again.body.key).toBe(newKey);
});

it('refuses a revoked licence, a grace out of range and an unknown key, changing nothing', async () => {
  const key = await issue();
  const asked = gw.peers.license.requestsTo('rerollLicense').length;
  for (const grace_hours of [721, -1, 1.5, '2', null]) {
    const res = await api('POST', `/api/v1/licenses/${key}/reroll`, { grace_hours });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].field).toBe('grace_hours');
  }
  expect((await api('POST', `/api/v1/licenses/${key}/reroll`, { grace: 1 })).status).toBe(400);
  expect(gw.peers.license.requestsTo('rerollLicense')).toHaveLength(asked); // refused before the service
  expect((await api('GET', `/api/v1/licenses/${key}`)).body.key).toBe(key);
  await api('POST', `/api/v1/licenses/${key}/revoke`);
  const revoked = await api('POST', `/api/v1/licenses/${key}/reroll`, { grace_hours: 1 });
  expect(revoked.status).toBe(409);
  expect(revoked.body.code).toBe('conflict');
  expect((await api('GET', `/api/v1/licenses/${key}`)).body.key).toBe(key);
  expect((await api('POST', '/api/v1/licenses/7K3QF-9XW2M-T0RBH-PZ4DN-C8E1V-AAAAA/reroll', {})).status).toBe(404);
});
