import { randomBytes } from 'node:crypto';
import type { License, Product } from '@licensing/proto';
import { Redis } from 'ioredis';
import { client } from '../../../test/support/stack';
import { eventually } from '../../../test/support/eventually';
import {
  addKey,
  appLicenseHandlers,
  credentialAccountHandlers,
  licenceEvents,
  type FakeAccount,
} from './fake-credential-answers';
import { productHandlers } from './fake-service-answers';
import { startGatewayWithFakeServices, type GatewayWithFakeServices } from './gateway-with-fake-services';
import { type Api, accountsIn, burst, clearCounters, counterIn, type Limits } from './rate-limit-kit';

// The gateway's rate limits with production windows (60 s and 3600 s) and quotas, counted in real
// Redis: the plans' hourly quotas and the per-key minute, the app allowance of validate-scope keys and
// licence credentials, and requests naming nothing that is there. The account service that says which
// plan and overrides an account has is faked (fake-credential-answers.ts: an operator's change is a
// change of its answer, which a cached key sees within a second), and so are the product and licence
// services the requests reach. Several gateways, in-memory shares and Redis away:
// rate-limit-sharing.test.ts. What the account service accepts as an override:
// services/account/test/component/limit-overrides.test.ts.

const accounts: FakeAccount[] = [];
const products: Product[] = [];
const licences: License[] = [];
let events: Awaited<ReturnType<typeof licenceEvents>>;
let h: GatewayWithFakeServices;
let redis: Redis;

beforeAll(async () => {
  h = await startGatewayWithFakeServices({
    handlers: {
      account: credentialAccountHandlers(accounts),
      product: productHandlers(products),
      license: appLicenseHandlers(licences, (type, l) => events.publish(type, l)),
    },
  });
  events = await licenceEvents(h.topology);
  redis = new Redis(h.topology.redisUrl);
});

afterAll(async () => {
  await clearCounters(redis, h.topology.rateLimitPrefix);
  redis.disconnect();
  await events?.close();
  await h?.stop();
});

const accountWith = accountsIn(accounts, () => h.url);

/** An operator's change of the account: from now on the account service answers with it. */
const update = (a: { acct: FakeAccount }, limits: Limits) => Object.assign(a.acct.account, limits);

const counter = counterIn(
  () => redis,
  () => h.topology.rateLimitPrefix,
);

describe('per-plan hourly quota and per-key minute limit', () => {
  it('free plan: the 101st request within the hour gets 429 with headers and Retry-After; the minute window keeps no count of it', async () => {
    const a = accountWith('free', { per_minute_limit: 1000 });
    const { statuses, last } = await burst(a.api, 100);
    expect(statuses.every((s) => s === 200)).toBe(true);
    expect(last.headers.get('ratelimit-policy')).toBe('"hour";q=100;w=3600, "minute";q=1000;w=60');
    expect(last.headers.get('ratelimit')).toMatch(/^"hour";r=0;t=\d+$/);
    expect(last.headers.get('x-ratelimit-remaining')).toBe('0');

    const refused = await a.api('GET', '/api/v1/products');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(refused.body).toMatchObject({
      status: 429,
      code: 'rate_limited',
      detail: expect.stringMatching(/hourly quota of 100 requests for this account \(free plan\)/),
    });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(3500);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(refused.headers.get('x-ratelimit-limit')).toBe('100');
    const reset = Number(refused.headers.get('x-ratelimit-reset'));
    expect(reset - Math.floor(Date.now() / 1000)).toBeGreaterThan(3500);
    // The refused request was given back to the minute window.
    expect(await counter('minute', a.keyId)).toBe(100);
  });

  it('pro and enterprise hourly budgets read back from RateLimit-Policy', async () => {
    const pro = accountWith('pro');
    expect((await pro.api('GET', '/api/v1/products')).headers.get('ratelimit-policy')).toBe(
      '"hour";q=1000;w=3600, "minute";q=100;w=60',
    );
    const ent = accountWith('enterprise');
    const res = await ent.api('GET', '/api/v1/products');
    expect(res.headers.get('ratelimit-policy')).toBe('"hour";q=10000;w=3600, "minute";q=100;w=60');
    expect(res.headers.get('ratelimit')).toBe('"minute";r=99;t=60');
  });

  it('the per-minute limit of 100 trips before the pro hour budget, and the hour keeps no count of the refused request', async () => {
    const pro = accountWith('pro');
    const { statuses } = await burst(pro.api, 100);
    expect(statuses.every((s) => s === 200)).toBe(true);
    const refused = await pro.api('GET', '/api/v1/products');
    expect(refused.status).toBe(429);
    expect(refused.body.detail).toMatch(/per-minute limit of 100 requests for this API key/);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(refused.headers.get('ratelimit')).toMatch(/^"minute";r=0;t=\d+$/);
    expect(await counter('hour', pro.accountId)).toBe(100);
    // Another key of the same account has its own minute.
    expect((await client(h.url, addKey(pro.acct, 'full'))('GET', '/api/v1/products')).status).toBe(200);
  });

  it('counts requests that end in 4xx', async () => {
    const a = accountWith('pro');
    await a.api('GET', '/api/v1/products/not-an-id');
    await a.api('GET', '/api/v1/no-such-thing');
    const res = await a.api('GET', '/api/v1/products');
    expect(res.headers.get('ratelimit')).toBe('"minute";r=97;t=60');
  });

  it('an operator override raises both windows, and a plan change applies within seconds on a cached key', async () => {
    const a = accountWith('free');
    expect((await a.api('GET', '/api/v1/products')).headers.get('ratelimit-policy')).toBe(
      '"hour";q=100;w=3600, "minute";q=100;w=60',
    );
    update(a, { per_minute_limit: 150, per_hour_limit: 200 });
    await eventually(
      async () =>
        expect((await a.api('GET', '/api/v1/products')).headers.get('ratelimit-policy')).toBe(
          '"hour";q=200;w=3600, "minute";q=150;w=60',
        ),
      { intervalMs: 50 },
    );
    const used = await counter('minute', a.keyId);
    const { statuses } = await burst(a.api, 150 - used);
    expect(statuses.every((s) => s === 200)).toBe(true);
    const refused = await a.api('GET', '/api/v1/products');
    expect(refused.status).toBe(429);
    expect(refused.body.detail).toMatch(/per-minute limit of 150/);

    update(a, { plan: 'enterprise', per_hour_limit: 0 });
    await eventually(
      async () => {
        const fresh = client(h.url, addKey(a.acct, 'full'));
        expect((await fresh('GET', '/api/v1/products')).headers.get('ratelimit-policy')).toBe(
          '"hour";q=10000;w=3600, "minute";q=150;w=60',
        );
      },
      { intervalMs: 50 },
    );
  });
});

