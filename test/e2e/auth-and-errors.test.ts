import { randomBytes } from 'node:crypto';
import { client, startStack, type Stack } from '../support/stack';
import { eventually } from '../support/eventually';
import { WebClient } from '../support/web-client';

let stack: Stack;
let apiKey: string;
let accountId: string;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  stack = await startStack();
  ({ apiKey, accountId } = await stack.newAccount());
  api = client(stack.url, apiKey);
});

afterAll(async () => {
  await stack?.stop();
});

function expectProblem(res: { status: number; headers: Headers; body: any }, status: number, code: string) {
  expect({ status: res.status, code: res.body?.code }).toEqual({ status, code });
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body).toEqual(
    expect.objectContaining({
      type: expect.any(String),
      title: expect.any(String),
      status,
      detail: expect.any(String),
      code,
      request_id: res.headers.get('x-request-id'),
    }),
  );
  expect(JSON.stringify(res.body)).not.toMatch(/at .*\.(ts|js):\d+/); // never a stack trace
}

describe('authentication', () => {
  it('without Authorization: 401 with WWW-Authenticate: Bearer', async () => {
    const res = await client(stack.url)('GET', '/api/v1/products');
    expectProblem(res, 401, 'unauthorized');
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });

  it.each([
    ['Basic dXNlcjpwYXNz'],
    ['Bearer'],
    ['Bearer '],
    ['Bearer a b'],
    [`Bearer ${'x'.repeat(300)}`],
    ['token abc'],
  ])('malformed header %p: 401', async (header) => {
    const res = await client(stack.url)('GET', '/api/v1/products', undefined, { authorization: header });
    expectProblem(res, 401, 'unauthorized');
  });

  it('an unknown key of the right shape, and a key with a broken checksum: 401', async () => {
    const other = await stack.admin.createApiKey({ account_id: accountId, scope: 'full', name: 'tmp' });
    // Same shape, different body: fails the checksum before any look-up.
    const mangled = other.secret.slice(0, 10) + (other.secret[10] === 'a' ? 'b' : 'a') + other.secret.slice(11);
    expectProblem(await client(stack.url, mangled)('GET', '/api/v1/products'), 401, 'unauthorized');
    expectProblem(await client(stack.url, 'lk_full_notarealkey')('GET', '/api/v1/products'), 401, 'unauthorized');
    // A well-formed key issued under another server secret is unknown here.
    const foreign = await startStack();
    try {
      const foreignKey = (await foreign.newAccount()).apiKey;
      expectProblem(await client(stack.url, foreignKey)('GET', '/api/v1/products'), 401, 'unauthorized');
    } finally {
      await foreign.stop();
    }
  });

  it('a revoked key stops working within 1 s, although it was cached', async () => {
    const { secret, api_key: key } = await stack.admin.createApiKey({
      account_id: accountId,
      scope: 'full',
      name: 'to-revoke',
    });
    const doomed = client(stack.url, secret);
    expect((await doomed('GET', '/api/v1/products')).status).toBe(200); // now cached by the gateway
    expect((await doomed('GET', '/api/v1/products')).status).toBe(200);
    const revoked = await stack.admin.revokeApiKey({ account_id: accountId, key_id: key!.id });
    expect(revoked.revoked_at).not.toBe('');
    // Polled for at most 1 s: the promise is "within a second", even with the revocation event late.
    await eventually(async () => expect((await doomed('GET', '/api/v1/products')).status).toBe(401), {
      timeoutMs: 1000,
    });
    expect((await api('GET', '/api/v1/products')).status).toBe(200); // other keys unaffected
  });

  it('lists API keys by prefix only and never returns a secret or digest', async () => {
    const out = await stack.admin.listApiKeys({ account_id: accountId, page: { limit: 100, starting_after: '' } });
    expect(out.data.length).toBeGreaterThan(0);
    for (const k of out.data) {
      expect(k.prefix).toMatch(/^lk_(full|val)_[0-9A-Za-z]{4}$/);
      expect(JSON.stringify(k)).not.toMatch(/lk_(full|val)_[0-9A-Za-z]{20,}/);
    }
  });
});

describe('the error format', () => {
  it('invalid JSON: 400', async () => {
    expectProblem(await api('POST', '/api/v1/products', '{"name": "x",'), 400, 'invalid_request');
  });

  it('a non-JSON content type: 415', async () => {
    expectProblem(
      await api('POST', '/api/v1/products', 'name=x', { 'content-type': 'application/x-www-form-urlencoded' }),
      415,
      'unsupported_media_type',
    );
    expectProblem(
      await api('POST', '/api/v1/products', 'name', { 'content-type': 'text/plain' }),
      415,
      'unsupported_media_type',
    );
  });

  it('a body over the limit (64 KiB): 413, nothing written', async () => {
    const fresh = await stack.newAccount();
    const own = client(stack.url, fresh.apiKey);
    expectProblem(
      await own('POST', '/api/v1/products', { name: 'big', description: 'x'.repeat(70 * 1024) }),
      413,
      'payload_too_large',
    );
    expect((await own('GET', '/api/v1/products')).body.data).toEqual([]);
  });

  it('an unknown path: 404 problem, also outside /api and with the /v1 alias', async () => {
    expectProblem(await api('GET', '/api/v1/nothing-here'), 404, 'not_found');
    expectProblem(await api('GET', '/v1/nothing-here'), 404, 'not_found');
    expectProblem(await api('GET', '/'), 404, 'not_found');
    expectProblem(await api('GET', '/api/v2/products'), 404, 'not_found');
  });

  it('a wrong method on a known path: 405 with Allow', async () => {
    const res = await api('DELETE', '/api/v1/products');
    expectProblem(res, 405, 'method_not_allowed');
    expect(res.headers.get('allow')).toBe('GET, POST');
    expectProblem(await api('PUT', '/api/v1/keys/validate', { key: 'x' }), 405, 'method_not_allowed');
  });

  it('echoes a sane X-Request-Id and replaces an insane one', async () => {
    const echoed = await api('GET', '/api/v1/products', undefined, { 'x-request-id': 'client-abc.123' });
    expect(echoed.headers.get('x-request-id')).toBe('client-abc.123');
    const replaced = await api('GET', '/api/v1/products', undefined, { 'x-request-id': 'bad id with spaces' });
    expect(replaced.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{24}$/);
  });

  it('the gRPC services refuse calls without the internal credential', async () => {
    const { createClient } = await import('@licensing/runtime');
    const { AccountServiceClient } = await import('@licensing/proto');
    const intruder = createClient(AccountServiceClient, stack.addrs.account, {
      caller: 'gateway',
      token: 'wrong-token',
    });
    await expect(intruder.call.createAccount({ name: 'x', plan: 'free' })).rejects.toMatchObject({
      code: 'unauthorized',
    });
    intruder.close();
  });
});

