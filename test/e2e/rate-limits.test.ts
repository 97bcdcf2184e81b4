import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { client, startStack, type Stack } from '../support/stack';
import { PrivateRedis } from '../support/redis-server';
import { freePort } from '../../scripts/lib/net';
import { eventually } from '../support/eventually';

// Production windows (60 s and 3600 s) and quotas; a hundred requests are
// quick, so no window needs shortening here.
let stack: Stack;
let redis: Redis;

beforeAll(async () => {
  stack = await startStack();
  redis = new Redis(stack.topology.redisUrl);
});

afterAll(async () => {
  const keys = await redis.keys(`${stack.topology.rateLimitPrefix}*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
  await stack?.stop();
});

type Api = ReturnType<typeof client>;

/** n sequential requests; returns the statuses and the last response. */
async function burst(api: Api, n: number) {
  const statuses: number[] = [];
  let last: Awaited<ReturnType<Api>> | undefined;
  for (let i = 0; i < n; i++) {
    last = await api('GET', '/api/v1/products');
    statuses.push(last.status);
  }
  return { statuses, last: last! };
}

async function accountWith(plan: string, limits: { per_minute_limit?: number; per_hour_limit?: number } = {}) {
  const acct = await stack.newAccount(plan);
  if (limits.per_minute_limit !== undefined || limits.per_hour_limit !== undefined)
    await stack.admin.updateAccount({ id: acct.accountId, ...limits });
  const keyId = (await stack.admin.listApiKeys({ account_id: acct.accountId, page: { limit: 1, starting_after: '' } }))
    .data[0].id;
  return { ...acct, keyId, api: client(stack.url, acct.apiKey) };
}

const counter = async (window: 'minute' | 'hour', id: string) =>
  Number(await redis.get(`${stack.topology.rateLimitPrefix}:${window}:${id}`));

describe('per-plan hourly quota and per-key minute limit', () => {
  it('free plan: the 101st request within the hour gets 429 with headers and Retry-After; the minute window keeps no count of it', async () => {
    const a = await accountWith('free', { per_minute_limit: 1000 });
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
    const pro = await accountWith('pro');
    expect((await pro.api('GET', '/api/v1/products')).headers.get('ratelimit-policy')).toBe(
      '"hour";q=1000;w=3600, "minute";q=100;w=60',
    );
    const ent = await accountWith('enterprise');
    const res = await ent.api('GET', '/api/v1/products');
    expect(res.headers.get('ratelimit-policy')).toBe('"hour";q=10000;w=3600, "minute";q=100;w=60');
    expect(res.headers.get('ratelimit')).toBe('"minute";r=99;t=60');
  });

  it('the per-minute limit of 100 trips before the pro hour budget, and the hour keeps no count of the refused request', async () => {
    const pro = await accountWith('pro');
    const { statuses } = await burst(pro.api, 100);
    expect(statuses.every((s) => s === 200)).toBe(true);
    const refused = await pro.api('GET', '/api/v1/products');
    expect(refused.status).toBe(429);
    expect(refused.body.detail).toMatch(/per-minute limit of 100 requests for this API key/);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(refused.headers.get('ratelimit')).toMatch(/^"minute";r=0;t=\d+$/);
    expect(await counter('hour', pro.accountId)).toBe(100);
    // Another key of the same account has its own minute.
    const other = await stack.admin.createApiKey({ account_id: pro.accountId, scope: 'full', name: 'second' });
    expect((await client(stack.url, other.secret)('GET', '/api/v1/products')).status).toBe(200);
  });

  it('counts requests that end in 4xx', async () => {
    const a = await accountWith('pro');
    await a.api('GET', '/api/v1/products/not-an-id');
    await a.api('GET', '/api/v1/no-such-thing');
    const res = await a.api('GET', '/api/v1/products');
    expect(res.headers.get('ratelimit')).toBe('"minute";r=97;t=60');
  });

  it('an operator override raises both windows, and a plan change applies within seconds on a cached key', async () => {
    const a = await accountWith('free');
    expect((await a.api('GET', '/api/v1/products')).headers.get('ratelimit-policy')).toBe(
      '"hour";q=100;w=3600, "minute";q=100;w=60',
    );
    await stack.admin.updateAccount({ id: a.accountId, per_minute_limit: 150, per_hour_limit: 200 });
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

    await stack.admin.updateAccount({ id: a.accountId, plan: 'enterprise', per_hour_limit: 0 });
    await eventually(
      async () => {
        const fresh = client(
          stack.url,
          (await stack.admin.createApiKey({ account_id: a.accountId, scope: 'full', name: '' })).secret,
        );
        expect((await fresh('GET', '/api/v1/products')).headers.get('ratelimit-policy')).toBe(
          '"hour";q=10000;w=3600, "minute";q=150;w=60',
        );
      },
      { intervalMs: 50 },
    );
  });

  it('refuses bad overrides', async () => {
    const a = await stack.newAccount('free');
    await expect(stack.admin.updateAccount({ id: a.accountId, per_minute_limit: -1 })).rejects.toMatchObject({
      code: 'invalid_request',
    });
    await expect(stack.admin.updateAccount({ id: a.accountId, per_hour_limit: 2_000_000 })).rejects.toMatchObject({
      code: 'invalid_request',
    });
    await expect(stack.admin.updateAccount({ id: a.accountId, plan: 'gold' })).rejects.toMatchObject({
      code: 'invalid_request',
    });
    await expect(stack.admin.updateAccount({ id: a.accountId, plan: '' })).rejects.toMatchObject({
      code: 'invalid_request',
    });
    await expect(stack.admin.updateAccount({ id: a.accountId })).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(stack.admin.updateAccount({ id: 'acct_nope', plan: 'pro' })).rejects.toMatchObject({
      code: 'not_found',
    });
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
    const a = await accountWith('free');
    const keys = await twoLicenses(a.api);
    const app = client(
      stack.url,
      (await stack.admin.createApiKey({ account_id: a.accountId, scope: 'validate', name: 'app' })).secret,
    );
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
    const a = await accountWith('free', { per_minute_limit: 1000, per_hour_limit: 10 });
    const keys = await twoLicenses(a.api);
    const app = client(
      stack.url,
      (await stack.admin.createApiKey({ account_id: a.accountId, scope: 'validate', name: 'app' })).secret,
    );
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
    const free = await accountWith('free');
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
    const raised = await accountWith('pro', { per_minute_limit: 500, per_hour_limit: 5000 });
    const app = client(
      stack.url,
      (await stack.admin.createApiKey({ account_id: raised.accountId, scope: 'validate', name: 'app' })).secret,
    );
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
    Number(await redis.get(`${stack.topology.rateLimitPrefix}:app_hour:${accountId}`));
  const asLicense = (key: string) => (method: string, path: string) =>
    client(stack.url)(method, path, undefined, { authorization: `License ${key}` });

  /** A free account whose app allowance is 100 (a raised hour of 10), with a product. */
  async function smallAllowance() {
    const a = await accountWith('free', { per_minute_limit: 1000, per_hour_limit: 10 });
    const product = (await a.api('POST', '/api/v1/products', { name: 'App' })).body.id;
    const issue = async () =>
      (await a.api('POST', '/api/v1/licenses', { product_id: product, customer_email: 'buyer@example.com' })).body
        .license_key as string;
    return { ...a, issue };
  }

  it('a validate key naming a random key app_hour times: its address is refused after a few, and another licence still validates', async () => {
    const a = await smallAllowance();
    const good = await a.issue();
    const app = client(
      stack.url,
      (await stack.admin.createApiKey({ account_id: a.accountId, scope: 'validate', name: 'shipped' })).secret,
    );
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
    const a = await accountWith('free', { per_minute_limit: 20, per_hour_limit: 10 });
    const app = client(
      stack.url,
      (await stack.admin.createApiKey({ account_id: a.accountId, scope: 'validate', name: 'app' })).secret,
    );
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

describe('shared across gateways', () => {
  it('100 requests spread over two gateways leave 0, and the 101st is refused on either', async () => {
    const second = await stack.extraGateway();
    const a = await accountWith('pro');
    const apiB = client(second.url, a.apiKey);
    const results = await Promise.all([burst(a.api, 50), burst(apiB, 50)]);
    expect(results.flatMap((r) => r.statuses).every((s) => s === 200)).toBe(true);
    expect(await counter('minute', a.keyId)).toBe(100);
    expect((await a.api('GET', '/api/v1/products')).status).toBe(429);
    expect((await apiB('GET', '/api/v1/products')).status).toBe(429);
  });
});

describe('large limits, decided in memory', () => {
  it('two gateways admit exactly the limit, and what they admitted locally reaches Redis', async () => {
    // 5 % per gateway: a limit of 200 is large enough to be decided in memory (batches of 10).
    const [one, two] = [
      await stack.extraGateway({ RATE_LIMIT_LOCAL_PERCENT: '5' }),
      await stack.extraGateway({ RATE_LIMIT_LOCAL_PERCENT: '5' }),
    ];
    const a = await accountWith('enterprise', { per_minute_limit: 200, per_hour_limit: 100_000 });
    const [apiA, apiB] = [client(one.url, a.apiKey), client(two.url, a.apiKey)];
    const answers: Record<number, number> = {};
    for (let i = 0; i < 240; i++) {
      const { status } = await (i % 2 ? apiB : apiA)('GET', '/api/v1/products');
      answers[status] = (answers[status] ?? 0) + 1;
    }
    // Every answer by status, so an odd one (a 503 under load) names itself rather than reading as a miscount.
    expect(answers).toEqual({ 200: 200, 429: 40 });
    await eventually(async () => expect(await counter('hour', a.accountId)).toBe(200));
  });
});

describe('when Redis is away', () => {
  it('a gateway whose Redis is unreachable keeps serving within its in-memory limit and says degraded', async () => {
    const lonely = await stack.extraGateway({ REDIS_URL: `redis://127.0.0.1:${await freePort()}` });
    const a = await accountWith('pro');
    const api = client(lonely.url, a.apiKey);
    const { statuses, last } = await burst(api, 100);
    expect(statuses.every((s) => s === 200)).toBe(true);
    expect(last.headers.get('ratelimit')).toMatch(/^"minute";r=0;t=\d+$/);
    const refused = await api('GET', '/api/v1/products');
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe('rate_limited');
    // The status endpoint is itself counted: use a fresh key.
    const other = await stack.admin.createApiKey({ account_id: a.accountId, scope: 'validate', name: '' });
    const status = await client(lonely.url, other.secret)('GET', '/api/v1/status');
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ status: 'degraded', dependencies: { redis: { status: 'degraded' } } });
    // Still ready: the in-memory fallback counts limits while Redis is away.
    const ready = await client(lonely.url)('GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ status: 'ready', rate_limits: 'in_memory_fallback' });
    // The refusal is counted by window in the gateway's metrics.
    const metrics = await (await fetch(lonely.metricsUrl)).text();
    expect(metrics).toMatch(/^licensing_rate_limit_rejections_total\{[^}]*window="minute"[^}]*\} 1$/m);
  });

  it('falls back at once when Redis stops, and shares counters again when it returns', async () => {
    const own = await PrivateRedis.start();
    try {
      const gw = await stack.extraGateway({ REDIS_URL: own.url });
      const a = await accountWith('enterprise');
      const api = client(gw.url, a.apiKey);
      expect((await api('GET', '/api/v1/status')).body.dependencies.redis.status).toBe('ok');
      await own.pause();
      const during = await burst(api, 5);
      expect(during.statuses).toEqual([200, 200, 200, 200, 200]); // how fast is the benchmark's business
      expect((await api('GET', '/api/v1/status')).body).toMatchObject({
        status: 'degraded',
        dependencies: { redis: { status: 'degraded' } },
      });
      await own.resume();
      await eventually(
        async () => expect((await api('GET', '/api/v1/status')).body.dependencies.redis.status).toBe('ok'),
        { timeoutMs: 6000, intervalMs: 100 },
      );
      await api('GET', '/api/v1/products');
      const check = new Redis(own.url);
      expect(Number(await check.get(`${stack.topology.rateLimitPrefix}:minute:${a.keyId}`))).toBeGreaterThan(0);
      check.disconnect();
    } finally {
      await own.stop();
    }
  });
});

