import { randomBytes } from 'node:crypto';
import { client } from '../support/stack';
import { ownerEmail, useStack } from '../support/fixture';
import { WebClient } from '../support/web-client';
import { eventually } from '../support/eventually';

// Every throttle counts and judges an attempt in one atomic step, so a burst
// sent in parallel gets exactly the limit through, never more. The auth-failure
// throttle never refuses a valid key.

const fx = useStack();
const count = (statuses: number[], s: number) => statuses.filter((x) => x === s).length;

/**
 * A gateway of its own (own counters in Redis) with these limits, once it counts in Redis. A generous
 * Redis timeout: on a busy machine a command slower than the default 250 ms is judged by the
 * in-memory insurance limiter (by design), which has not seen the other attempts.
 */
async function gatewayWith(config: Record<string, string>) {
  const gw = await fx.stack.extraGateway({
    REDIS_TIMEOUT_MS: '5000',
    RATE_LIMIT_PREFIX: `${fx.stack.topology.rateLimitPrefix}_${randomBytes(3).toString('hex')}`,
    ...config,
  });
  await eventually(async () => expect((await (await fetch(`${gw.url}/readyz`)).json()).rate_limits).toBe('redis'));
  return gw;
}

/** A sign-in or sign-up form ready to post: its CSRF cookie and token. */
async function form(url: string, page: 'signin' | 'signup') {
  const web = new WebClient(url, fx.stack.topology);
  const csrf = WebClient.csrf((await web.get(`/dashboard/${page}`)).html);
  return { web, csrf };
}

it('sign-in: a parallel burst of wrong passwords gets exactly the limit through; a right password is not counted as a guess', async () => {
  const gw = await gatewayWith({ SIGNIN_FAILURES_PER_EMAIL: '8', SIGNIN_FAILURES_PER_ADDRESS: '1000' });
  const owner = await new WebClient(gw.url, fx.stack.topology).signUp(ownerEmail());
  for (let i = 0; i < 5; i++)
    expect((await new WebClient(gw.url, fx.stack.topology).signIn(owner.email, owner.password)).status).toBe(303); // never counted
  const forms = await Promise.all(Array.from({ length: 20 }, () => form(gw.url, 'signin')));
  const statuses = (
    await Promise.all(
      forms.map(({ web, csrf }, i) =>
        web.post('/dashboard/signin', { _csrf: csrf, email: owner.email, password: `wrong guess ${i}` }),
      ),
    )
  ).map((r) => r.status);
  expect([count(statuses, 401), count(statuses, 429)]).toEqual([8, 12]);
});

it('sign-up: throttled per e-mail and per address, every attempt counted, in parallel too', async () => {
  const gw = await gatewayWith({ SIGNUPS_PER_EMAIL: '3', SIGNUPS_PER_ADDRESS: '11' });
  const target = ownerEmail();
  const forms = await Promise.all(Array.from({ length: 8 }, () => form(gw.url, 'signup')));
  const statuses = (
    await Promise.all(
      forms.map(({ web, csrf }) =>
        web.post('/dashboard/signup', {
          _csrf: csrf,
          account_name: 'Burst',
          email: target,
          password: 'a long enough passphrase',
        }),
      ),
    )
  ).map((r) => r.status);
  expect(count(statuses, 429)).toBe(5);
  expect(count(statuses, 303)).toBe(3); // "check your inbox" for each attempt let through
  // Every attempt counted for the address too (8 of its 11): three more e-mails pass, the next is refused.
  const more: number[] = [];
  for (let i = 0; i < 4; i++) {
    const { web, csrf } = await form(gw.url, 'signup');
    more.push(
      (
        await web.post('/dashboard/signup', {
          _csrf: csrf,
          account_name: 'More',
          email: ownerEmail(),
          password: 'a long enough passphrase',
        })
      ).status,
    );
  }
  expect(more).toEqual([303, 303, 303, 429]);
});