describe('status and unavailable services', () => {
  it('GET /api/v1/status needs a key and reports each service and dependency', async () => {
    expect((await client(stack.url)('GET', '/api/v1/status')).status).toBe(401);
    const res = await api('GET', '/api/v1/status');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'ok',
      version: expect.any(String),
      time: expect.any(String),
      services: {
        account: { status: 'ok', latency_ms: expect.any(Number) },
        product: { status: 'ok', latency_ms: expect.any(Number) },
        license: { status: 'ok', latency_ms: expect.any(Number) },
        checkout: { status: 'ok', latency_ms: expect.any(Number) },
        webhook: { status: 'ok', latency_ms: expect.any(Number) },
        notification: { status: 'ok', latency_ms: expect.any(Number) },
      },
      dependencies: {
        mongodb: { status: 'ok', latency_ms: expect.any(Number) },
        nats: { status: 'ok', latency_ms: expect.any(Number) },
        redis: { status: 'ok', latency_ms: expect.any(Number) },
      },
      payments: 'configured', // the built-in test mode takes "payments"
      // The caller's budgets (an enterprise account here).
      rate_limits: {
        plan: 'enterprise',
        hourly_quota: 10_000,
        hourly_app_allowance: 100_000,
        per_key_per_minute: 100,
        per_license_per_minute: 60,
        mail_per_hour: 10_000,
        mail_per_day: 100_000,
        per_validate_key_per_minute: 5000,
        heartbeats_per_activation_per_minute: 10,
        unknown_per_credential_address_per_minute: 30,
      },
      // The account's bounds on bulk work (the same on every plan).
      account_limits: {
        imports_at_once: 1,
        exports_at_once: 1,
        products: 1000,
        import_header_columns: 256,
        import_refused_keys: 20,
      },
    });
    expect(res.body.version).toBe(require('../../gateway/package.json').version);
  });

  it('/healthz and /readyz answer without a key', async () => {
    expect((await client(stack.url)('GET', '/healthz')).body).toEqual({ status: 'ok' });
    const ready = await client(stack.url)('GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({
      status: 'ready',
      account_service: { status: 'ok', latency_ms: expect.any(Number) },
      rate_limits: 'redis',
    });
  });

  it('serves its OpenAPI document and reference page without a key', async () => {
    const spec = await client(stack.url)('GET', '/openapi.json');
    expect(spec.status).toBe(200);
    expect(spec.body).toMatchObject({
      openapi: '3.1.0',
      info: { version: require('../../gateway/package.json').version },
    });
    expect(Object.keys(spec.body.paths)).toEqual(
      expect.arrayContaining(['/api/v1/licenses', '/api/v1/keys/validate', '/healthz']),
    );
    const page = await client(stack.url)('GET', '/docs');
    expect(page.status).toBe(200);
    expect(page.body).toContain('<code>/api/v1/keys/validate</code>');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
  });

  it('a gateway shutting down says so on /readyz, keeps serving during its drain delay, then stops accepting', async () => {
    const gw = await stack.extraGateway({ SHUTDOWN_DRAIN_DELAY_MS: '1000' });
    const own = client(gw.url, (await stack.newAccount()).apiKey);
    expect((await own('GET', '/readyz')).status).toBe(200);
    const stopping = gw.stop();
    const ready = await own('GET', '/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({ status: 'shutting_down', account_service: { status: 'ok' } });
    expect((await own('GET', '/api/v1/products')).status).toBe(200); // load balancers are still catching up
    await stopping;
    await expect(fetch(`${gw.url}/healthz`)).rejects.toThrow();
  });

  it('a service that is down gives 503 with Retry-After, and status says degraded', async () => {
    const s = await startStack();
    try {
      const own = client(s.url, (await s.newAccount()).apiKey);
      await own('GET', '/api/v1/products'); // authenticates and caches the key
      const web = new WebClient(s.url, s.topology);
      await web.signUp(`owner-${randomBytes(4).toString('hex')}@example.com`);
      await s.stopService('product');
      const res = await own('GET', '/api/v1/products');
      expectProblem(res, 503, 'service_unavailable');
      expect(res.headers.get('retry-after')).toBe('5');
      // The dashboard's page says so too, with the same Retry-After.
      const page = await web.get('/dashboard/products');
      expect(page.status).toBe(503);
      expect(page.headers.get('retry-after')).toBe('5');
      const status = await own('GET', '/api/v1/status');
      expect(status.body).toMatchObject({
        status: 'degraded',
        services: { product: { status: 'down' }, account: { status: 'ok' } },
      });
    } finally {
      await s.stop();
    }
  });
});