describe('failed authentication', () => {
  // These count exactly: a Redis command that outlasts the gateway's default 250 ms on a busy machine
  // is judged by the in-memory insurance limiter instead (by design), which has not seen the others.
  const countsInRedis = { REDIS_TIMEOUT_MS: '5000' };

  it('a flood of bad keys from one address is throttled, and a valid key from the same address still gets 200', async () => {
    const gw = await stack.extraGateway({
      ...countsInRedis,
      RATE_LIMIT_PREFIX: `${stack.topology.rateLimitPrefix}:flood`,
      AUTH_FAILURES_PER_MINUTE: '60',
    });
    const bad = client(gw.url, 'lk_full_guess');
    const statuses: number[] = [];
    for (let i = 0; i < 100; i++) statuses.push((await bad('GET', '/api/v1/products')).status);
    expect(statuses.slice(0, 60).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(60).every((s) => s === 429)).toBe(true);
    const refused = await bad('GET', '/api/v1/products');
    expect(refused.body.detail).toMatch(/missing or invalid API key/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another app behind the same address, with a valid key, is not locked out.
    const good = await stack.newAccount();
    const res = await client(gw.url, good.apiKey)('GET', '/api/v1/products');
    expect(res.status).toBe(200);
  });

  it('counts failures atomically: a parallel burst of bad keys gets exactly the allowance of 401s', async () => {
    const gw = await stack.extraGateway({
      ...countsInRedis,
      RATE_LIMIT_PREFIX: `${stack.topology.rateLimitPrefix}:burst`,
      AUTH_FAILURES_PER_MINUTE: '20',
    });
    const bad = client(gw.url, 'lk_full_guess');
    const statuses = await Promise.all(
      Array.from({ length: 50 }, () => bad('GET', '/api/v1/products').then((r) => r.status)),
    );
    expect(statuses.filter((s) => s === 401)).toHaveLength(20);
    expect(statuses.filter((s) => s === 429)).toHaveLength(30);
  });
});