it('hosted checkout page: a parallel burst from one address gets exactly the limit through', async () => {
  const gw = await gatewayWith({ CHECKOUT_REQUESTS_PER_MINUTE: '5' });
  const statuses = (
    await Promise.all(
      Array.from({ length: 15 }, () => fetch(`${gw.url}/checkout/cs_01JD8Z3K6Q2W4E5R6T7Y8V9X0P`).then((r) => r.status)),
    )
  ).sort();
  expect([count(statuses, 404), count(statuses, 429)]).toEqual([5, 10]);
});

it('auth failures: a parallel burst of bad keys is cut at the limit, and a valid key from the same address is never refused', async () => {
  const gw = await gatewayWith({ AUTH_FAILURES_PER_MINUTE: '4' });
  const { apiKey } = await fx.stack.newAccount();
  const bad = `lk_full_${randomBytes(20).toString('hex')}`;
  const statuses = await Promise.all(
    Array.from({ length: 12 }, () => client(gw.url, bad)('GET', '/api/v1/products').then((r) => r.status)),
  );
  expect([count(statuses, 401), count(statuses, 429)]).toEqual([4, 8]);
  expect((await client(gw.url, apiKey)('GET', '/api/v1/products')).status).toBe(200);
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

/** The value of the first series of `metrics` matching `pattern` (0 when there is none yet). */
async function metric(url: string, pattern: RegExp): Promise<number> {
  const line = (await (await fetch(url)).text()).split('\n').find((l) => pattern.test(l));
  return line ? Number(line.split(' ').pop()) : 0;
}

it('/readyz asks its backends at most once per second, however many ask it at once', async () => {
  const probes = () => metric(fx.stack.metricsUrls.account, /^licensing_grpc_health_checks_total\{.*probe="readiness"/);
  const before = await probes();
  const started = performance.now();
  const answers = await Promise.all(Array.from({ length: 40 }, () => fetch(`${fx.stack.url}/readyz`)));
  const seconds = Math.ceil((performance.now() - started) / 1000);
  expect(answers.map((r) => r.status)).toEqual(Array(40).fill(200));
  const asked = (await probes()) - before;
  // One probe per started second at most (the answers of one are shared), whatever the machine's speed.
  expect(asked).toBeGreaterThanOrEqual(1);
  expect(asked).toBeLessThanOrEqual(Math.min(seconds + 1, 39));
});

it('made-up dashboard session cookies: a malformed one costs no look-up, a repeated one costs one, and an address is cut off after the limit', async () => {
  const gw = await gatewayWith({ SESSION_FAILURES_PER_MINUTE: '5', TRUSTED_PROXIES: 'loopback' });
  const lookups = () =>
    metric(
      fx.stack.metricsUrls.account,
      /^licensing_grpc_server_handled_total\{.*method="GetSession".*code="UNAUTHENTICATED"/,
    );
  const visit = (cookie: string, address: string) =>
    fetch(`${gw.url}/dashboard`, {
      headers: { cookie: `lk_session=${cookie}`, 'x-forwarded-for': address },
      redirect: 'manual',
    });
  const token = () => randomBytes(32).toString('base64url');
  const start = await lookups();

  // Not shaped like a session token: no look-up at all, and the browser is told to drop it.
  const malformed = await visit('not-a-session', '198.51.100.9');
  expect(malformed.status).toBe(303);
  expect(malformed.headers.get('set-cookie')).toMatch(/^lk_session=; Path=\/dashboard; Max-Age=0/);
  expect(await lookups()).toBe(start);

  // A well-formed token nobody issued: asked about once, then remembered (and cleared from the browser).
  const madeUp = token();
  for (let i = 0; i < 5; i++) expect((await visit(madeUp, '198.51.100.9')).status).toBe(303);
  expect(await lookups()).toBe(start + 1);

  // New made-up tokens from the same address: looked up until the address is over its limit of 5
  // unknown tokens (the one above was the first), then no more, whatever it sends.
  for (let i = 0; i < 12; i++) expect((await visit(token(), '198.51.100.9')).status).toBe(303);
  expect(await lookups()).toBe(start + 6);

  // Another address is looked up as before.
  await visit(token(), '203.0.113.4');
  expect(await lookups()).toBe(start + 7);
});
