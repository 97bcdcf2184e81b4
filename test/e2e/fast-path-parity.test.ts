import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '@licensing/runtime';
import { EXAMPLE_LICENSE_KEY } from '@licensing/proto';
import { start as startGateway, type RunningGateway } from '../../gateway/src/main';
import { envFor } from '../../scripts/lib/topology';
import { eventually } from '../support/eventually';
import { client, startStack, type Stack } from '../support/stack';
import { selfSignedCert } from '../support/tls';
import { WebClient } from '../support/web-client';

// Own stack: its clock is moved by hand (TestClock), so both gateways answer at one instant.

// The validation fast path (gateway/src/license-validation/fast-path.ts) is a second request
// pipeline: for what it answers it must answer exactly as the Express route does. Here two gateways
// over the same services, one with the fast path and one without (the test-only switch of app.ts),
// get the same requests (valid and malformed keys and queries, odd and repeated headers, other
// methods, bodies, missing or wrong credentials, a validate-scope key, a rate-limited key, and the
// transport rules), each pair at one instant of the stack's clock; their status, headers and bodies
// must match, except what varies by nature (Date, a generated request id, the rate-limit counters,
// which are compared by shape). Every case also says whether the fast path must take it, and the
// switch reports whether it did: a case meant to test the fast path cannot silently go to Express.

/** The stack's clock, held still while a pair of requests is answered (cache_until and expiry depend on it). */
class HeldClock implements Clock {
  private heldAt?: number;
  now(): Date {
    return new Date(this.heldAt ?? Date.now());
  }
  hold(): void {
    this.heldAt = Date.now();
  }
  release(): void {
    this.heldAt = undefined;
  }
}

interface Answer {
  status: number;
  /** Lower-case names, in the order sent (a repeated one once per value). */
  headers: [string, string][];
  body: string;
}

interface Sent {
  method?: string;
  path: string;
  /** As sent, names as written (a name may repeat); Host is added. */
  headers: string[];
  body?: string;
}

const dir = mkdtempSync(join(tmpdir(), 'licensing-parity-'));
const { certFile, keyFile, cert: ca } = selfSignedCert(dir, '127.0.0.1');