describe('app traffic (validate-scope keys) has a budget of its own', () => {
  /** Two licences of a new product of the account (three requests of its full key). */
  const twoLicenses = async (api: Api): Promise<string[]> => {
    const product = (await api('POST', '/api/v1/products', { name: 'App' })).body.id;
    const keys: string[] = [];
    for (let i = 0; i < 2; i++)
      keys.push(
        (await api('POST', '/api/v1/licenses', { product_id: product, customer_email: 'buyer@example.com' })).body
          .license_key,
      );
    return keys;
  };
  // The two licences in turn: each spends its own licence minute (60), 50 each here.
  const validate = (api: Api, keys: string[], i = 0) =>
    api('GET', `/api/v1/licenses/validate?license_key=${keys[i % 2]}`);

  it('free plan: 100 validations with a validate key leave the full key its whole hourly quota', async () => {
    const a = accountWith('free');
    const keys = await twoLicenses(a.api);
    const app = client(h.url, addKey(a.acct, 'validate'));
    const statuses: number[] = [];
    let last: Awaited<ReturnType<Api>> | undefined;
    for (let i = 0; i < 100; i++) {
      last = await validate(app, keys, i);
      statuses.push(last.status);
    }
    expect(statuses.every((s) => s === 200)).toBe(true);
    // The app's headers describe the app allowance (ten times the free quota), not the account's quota,
    // the minute of the licence the request names and the validate key's own minute (100 on free).
    expect(last!.headers.get('ratelimit-policy')).toBe(
      '"app_hour";q=1000;w=3600, "license_minute";q=60;w=60, "app_minute";q=100;w=60',
    );
    expect(last!.headers.get('ratelimit')).toMatch(/^"app_minute";r=0;t=\d+$/);
    expect(await counter('hour', a.accountId)).toBe(3);

    const created = await a.api('POST', '/api/v1/products', { name: 'Still mine' });
    expect(created.status).toBe(201);
    expect(created.headers.get('ratelimit-policy')).toBe('"hour";q=100;w=3600, "minute";q=100;w=60');
    expect(created.headers.get('x-ratelimit-remaining')).toBe('96');
  });

  it('the app allowance runs out on its own, with a 429 that names it, while the full key goes on', async () => {
    // A raised hour of 10 makes the app allowance 100: small enough to run out here.
    const a = accountWith('free', { per_minute_limit: 1000, per_hour_limit: 10 });
    const keys = await twoLicenses(a.api);
    const app = client(h.url, addKey(a.acct, 'validate'));
    for (let i = 0; i < 100; i++) expect((await validate(app, keys, i)).status).toBe(200);
    const refused = await validate(app, keys);
    expect(refused.status).toBe(429);
    expect(refused.body.detail).toMatch(
      /hourly allowance of 100 app requests \(validate-scope keys and licence credentials\) for this account \(free plan\)/,
    );
    expect(refused.headers.get('ratelimit')).toMatch(/^"app_hour";r=0;t=\d+$/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(3500);
    expect((await a.api('GET', '/api/v1/products')).status).toBe(200);
    expect(await counter('hour', a.accountId)).toBe(4);
  });

  it("GET /api/v1/status shows the plan, the hourly quota, the app allowance, the per-key minute and the plan's mail quota", async () => {
    const free = accountWith('free');
    expect((await free.api('GET', '/api/v1/status')).body.rate_limits).toEqual({
      plan: 'free',
      hourly_quota: 100,
      hourly_app_allowance: 1000,
      per_key_per_minute: 100,
      per_license_per_minute: 60,
      mail_per_hour: 50,
      mail_per_day: 200,
      per_validate_key_per_minute: 100,
      heartbeats_per_activation_per_minute: 10,
      unknown_per_credential_address_per_minute: 30,
    });
    const raised = accountWith('pro', { per_minute_limit: 500, per_hour_limit: 5000 });
    const app = client(h.url, addKey(raised.acct, 'validate'));
    expect((await app('GET', '/api/v1/status')).body.rate_limits).toEqual({
      plan: 'pro',
      hourly_quota: 5000,
      hourly_app_allowance: 50_000,
      per_key_per_minute: 500,
      per_license_per_minute: 60,
      mail_per_hour: 1000,
      mail_per_day: 10_000,
      per_validate_key_per_minute: 2500,
      heartbeats_per_activation_per_minute: 10,
      unknown_per_credential_address_per_minute: 30,
    });
  });
});

describe('requests naming nothing that is there never spend the app allowance', () => {
  const appHour = async (accountId: string) =>
    Number(await redis.get(`${h.topology.rateLimitPrefix}:app_hour:${accountId}`));
  const asLicense = (key: string) => (method: string, path: string) =>
    client(h.url)(method, path, undefined, { authorization: `License ${key}` });

  /** A free account whose app allowance is 100 (a raised hour of 10), with a product. */
  async function smallAllowance() {
    const a = accountWith('free', { per_minute_limit: 1000, per_hour_limit: 10 });
    const product = (await a.api('POST', '/api/v1/products', { name: 'App' })).body.id;
    const issue = async () =>
      (await a.api('POST', '/api/v1/licenses', { product_id: product, customer_email: 'buyer@example.com' })).body
        .license_key as string;
    return { ...a, issue };
  }

  it('a validate key naming a random key app_hour times: its address is refused after a few, and another licence still validates', async () => {
    const a = await smallAllowance();
    const good = await a.issue();
    const app = client(h.url, addKey(a.acct, 'validate'));
    const answers: Record<string, number> = {};
    for (let i = 0; i < 100; i++) {
      const random = randomBytes(15).toString('hex');
      const r = await app('GET', `/api/v1/licenses/validate?license_key=${random}`);
      const label = r.status === 200 ? r.body.code : `${r.status} ${r.headers.get('ratelimit')?.split(';')[0]}`;
      answers[label] = (answers[label] ?? 0) + 1;
    }
    // Each answered not_found until the credential's unknown_minute from this address ran out; then 429.
    expect(Object.keys(answers).sort()).toEqual(['429 "unknown_minute"', 'not_found']);
    expect(answers.not_found).toBeGreaterThanOrEqual(30);
    // What the unknown keys counted on the allowance was given back.
    await eventually(async () => expect(await appHour(a.accountId)).toBe(0));
    const ok = await asLicense(good)('GET', `/api/v1/licenses/validate?license_key=${good}`);
    expect(ok.status).toBe(200);
    expect(ok.body.valid).toBe(true);
  });

  it("two revoked licences' credentials looping app_hour times never spend the allowance: another licence still validates", async () => {
    const a = await smallAllowance();
    const good = await a.issue();
    const revoked = [await a.issue(), await a.issue()];
    for (const key of revoked) expect((await a.api('POST', `/api/v1/licenses/${key}/revoke`)).status).toBe(200);
    const statuses: Record<number, number> = {};
    for (let i = 0; i < 100; i++) {
      const key = revoked[i % 2];
      const r = await asLicense(key)('GET', `/api/v1/licenses/validate?license_key=${key}`);
      statuses[r.status] = (statuses[r.status] ?? 0) + 1;
      if (r.status === 200) expect(r.body.code).toBe('revoked');
      else expect(r.body.detail).toMatch(/naming unknown or revoked licences/);
    }
    // 30 a minute each, from this address.
    expect(statuses).toEqual({ 200: 60, 429: 40 });
    expect(await appHour(a.accountId)).toBe(0);
    const ok = await asLicense(good)('GET', `/api/v1/licenses/validate?license_key=${good}`);
    expect(ok.status).toBe(200);
    expect(ok.body.valid).toBe(true);
  });

  it('a validate key spends a minute of its own whatever licence it names', async () => {
    // A minute of 20 and an app allowance of 100: the key's own minute is the larger, 20.
    const a = accountWith('free', { per_minute_limit: 20, per_hour_limit: 10 });
    const app = client(h.url, addKey(a.acct, 'validate'));
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) statuses.push((await app('GET', '/api/v1/status')).status);
    expect(statuses.every((s) => s === 200)).toBe(true);
    // A licence it never named before buys no fresh minute.
    const refused = await app('GET', `/api/v1/licenses/validate?license_key=${randomBytes(15).toString('hex')}`);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('ratelimit')).toMatch(/^"app_minute";r=0;t=\d+$/);
    expect(refused.body.detail).toMatch(/per-minute limit of 20 requests for this app credential/);
  });
});
