import { PAYMENTS_HEALTH } from '@licensing/proto';
import { client } from '../../../test/support/stack';
import { eventually } from '../../../test/support/eventually';
import { accountHandlers, fakeVendor, productHandlers } from './fake-service-answers';
import { startGatewayWithFakeServices, type GatewayWithFakeServices } from './gateway-with-fake-services';
import { expectProblem } from '../../../test/support/problem-json';

// The one error format for everything the gateway refuses itself (bad JSON, media type, size, path,
// method), request ids, and what it says about itself and what is behind it: /api/v1/status, the
// probes, the OpenAPI document, a drain on shutdown and a service that is away.

const vendor = fakeVendor('enterprise');
const fresh = fakeVendor('enterprise');
let h: GatewayWithFakeServices;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  h = await startGatewayWithFakeServices({
    handlers: { account: accountHandlers([vendor, fresh]), product: productHandlers([]) },
  });
  h.fakes.checkout.health.addPart(PAYMENTS_HEALTH, () => true);
  api = client(h.url, vendor.apiKey);
});

afterAll(async () => {
  await h?.stop();
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
    const own = client(h.url, fresh.apiKey);
    expectProblem(
      await own('POST', '/api/v1/products', { name: 'big', description: 'x'.repeat(70 * 1024) }),
      413,
      'payload_too_large',
    );
    expect((await own('GET', '/api/v1/products')).body.data).toEqual([]);
    expect(h.fakes.product.requestsTo('createProduct')).toEqual([]);
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
});

describe('status and unavailable services', () => {
  it('GET /api/v1/status needs a key and reports each service and dependency', async () => {
    expect((await client(h.url)('GET', '/api/v1/status')).status).toBe(401);
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
      payments: 'configured', // the checkout service says it takes payments (its "payments" health)
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
        members: 100,
      },
    });
    expect(res.body.version).toBe(require('../../package.json').version);
  });

  it('/healthz and /readyz answer without a key', async () => {
    expect((await client(h.url)('GET', '/healthz')).body).toEqual({ status: 'ok' });
    const ready = await client(h.url)('GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({
      status: 'ready',
      account_service: { status: 'ok', latency_ms: expect.any(Number) },
      rate_limits: 'redis',
    });
  });

  it('serves its OpenAPI document and reference page without a key', async () => {
    const spec = await client(h.url)('GET', '/openapi.json');
    expect(spec.status).toBe(200);
    expect(spec.body).toMatchObject({
      openapi: '3.1.0',
      info: { version: require('../../package.json').version },
    });
    expect(Object.keys(spec.body.paths)).toEqual(
      expect.arrayContaining(['/api/v1/licenses', '/api/v1/keys/validate', '/healthz']),
    );
    const page = await client(h.url)('GET', '/docs');
    expect(page.status).toBe(200);
    expect(page.body).toContain('<code>/api/v1/keys/validate</code>');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
  });

  it('a gateway shutting down says so on /readyz, keeps serving during its drain delay, then stops accepting', async () => {
    const gw = await h.extraGateway({ SHUTDOWN_DRAIN_DELAY_MS: '1000' });
    const own = client(gw.url, vendor.apiKey);
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
    await api('GET', '/api/v1/products'); // authenticates and caches the key
    await h.stopService('product');
    try {
      const res = await api('GET', '/api/v1/products');
      expectProblem(res, 503, 'service_unavailable');
      expect(res.headers.get('retry-after')).toBe('5');
      // Polled: a probe's first call opens a channel, which on a loaded machine can miss its 1 s deadline.
      await eventually(
        async () => {
          const status = await api('GET', '/api/v1/status');
          expect(status.body).toMatchObject({
            status: 'degraded',
            services: { product: { status: 'down' }, account: { status: 'ok' } },
          });
        },
        { timeoutMs: 10_000, intervalMs: 200 },
      );
    } finally {
      await h.restartService('product');
    }
  });
});
