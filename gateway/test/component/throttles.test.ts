import { randomBytes } from 'node:crypto';
import { Server, ServerCredentials, type UntypedServiceImplementation } from '@grpc/grpc-js';
import { health } from '@licensing/proto';
import { HealthService } from '@licensing/runtime';
import { client } from '../../../test/support/stack';
import { eventually } from '../../../test/support/eventually';
import { credentialAccountHandlers, fakeAccount, type FakeAccount } from './fake-credential-answers';
import { productHandlers } from './fake-service-answers';
import { startGatewayWithFakeServices, type GatewayWithFakeServices } from './gateway-with-fake-services';

// The gateway's throttles count and judge an attempt in one atomic step in real Redis, so a burst sent
// in parallel gets exactly the limit through, never more; the auth-failure throttle never refuses a
// valid key; per-address throttles know an IPv6 client by its /64. /readyz asks its backends at most
// once a second. The services are faked. The dashboard's and the checkout page's throttles:
// web/test/component/throttles.test.ts.

const count = (statuses: number[], s: number) => statuses.filter((x) => x === s).length;
const accounts: FakeAccount[] = [];
let h: GatewayWithFakeServices;

beforeAll(async () => {
  h = await startGatewayWithFakeServices({
    handlers: { account: credentialAccountHandlers(accounts), product: productHandlers([]) },
  });
});

afterAll(async () => {
  await h?.stop();
});

/**
 * A gateway of its own (own counters in Redis) with these limits, once it counts in Redis. A generous
 * Redis timeout: on a busy machine a command slower than the default 250 ms is judged by the
 * in-memory insurance limiter (by design), which has not seen the other attempts.
 */
async function gatewayWith(config: Record<string, string>) {
  const gw = await h.extraGateway({
    REDIS_TIMEOUT_MS: '5000',
    RATE_LIMIT_PREFIX: `${h.topology.rateLimitPrefix}_${randomBytes(3).toString('hex')}`,
    ...config,
  });
  await eventually(async () => expect((await (await fetch(`${gw.url}/readyz`)).json()).rate_limits).toBe('redis'));
  return gw;
}

it('auth failures: a parallel burst of bad keys is cut at the limit, and a valid key from the same address is never refused', async () => {
  const gw = await gatewayWith({ AUTH_FAILURES_PER_MINUTE: '4' });
  const acct = fakeAccount('enterprise');
  accounts.push(acct);
  const bad = `lk_full_${randomBytes(20).toString('hex')}`;
  const statuses = await Promise.all(
    Array.from({ length: 12 }, () => client(gw.url, bad)('GET', '/api/v1/products').then((r) => r.status)),
  );
  expect([count(statuses, 401), count(statuses, 429)]).toEqual([4, 8]);
  expect((await client(gw.url, acct.keys[0].secret)('GET', '/api/v1/products')).status).toBe(200);
});

it('per-address throttles count an IPv6 client by its /64, and an IPv4-mapped address as its IPv4 address', async () => {
  const gw = await gatewayWith({ AUTH_FAILURES_PER_MINUTE: '3', TRUSTED_PROXIES: 'loopback' });
  const bad = `lk_full_${randomBytes(20).toString('hex')}`;
  const from = async (address: string) =>
    (await client(gw.url, bad)('GET', '/api/v1/products', undefined, { 'x-forwarded-for': address })).status;
  // Three addresses of one /64 (a client may take a new one for every request) share one budget.
  const sameNetwork = [];
  for (const host of ['a', 'b', 'c', 'd']) sameNetwork.push(await from(`2001:db8:1:2::${host}`));
  expect(sameNetwork).toEqual([401, 401, 401, 429]);
  expect(await from('2001:db8:1:2:ffff:ffff:ffff:ffff')).toBe(429);
  // The next /64 is another client.
  expect(await from('2001:db8:1:3::a')).toBe(401);
  // 192.0.2.7 is the same client whether it arrives as IPv4 or IPv4-mapped IPv6.
  expect([await from('192.0.2.7'), await from('::ffff:192.0.2.7'), await from('::ffff:c000:207')]).toEqual([
    401, 401, 401,
  ]);
  expect(await from('192.0.2.7')).toBe(429);
});

/**
 * The account service's health as a real service serves it (the runtime's HealthService), counting the
 * readiness checks it answers as the service's licensing_grpc_health_checks_total does.
 */
async function countingHealth(): Promise<{ address: string; readiness(): number; stop(): void }> {
  let readiness = 0;
  const service = new HealthService(
    () => true,
    (probe) => {
      if (probe === 'readiness') readiness++;
    },
  );
  service.setServing(true);
  const server = new Server();
  server.addService(health.HealthService, service.implementation as unknown as UntypedServiceImplementation);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  return { address: `127.0.0.1:${port}`, readiness: () => readiness, stop: () => server.forceShutdown() };
}

it('/readyz asks its backends at most once per second, however many ask it at once', async () => {
  const account = await countingHealth();
  try {
    const gw = await h.extraGateway({ ACCOUNT_GRPC_ADDR: account.address });
    const before = account.readiness();
    const started = performance.now();
    const answers = await Promise.all(Array.from({ length: 40 }, () => fetch(`${gw.url}/readyz`)));
    const seconds = Math.ceil((performance.now() - started) / 1000);
    expect(answers.map((r) => r.status)).toEqual(Array(40).fill(200));
    const asked = account.readiness() - before;
    // One probe per started second at most (the answers of one are shared), whatever the machine's speed.
    expect(asked).toBeGreaterThanOrEqual(1);
    expect(asked).toBeLessThanOrEqual(Math.min(seconds + 1, 39));
  } finally {
    account.stop();
  }
});