function send(baseUrl: string, { method = 'GET', path, headers, body }: Sent): Promise<Answer> {
  const url = new URL(path, baseUrl);
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    // With a header list, node:http sends exactly these (and a request without Host is refused).
    const req = request(url, { method, headers: ['Host', url.host, ...headers], ca }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const list: [string, string][] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2)
          list.push([res.rawHeaders[i].toLowerCase(), res.rawHeaders[i + 1]]);
        resolve({ status: res.statusCode!, headers: list, body: Buffer.concat(chunks).toString('utf8') });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

const GENERATED_ID = /^req_[0-9a-f]{24}$/;

/** What must be equal: everything but Date, a generated request id and the counters (their shape must be). */
function comparable(a: Answer, method: string) {
  const headers: Record<string, string> = {};
  for (const [name, value] of a.headers) {
    expect(headers[name]).toBeUndefined(); // no header twice
    headers[name] = value;
  }
  expect(headers.date).toMatch(/^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
  headers.date = '<date>';
  let body = a.body;
  const id = headers['x-request-id'];
  if (id && GENERATED_ID.test(id)) {
    headers['x-request-id'] = '<generated>';
    body = body.split(id).join('<generated>');
  }
  if ('ratelimit' in headers) {
    expect(headers.ratelimit).toMatch(
      /^"(minute|app_minute|license_minute|heartbeat|unknown_minute|hour|app_hour)";r=\d+;t=\d+$/,
    );
    headers.ratelimit = headers.ratelimit.replace(/\d+/g, '<n>');
    for (const name of ['x-ratelimit-remaining', 'x-ratelimit-reset']) {
      expect(headers[name]).toMatch(/^\d+$/);
      headers[name] = '<n>';
    }
  }
  if (method !== 'HEAD') expect(Number(headers['content-length'])).toBe(Buffer.byteLength(a.body));
  if (a.status === 429) {
    // How long until the minute ends: counted by both, a moment apart.
    expect(headers['retry-after']).toMatch(/^\d+$/);
    headers['retry-after'] = '<n>';
    headers['content-length'] = '<n>';
    body = body.replace(/retry in \d+ s/, 'retry in <n> s');
  }
  return { status: a.status, headers: Object.fromEntries(Object.entries(headers).sort()), body };
}

interface Keys {
  full: string;
  validate: string;
  limited: string;
  valid: string;
  suspended: string;
  revoked: string;
  activation: string;
  foreign: string;
  /** Entitlements from its policy and of its own. */
  entitled: string;
  /** Its own max_activations (2) over its product's (1), both machines activated: judged by the effective policy. */
  overridden: string;
  /** Licences sent as their own "License" credential (each spends its own minute). */
  app: string;
  appLimited: string;
  /** Subscription licences whose policy has grace days: cancelled now (expired), and at the period end, past it (in grace). */
  canceledNow: string;
  canceledAtEnd: string;
  /** The same as canceledNow, of products whose expiration_strategy is maintain_access and revoke_access. */
  keepingExpired: string;
  revokedAtExpiry: string;
}

interface Case {
  name: string;
  /** Must the fast path take it (else it must leave it to Express)? */
  fast: boolean;
  status: number;
  request(k: Keys): Sent;
  /** Only in this setting (transport cases). */
  only?: string;
  /** Not behind the setting's proxy headers (the request came straight to the gateway). */
  direct?: boolean;
  /** Run before the pair (once), with a way to send to the gateway with the fast path as the case sends. */
  prepare?(k: Keys, send: (sent: Sent) => Promise<Answer>): Promise<void>;
}

const auth = (apiKey: string) => ['Authorization', `Bearer ${apiKey}`];
const asLicense = (licenseKey: string, query: string): Sent => ({
  path: validatePath(query),
  headers: ['Authorization', `License ${licenseKey}`],
});
const validatePath = (query: string) => `/api/v1/licenses/validate?${query}`;
const get = (apiKey: string, query: string, headers: string[] = []): Sent => ({
  path: validatePath(query),
  headers: [...auth(apiKey), ...headers],
});

const cases: Case[] = [
  // Taken by the fast path: answered without Express, as Express would.
  { name: 'a valid licence', fast: true, status: 200, request: (k) => get(k.full, `license_key=${k.valid}`) },
  {
    name: 'the /v1 alias',
    fast: true,
    status: 200,
    request: (k) => ({ path: `/v1/licenses/validate?license_key=${k.valid}`, headers: auth(k.full) }),
  },
  {
    name: 'a fingerprint',
    fast: true,
    status: 200,
    request: (k) => get(k.full, `license_key=${k.valid}&fingerprint=machine-1`),
  },
  {
    name: 'an empty fingerprint',
    fast: true,
    status: 200,
    request: (k) => get(k.full, `fingerprint=&license_key=${k.valid}`),
  },
  {
    name: 'a licence with entitlements (its policy’s and its own)',
    fast: true,
    status: 200,
    request: (k) => get(k.full, `license_key=${k.entitled}`),
  },
  {
    name: 'a licence whose max_activations is its own, every seat taken (a third machine)',
    fast: true,
    status: 200,
    request: (k) => get(k.full, `license_key=${k.overridden}&fingerprint=seat-3`),
  },
  {
    name: 'a licence whose max_activations is its own, from its second machine',
    fast: true,
    status: 200,
    request: (k) => get(k.full, `license_key=${k.overridden}&fingerprint=seat-2`),
  },
  { name: 'a suspended licence', fast: true, status: 200, request: (k) => get(k.full, `license_key=${k.suspended}`) },
  {
    name: 'a subscription licence cancelled now, its policy with grace days (expired at once)',
    fast: true,
    status: 200,
    request: (k) => get(k.full, `license_key=${k.canceledNow}`),
  },
  {
    name: 'a subscription licence ended at its period end, in its grace days',
    fast: true,
    status: 200,
    request: (k) => get(k.full, `license_key=${k.canceledAtEnd}`),
  },
  { name: 'a revoked licence', fast: true, status: 200, request: (k) => get(k.full, `license_key=${k.revoked}`) },
  {
    name: 'an expired licence under maintain_access (its detail names what stays available)',
    fast: true,
    status: 200,
    request: (k) => get(k.full, `license_key=${k.keepingExpired}`),
  },
  {
    name: 'an expired licence under revoke_access (revoked at its expiry)',
    fast: true,
    status: 200,
    request: (k) => get(k.full, `license_key=${k.revokedAtExpiry}`),
  },
  {
    name: 'a licence that needs activation, for a machine not activated',
    fast: true,
    status: 200,
    request: (k) => get(k.full, `license_key=${k.activation}&fingerprint=machine-2`),
  },
  {
    name: "another account's licence (not found)",
    fast: true,
    status: 200,
    request: (k) => get(k.full, `license_key=${k.foreign}`),
  },
  {
    name: 'a malformed licence key (too short for any key)',
    fast: true,
    status: 200,
    request: (k) => get(k.full, 'license_key=short'),
  },
  {
    name: 'a validate-scope API key',
    fast: true,
    status: 200,
    request: (k) => get(k.validate, `license_key=${k.valid}`),
  },
  {
    name: 'an X-Request-Id given',
    fast: true,
    status: 200,
    request: (k) => get(k.full, `license_key=${k.valid}`, ['X-Request-Id', 'parity-1']),
  },
  {
    name: 'an X-Request-Id that is not sane (a new one is made)',
    fast: true,
    status: 200,
    request: (k) => get(k.full, `license_key=${k.valid}`, ['X-Request-Id', 'not a sane id']),
  },
  {
    name: 'header names in odd case',
    fast: true,
    status: 200,
    request: (k) => ({
      path: validatePath(`license_key=${k.valid}`),
      headers: ['aUTHORIZATION', `Bearer ${k.full}`, 'X-REQUEST-ID', 'parity-2'],
    }),
  },
  {
    name: 'headers it does not read, and a Content-Length of 0',
    fast: true,
    status: 200,
    request: (k) =>
      get(k.full, `license_key=${k.valid}`, ['Accept', 'text/html', 'Cookie', 'a=b', 'Content-Length', '0']),
  },
  {
    name: 'a licence credential validating itself',
    fast: true,
    status: 200,
    request: (k) => asLicense(k.app, `license_key=${k.app}`),
  },
  {
    name: 'a licence credential validating itself, the key in lower case and a fingerprint',
    fast: true,
    status: 200,
    request: (k) => asLicense(k.app.toLowerCase(), `license_key=${k.app.toLowerCase()}&fingerprint=machine-1`),
  },
  {
    name: 'a licence past its per-minute limit (Redis counts it; the fast path answers 429)',
    fast: true,
    status: 429,
    request: (k) => asLicense(k.appLimited, `license_key=${k.appLimited}`),
    // Its minute (60) is spent: both gateways then refuse.
    prepare: async (k, sendFast) => {
      for (let i = 0; i < 60; i++) await sendFast(asLicense(k.appLimited, `license_key=${k.appLimited}`));
    },
  },
  // Left to Express: the answers must still be the same (and are Express's on both sides).
  {
    name: 'a licence credential naming another licence (404)',
    fast: false,
    status: 404,
    request: (k) => asLicense(k.app, `license_key=${k.valid}`),
  },
  {
    name: 'a suspended licence credential validating itself',
    fast: false,
    status: 200,
    request: (k) => asLicense(k.suspended, `license_key=${k.suspended}`),
  },
  {
    name: 'an unknown licence credential validating itself (not_found)',
    fast: false,
    status: 200,
    request: () => asLicense(EXAMPLE_LICENSE_KEY, `license_key=${EXAMPLE_LICENSE_KEY}`),
  },
  {
    name: 'a malformed licence credential',
    fast: false,
    status: 401,
    request: (k) => asLicense('not!a!key', `license_key=${k.valid}`),
  },
  {
    name: 'a percent-encoded licence key',
    fast: false,
    status: 200,
    request: (k) => get(k.full, `license_key=${k.valid.replace('-', '%2D')}`),
  },
  {
    name: 'a licence key too long',
    fast: false,
    status: 400,
    request: (k) => get(k.full, `license_key=${'K'.repeat(65)}`),
  },
  { name: 'an empty licence key', fast: false, status: 400, request: (k) => get(k.full, 'license_key=') },
  { name: 'no licence key', fast: false, status: 400, request: (k) => get(k.full, 'fingerprint=m') },
  {
    name: 'the licence key twice',
    fast: false,
    status: 400,
    request: (k) => get(k.full, `license_key=${k.valid}&license_key=${k.valid}`),
  },
  {
    name: 'an unknown query parameter',
    fast: false,
    status: 400,
    request: (k) => get(k.full, `license_key=${k.valid}&product_id=prod_x`),
  },
  {
    name: 'a fingerprint too long',
    fast: false,
    status: 400,
    request: (k) => get(k.full, `license_key=${k.valid}&fingerprint=${'m'.repeat(201)}`),
  },
  {
    name: "a fingerprint with a '+'",
    fast: false,
    status: 200,
    request: (k) => get(k.full, `license_key=${k.valid}&fingerprint=a+b`),
  },
  { name: "a trailing '&'", fast: false, status: 200, request: (k) => get(k.full, `license_key=${k.valid}&`) },
  {
    name: 'a trailing slash',
    fast: false,
    status: 200,
    request: (k) => ({ path: `/api/v1/licenses/validate/?license_key=${k.valid}`, headers: auth(k.full) }),
  },
  {
    name: 'HEAD',
    fast: false,
    status: 200,
    request: (k) => ({ ...get(k.full, `license_key=${k.valid}`), method: 'HEAD' }),
  },
  {
    name: 'OPTIONS',
    fast: false,
    status: 405,
    request: (k) => ({ ...get(k.full, `license_key=${k.valid}`), method: 'OPTIONS' }),
  },
  {
    name: 'POST',
    fast: false,
    status: 405,
    request: (k) => ({ ...get(k.full, `license_key=${k.valid}`, ['Content-Length', '0']), method: 'POST' }),
  },
  // An app asking for entitlements: the long form, which Express answers (from the same validation cache).
  ...[
    ['entitlements it has', ['beta', 'pdf-export']],
    ['entitlements it lacks', ['pdf-export', 'team-admin']],
  ].map(
    ([what, codes]): Case => ({
      name: `POST /keys/validate asking for ${what}`,
      fast: false,
      status: 200,
      request: (k) => {
        const body = JSON.stringify({ key: k.entitled, entitlements: codes });
        return {
          method: 'POST',
          path: '/api/v1/keys/validate',
          headers: [...auth(k.full), 'Content-Type', 'application/json', 'Content-Length', String(body.length)],
          body,
        };
      },
    }),
  ),
  {
    name: 'no Authorization',
    fast: false,
    status: 401,
    request: (k) => ({ path: validatePath(`license_key=${k.valid}`), headers: [] }),
  },
  {
    name: "'bearer' in lower case",
    fast: false,
    status: 401,
    request: (k) => ({ path: validatePath(`license_key=${k.valid}`), headers: ['Authorization', `bearer ${k.full}`] }),
  },
  {
    name: 'an API key nobody issued',
    fast: false,
    status: 401,
    request: (k) => get('lk_full_unknownunknownunknown', `license_key=${k.valid}`),
  },
  {
    name: 'Authorization twice (node:http keeps the first)',
    fast: false,
    status: 200,
    request: (k) => get(k.full, `license_key=${k.valid}`, ['authorization', 'Bearer lk_full_wrong']),
  },
  {
    name: 'X-Request-Id twice (merged, not sane: a new one is made)',
    fast: false,
    status: 200,
    request: (k) => get(k.full, `license_key=${k.valid}`, ['X-Request-Id', 'a', 'x-request-id', 'b']),
  },
  {
    name: 'a text body',
    fast: false,
    status: 415,
    request: (k) => ({
      ...get(k.full, `license_key=${k.valid}`, ['Content-Type', 'text/plain', 'Content-Length', '5']),
      body: 'hello',
    }),
  },
  {
    name: 'a JSON body that does not parse',
    fast: false,
    status: 400,
    request: (k) => ({
      ...get(k.full, `license_key=${k.valid}`, ['Content-Type', 'application/json', 'Content-Length', '1']),
      body: '{',
    }),
  },
  {
    name: 'a JSON body',
    fast: false,
    status: 200,
    request: (k) => ({
      ...get(k.full, `license_key=${k.valid}`, ['Content-Type', 'application/json', 'Content-Length', '2']),
      body: '{}',
    }),
  },
  {
    name: 'a chunked body without a type',
    fast: false,
    status: 415,
    request: (k) => get(k.full, `license_key=${k.valid}`, ['Transfer-Encoding', 'chunked']),
  },
  {
    name: 'a key past its per-minute limit',
    fast: false,
    status: 429,
    request: (k) => get(k.limited, `license_key=${k.valid}`),
    // The first request spends the minute (its limit is 1): both gateways then refuse.
    prepare: async (k, sendFast) => void (await sendFast(get(k.limited, `license_key=${k.valid}`))),
  },
  // Transport: HTTPS as express's req.secure reads it; HSTS on secure answers; 426 in production.
  {
    name: 'X-Forwarded-Proto https from a trusted proxy (HSTS)',
    only: 'HTTP',
    fast: true,
    status: 200,
    request: (k) => get(k.full, `license_key=${k.valid}`, ['X-Forwarded-Proto', 'https']),
  },
  {
    name: 'X-Forwarded-Proto http',
    only: 'HTTP',
    fast: true,
    status: 200,
    request: (k) => get(k.full, `license_key=${k.valid}`, ['X-Forwarded-Proto', 'http']),
  },
  {
    name: 'straight to the gateway in clear text (426)',
    only: 'production behind a TLS proxy',
    direct: true,
    fast: false,
    status: 426,
    request: (k) => get(k.full, `license_key=${k.valid}`),
  },
  {
    name: 'the proxy says http (426)',
    only: 'production behind a TLS proxy',
    direct: true,
    fast: false,
    status: 426,
    request: (k) => get(k.full, `license_key=${k.valid}`, ['X-Forwarded-Proto', 'http']),
  },
  {
    name: 'the proxy says "https, http" (the first counts)',
    only: 'production behind a TLS proxy',
    direct: true,
    fast: true,
    status: 200,
    request: (k) => get(k.full, `license_key=${k.valid}`, ['X-Forwarded-Proto', 'https, http']),
  },
  {
    name: 'X-Forwarded-Proto twice',
    only: 'production behind a TLS proxy',
    direct: true,
    fast: false,
    status: 200,
    request: (k) => get(k.full, `license_key=${k.valid}`, ['X-Forwarded-Proto', 'https', 'x-forwarded-proto', 'https']),
  },
  {
    name: 'over TLS from a trusted proxy that says the client used http (426)',
    only: 'HTTPS at the gateway, production',
    fast: false,
    status: 426,
    request: (k) => get(k.full, `license_key=${k.valid}`, ['X-Forwarded-Proto', 'http']),
  },
];

interface Setting {
  name: string;
  env: Record<string, string>;
  /** What a proxy in front adds to every request (unless a case is `direct`). */
  proxyHeaders: string[];
}

const settings: Setting[] = [
  { name: 'HTTP', env: {}, proxyHeaders: [] },
  {
    name: 'production behind a TLS proxy',
    env: { NODE_ENV: 'production' },
    proxyHeaders: ['X-Forwarded-Proto', 'https'],
  },
  {
    name: 'HTTPS at the gateway, production',
    env: { NODE_ENV: 'production', TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile },
    proxyHeaders: [],
  },
];

const clock = new HeldClock();
let stack: Stack;
let keys: Keys;

beforeAll(async () => {
  stack = await startStack({}, {}, clock);
  const { accountId, apiKey } = await stack.newAccount();
  // Limits far from their end, so the fast path may decide them in memory.
  await stack.admin.updateAccount({ id: accountId, per_minute_limit: 100_000, per_hour_limit: 1_000_000 });
  const validate = (await stack.admin.createApiKey({ account_id: accountId, scope: 'validate', name: 'app' })).secret;
  const limitedAccount = await stack.newAccount();
  await stack.admin.updateAccount({ id: limitedAccount.accountId, per_minute_limit: 1 });
  const api = client(stack.url, apiKey);
  const product = async (policy: Record<string, unknown>) =>
    (await api('POST', '/api/v1/products', { name: 'Parity', policy })).body.id as string;
  const issue = async (productId: string, via = api) =>
    (await via('POST', '/api/v1/licenses', { product_id: productId, customer_email: 'parity@example.com' })).body
      .license_key as string;
  const plain = await product({});
  const [valid, suspended, revoked] = [await issue(plain), await issue(plain), await issue(plain)];
  expect((await api('POST', `/api/v1/licenses/${suspended}/suspend`)).status).toBe(200);
  expect((await api('POST', `/api/v1/licenses/${revoked}/revoke`)).status).toBe(200);
  const activation = await issue(await product({ require_activation: true }));
  const entitled = await issue(await product({ entitlements: ['sync', 'pdf-export'] }));
  expect((await api('PATCH', `/api/v1/licenses/${entitled}`, { entitlements: ['beta'] })).status).toBe(200);
  // Per-licence terms: two machines where the product allows one.
  const overridden = await issue(await product({ require_activation: true, max_activations: 1 }));
  expect((await api('PATCH', `/api/v1/licenses/${overridden}`, { max_activations: 2 })).status).toBe(200);
  for (const fingerprint of ['seat-1', 'seat-2'])
    expect((await api('POST', `/api/v1/licenses/${overridden}/activations`, { fingerprint })).status).toBe(201);
  const third = await api('GET', `/api/v1/licenses/validate?license_key=${overridden}&fingerprint=seat-3`);
  expect([third.body.code, third.body.detail]).toEqual(['activation_limit_reached', expect.stringContaining('2 of 2')]);
  const other = client(stack.url, (await stack.newAccount()).apiKey);
  const foreign = await issue((await other('POST', '/api/v1/products', { name: 'Theirs' })).body.id, other);
  const [app, appLimited] = [await issue(plain), await issue(plain)];
  // Subscriptions bought on the hosted test-mode page, of monthly products with grace days.
  const monthlyProduct = async (expiration_strategy = 'restrict') =>
    (
      await api('POST', '/api/v1/products', {
        name: 'Parity Monthly',
        price: { amount: 1000, currency: 'EUR', interval: 'month' },
        policy: { duration_days: 30, grace_days: 5, expiration_strategy },
      })
    ).body.id as string;
  const monthly = await monthlyProduct();
  const subscribe = async (productId = monthly) => {
    const created = await api('POST', '/api/v1/checkout', {
      product_id: productId,
      success_url: 'https://vendor.example/thanks',
    });
    const web = new WebClient(stack.url, stack.topology);
    const page = await web.get(new URL(created.body.url).pathname);
    const paid = await web.post(`/checkout/${created.body.id}/pay`, {
      _csrf: WebClient.csrf(page.html),
      email: 'parity@example.com',
      card: '4242 4242 4242 4242',
    });
    expect(paid.status).toBe(303);
    return (await api('GET', `/api/v1/checkout/${created.body.id}`)).body as {
      subscription_id: string;
      license_key: string;
    };
  };
  const [now, atEnd] = [await subscribe(), await subscribe()];
  const keeping = await subscribe(await monthlyProduct('maintain_access'));
  const revoking = await subscribe(await monthlyProduct('revoke_access'));
  const cancel = (id: string, at_period_end: boolean) =>
    api('POST', `/api/v1/subscriptions/${id}/cancel`, { at_period_end });
  for (const ended of [now, keeping, revoking])
    expect((await cancel(ended.subscription_id, false)).body.status).toBe('canceled');
  const scheduled = await cancel(atEnd.subscription_id, true);
  const ended = await api('POST', `/api/v1/subscriptions/${atEnd.subscription_id}/test_clock`, {
    advance_to: new Date(Date.parse(scheduled.body.current_period_end) + 86_400_000).toISOString(),
  });
  expect(ended.body.status).toBe('canceled');
  const code = async (key: string) =>
    (await api('GET', `/api/v1/licenses/validate?license_key=${encodeURIComponent(key)}`)).body.code;
  await eventually(async () => {
    expect(await code(now.license_key)).toBe('expired');
    expect(await code(atEnd.license_key)).toBe('expired_in_grace');
    expect(await code(keeping.license_key)).toBe('expired');
    expect(await code(revoking.license_key)).toBe('revoked');
  });
  keys = {
    full: apiKey,
    validate,
    limited: limitedAccount.apiKey,
    valid,
    suspended,
    revoked,
    activation,
    foreign,
    entitled,
    overridden,
    app,
    appLimited,
    canceledNow: now.license_key,
    canceledAtEnd: atEnd.license_key,
    keepingExpired: keeping.license_key,
    revokedAtExpiry: revoking.license_key,
  };
});

afterAll(async () => {
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe.each(settings)('the fast path and Express answer alike: $name', (setting) => {
  let fast: RunningGateway;
  let routed: RunningGateway;
  /** Requests the fast path took, on the gateway that has one. */
  let took = 0;

  beforeAll(async () => {
    const env = {
      ...envFor('gateway', stack.topology, { port: 0, addrs: stack.addrs }),
      TRUSTED_PROXIES: '127.0.0.1',
      ...setting.env,
    };
    fast = await startGateway({ env, clock, fastPath: { enabled: true, took: () => void took++ } });
    routed = await startGateway({ env, clock, fastPath: { enabled: false } });
  });

  afterAll(async () => {
    await fast?.stop();
    await routed?.stop();
  });

  const withProxy = (c: Case, sent: Sent): Sent =>
    c.direct ? sent : { ...sent, headers: [...sent.headers, ...setting.proxyHeaders] };

  /** One request to each gateway, at one instant of the clock; whether the fast path took the first. */
  async function pair(sent: Sent): Promise<{ withFastPath: Answer; express: Answer; taken: boolean }> {
    clock.hold();
    try {
      const before = took;
      const withFastPath = await send(fast.url, sent);
      const taken = took > before;
      const express = await send(routed.url, sent);
      return { withFastPath, express, taken };
    } finally {
      clock.release();
    }
  }

  /**
   * The fast path answers only with the API key in its auth cache (trusted for a second, refreshed
   * while in use) and the limits known in memory, both filled by the key's requests through Express:
   * a case meant for it is sent again until it takes it.
   */
  const pairTaken = (sent: Sent) =>
    eventually(
      async () => {
        const result = await pair(sent);
        expect(result.taken).toBe(true);
        return result;
      },
      { timeoutMs: 10_000 },
    );

  it.each(cases.filter((c) => !c.only || c.only === setting.name))('$name', async (c) => {
    const sent = withProxy(c, c.request(keys));
    await c.prepare?.(keys, (first) => send(fast.url, withProxy(c, first)));
    const { withFastPath, express, taken } = c.fast ? await pairTaken(sent) : await pair(sent);
    const method = sent.method ?? 'GET';
    expect(comparable(withFastPath, method)).toEqual(comparable(express, method));
    expect(withFastPath.status).toBe(c.status);
    expect(taken).toBe(c.fast);
  });
});
