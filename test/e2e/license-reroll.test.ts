import { EventLog } from '../support/events';
import { eventually } from '../support/eventually';
import { cacheHits } from '../support/metrics';
import { client, startStack, TestClock, type Stack } from '../support/stack';

// POST /api/v1/licenses/{key}/reroll through the running system: the licence gets a new key and keeps
// everything else; the old key validates (next_action update_key) until its grace ends and is not_found
// after, answered from the gateways' caches, which follow the events (a second gateway included).

const clock = new TestClock();
let stack: Stack;
let events: EventLog;
let api: ReturnType<typeof client>;
let apiKey: string;
let product: string;
const HOUR = 3_600_000;

beforeAll(async () => {
  stack = await startStack({}, {}, clock);
  events = await EventLog.open(stack.topology.natsUrl, stack.topology.stream);
  const acct = await stack.newAccount();
  apiKey = acct.apiKey;
  api = client(stack.url, apiKey);
  product = (
    await api('POST', '/api/v1/products', {
      name: 'Rerolled',
      policy: { duration_days: 365, max_activations: 3, entitlements: ['pdf'] },
    })
  ).body.id;
});

afterAll(async () => {
  await events?.close();
  await stack?.stop();
});

type Api = ReturnType<typeof client>;
const issue = async () =>
  (await api('POST', '/api/v1/licenses', { product_id: product, customer_email: 'reroll@example.com' })).body
    .license_key as string;
const validate = async (key: string, via: Api = api) =>
  (await via('GET', `/api/v1/licenses/validate?license_key=${key}`)).body as Record<string, unknown>;
const validateKey = async (key: string, via: Api = api) =>
  (await via('POST', '/api/v1/keys/validate', { key })).body as Record<string, any>;

it('gives a new key and keeps the id, activations, entitlements, metadata and expiry; the old key validates with update_key until the grace ends, from the caches', async () => {
  const oldKey = await issue();
  await api('PATCH', `/api/v1/licenses/${oldKey}`, { metadata: { order: '42' }, entitlements: ['extra'] });
  expect((await api('POST', `/api/v1/licenses/${oldKey}/activations`, { fingerprint: 'machine-1' })).status).toBe(201);
  const before = (await api('GET', `/api/v1/licenses/${oldKey}`)).body;

  const res = await api('POST', `/api/v1/licenses/${oldKey}/reroll`, { grace_hours: 2 });
  expect(res.status).toBe(200);
  const after = res.body;
  const newKey = after.key as string;
  expect(newKey).not.toBe(oldKey);
  expect(after.id).toBe(before.id);
  expect(after.expires_at).toBe(before.expires_at);
  expect(after.metadata).toEqual({ order: '42' });
  expect(after.entitlements).toEqual(before.entitlements);
  expect(after.extra_entitlements).toEqual(['extra']);
  expect((await api('GET', `/api/v1/licenses/${newKey}`)).body.activations).toBe(1);
  // The old key works only for validating: every other route knows the licence by its new key alone.
  expect((await api('GET', `/api/v1/licenses/${oldKey}`)).status).toBe(404);

  const rerolled = await events.waitFor(
    (e) => e.type === 'license.rerolled' && (e.data as any).license.id === before.id,
  );
  expect(rerolled.data).toMatchObject({ previous_key: oldKey, license: { key: newKey } });
  expect((rerolled.data as any).previous_key_valid_until).toBe(
    new Date(Date.parse(rerolled.created_at) + 2 * HOUR).toISOString(),
  );

  const newAnswer = await validate(newKey);
  expect(newAnswer).toMatchObject({ valid: true, code: 'valid', next_action: 'none' });
  const hits = await cacheHits(stack.metricsUrls.gateway);
  for (let i = 0; i < 2; i++) {
    const old = await validateKey(oldKey);
    expect(old).toMatchObject({ valid: true, code: 'valid', next_action: 'update_key' });
    // The holder of the old key is never shown the new one.
    expect(JSON.stringify(old)).not.toContain(newKey);
    expect(old.license.key).toBe(oldKey);
  }
  // The second answer came from the gateway's memory.
  expect(await cacheHits(stack.metricsUrls.gateway)).toBeGreaterThan(hits);
  expect(await validate(oldKey)).toMatchObject({ valid: true, next_action: 'update_key' });

  // After the grace: not found, answered from the cache entry that said valid a moment ago (no event, no restart).
  clock.advance(2 * HOUR + 1000);
  const hitsBefore = await cacheHits(stack.metricsUrls.gateway);
  expect(await validate(oldKey)).toMatchObject({ valid: false, code: 'not_found' });
  expect(await cacheHits(stack.metricsUrls.gateway)).toBeGreaterThan(hitsBefore);
  expect(await validateKey(oldKey)).toMatchObject({ valid: false, code: 'not_found', license: null });
  expect(await validate(newKey)).toMatchObject({ valid: true, code: 'valid' });
});

