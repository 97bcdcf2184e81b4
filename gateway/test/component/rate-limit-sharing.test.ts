import { Redis } from 'ioredis';
import type { Product } from '@licensing/proto';
import { client } from '../../../test/support/stack';
import { PrivateRedis } from '../../../test/support/redis-server';
import { freePort } from '../../../scripts/lib/net';
import { eventually } from '../../../test/support/eventually';
import { addKey, credentialAccountHandlers, type FakeAccount } from './fake-credential-answers';
import { productHandlers } from './fake-service-answers';
import { startGatewayWithFakeServices, type GatewayWithFakeServices } from './gateway-with-fake-services';
import { accountsIn, burst, clearCounters, counterIn } from './rate-limit-kit';

// The gateway's rate limits across gateways and without Redis: several gateways over one real Redis
// share every count (exactly, also when a large limit is admitted in memory a share at a time); a
// gateway whose Redis is away or stops counts in memory and says it is degraded, and shares again when
// Redis is back; failed authentication is throttled per address, exactly, never refusing a valid key.
// The account service is faked (fake-credential-answers.ts). One account's limits: rate-limits.test.ts.

const accounts: FakeAccount[] = [];
const products: Product[] = [];
let h: GatewayWithFakeServices;
let redis: Redis;

beforeAll(async () => {
  h = await startGatewayWithFakeServices({
    handlers: { account: credentialAccountHandlers(accounts), product: productHandlers(products) },
  });
  redis = new Redis(h.topology.redisUrl);
});

afterAll(async () => {
  await clearCounters(redis, h.topology.rateLimitPrefix);
  redis.disconnect();
  await h?.stop();
});

const accountWith = accountsIn(accounts, () => h.url);

const counter = counterIn(
  () => redis,
  () => h.topology.rateLimitPrefix,
);

describe('shared across gateways', () => {
  it('100 requests spread over two gateways leave 0, and the 101st is refused on either', async () => {
    const second = await h.extraGateway();
    const a = accountWith('pro');
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
      await h.extraGateway({ RATE_LIMIT_LOCAL_PERCENT: '5' }),
      await h.extraGateway({ RATE_LIMIT_LOCAL_PERCENT: '5' }),
    ];
    const a = accountWith('enterprise', { per_minute_limit: 200, per_hour_limit: 100_000 });
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
    const lonely = await h.extraGateway({ REDIS_URL: `redis://127.0.0.1:${await freePort()}` });
    const a = accountWith('pro');
    const api = client(lonely.url, a.apiKey);
    const { statuses, last } = await burst(api, 100);
    expect(statuses.every((s) => s === 200)).toBe(true);
    expect(last.headers.get('ratelimit')).toMatch(/^"minute";r=0;t=\d+$/);
    const refused = await api('GET', '/api/v1/products');
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe('rate_limited');
    // The status endpoint is itself counted: use a fresh key.
    const status = await client(lonely.url, addKey(a.acct, 'validate'))('GET', '/api/v1/status');
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ status: 'degraded', dependencies: { redis: { status: 'degraded' } } });
    // Still ready: the in-memory fallback counts limits while Redis is away.
    const ready = await client(lonely.url)('GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ status: 'ready', rate_limits: 'in_memory_fallback' });
    // The refusal is counted by window in the gateway's metrics.
    const metrics = await (await fetch(`http://127.0.0.1:${lonely.metricsPort}/metrics`)).text();
    expect(metrics).toMatch(/^licensing_rate_limit_rejections_total\{[^}]*window="minute"[^}]*\} 1$/m);
  });

  it('falls back at once when Redis stops, and shares counters again when it returns', async () => {
    const own = await PrivateRedis.start();
    try {
      const gw = await h.extraGateway({ REDIS_URL: own.url });
      const a = accountWith('enterprise');
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
      expect(Number(await check.get(`${h.topology.rateLimitPrefix}:minute:${a.keyId}`))).toBeGreaterThan(0);
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
    const gw = await h.extraGateway({
      ...countsInRedis,
      RATE_LIMIT_PREFIX: `${h.topology.rateLimitPrefix}:flood`,
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
    const good = accountWith('enterprise');
    const res = await client(gw.url, good.apiKey)('GET', '/api/v1/products');
    expect(res.status).toBe(200);
  });

  it('counts failures atomically: a parallel burst of bad keys gets exactly the allowance of 401s', async () => {
    const gw = await h.extraGateway({
      ...countsInRedis,
      RATE_LIMIT_PREFIX: `${h.topology.rateLimitPrefix}:burst`,
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