it('a gateway that cached the old key sees the reroll through its event, and a later revocation of the licence too', async () => {
  const oldKey = await issue();
  const other = await stack.extraGateway();
  const otherApi = client(other.url, apiKey);
  const otherHits = () => cacheHits(other.metricsUrl);
  // The other gateway remembers the key as valid (its second answer is a cache hit).
  expect(await validate(oldKey, otherApi)).toMatchObject({ valid: true, next_action: 'none' });
  const hits = await otherHits();
  expect(await validate(oldKey, otherApi)).toMatchObject({ valid: true, next_action: 'none' });
  expect(await otherHits()).toBeGreaterThan(hits);
  // The reroll goes through the first gateway: the other hears of it by event alone.
  const { key: newKey } = (await api('POST', `/api/v1/licenses/${oldKey}/reroll`, { grace_hours: 24 })).body;
  await eventually(
    async () => expect(await validate(oldKey, otherApi)).toMatchObject({ valid: true, next_action: 'update_key' }),
    { timeoutMs: 2000, intervalMs: 50 },
  );
  // ... and answers the old key from its memory again.
  const hits2 = await otherHits();
  expect(await validate(oldKey, otherApi)).toMatchObject({ valid: true, next_action: 'update_key' });
  expect(await otherHits()).toBeGreaterThan(hits2);
  // A revocation names only the new key, yet the old key's answers follow the licence, on both gateways.
  expect((await api('POST', `/api/v1/licenses/${newKey}/revoke`)).status).toBe(200);
  await eventually(
    async () => expect(await validate(oldKey, otherApi)).toMatchObject({ valid: false, code: 'revoked' }),
    { timeoutMs: 2000, intervalMs: 50 },
  );
  expect(await validate(oldKey)).toMatchObject({ valid: false, code: 'revoked' });
  expect(await validate(newKey, otherApi)).toMatchObject({ valid: false, code: 'revoked' });
  await other.stop();
});

it('grace_hours 0: the old key is not found at once, and the new key is mailed when asked', async () => {
  const oldKey = await issue();
  expect(await validate(oldKey)).toMatchObject({ valid: true });
  const res = await api('POST', `/api/v1/licenses/${oldKey}/reroll`, { grace_hours: 0, send_email: true });
  expect(res.status).toBe(200);
  const newKey = res.body.key as string;
  expect(await validate(oldKey)).toMatchObject({ valid: false, code: 'not_found' });
  expect(await validate(newKey)).toMatchObject({ valid: true, code: 'valid' });
  // Queued by the notification service from license.rerolled (send_email on it), soon after the answer.
  const mails = await eventually(async () => {
    const got = ((await api('GET', '/api/v1/emails?limit=100')).body.data as any[]).filter(
      (e) => e.license_key === newKey,
    );
    expect(got).toHaveLength(1);
    return got;
  });
  expect(mails[0].to).toBe('reroll@example.com');
  // A retry with the old key (its answer lost) answers the licence with its new key, and mails nothing twice.
  const again = await api('POST', `/api/v1/licenses/${oldKey}/reroll`, { grace_hours: 0, send_email: true });
  expect(again.status).toBe(200);
  expect(again.body.key).toBe(newKey);
  expect(
    ((await api('GET', '/api/v1/emails?limit=100')).body.data as any[]).filter((e) => e.license_key === newKey),
  ).toHaveLength(1);
});

it('refuses a revoked licence, a grace out of range and an unknown key, changing nothing', async () => {
  const key = await issue();
  for (const grace_hours of [721, -1, 1.5, '2', null]) {
    const res = await api('POST', `/api/v1/licenses/${key}/reroll`, { grace_hours });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].field).toBe('grace_hours');
  }
  expect((await api('POST', `/api/v1/licenses/${key}/reroll`, { grace: 1 })).status).toBe(400);
  expect((await api('GET', `/api/v1/licenses/${key}`)).body.key).toBe(key);
  await api('POST', `/api/v1/licenses/${key}/revoke`);
  const revoked = await api('POST', `/api/v1/licenses/${key}/reroll`, { grace_hours: 1 });
  expect(revoked.status).toBe(409);
  expect(revoked.body.code).toBe('conflict');
  expect((await api('GET', `/api/v1/licenses/${key}`)).body.key).toBe(key);
  expect((await api('POST', '/api/v1/licenses/7K3QF-9XW2M-T0RBH-PZ4DN-C8E1V-AAAAA/reroll', {})).status).toBe(404);
});
