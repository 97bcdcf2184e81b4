import { LicensingClient, LicensingError } from '@licensing/client';
import { Transport, type TransportOptions } from '../../src/http';
import { Licenses } from '../../src/resources/licenses';
import { backoffDelayMs, parseRetryAfter, retryDelayMs } from '../../src/retry';
import { fakeFetch, json, problem, type Outcome } from '../../../../test/support/fake-fetch';

// The SDK's request policy against a scripted fetch: what is retried, how long
// it waits (recorded, not slept), and which Idempotency-Key goes with it.

function transport(plan: Outcome[], options: Partial<TransportOptions> = {}) {
  const fake = fakeFetch(...plan);
  const waits: number[] = [];
  const http = new Transport({
    baseUrl: 'https://api.example.test/',
    apiKey: 'lk_full_test',
    fetch: fake.fetch,
    timeoutMs: 5_000,
    maxRetries: 2,
    maxRetryDelayMs: 60_000,
    sleep: async (ms) => {
      waits.push(ms);
    },
    random: () => 0.5,
    ...options,
  });
  return { http, calls: fake.calls, waits };
}

const license = {
  id: 'lic_1',
  key: 'K',
  product_id: 'prod_1',
  customer_email: 'a@example.com',
  status: 'active',
  expires_at: null,
  policy: {},
  activations: 0,
  metadata: {},
  created_at: '2026-01-01T00:00:00Z',
};
const created = { success: true, license_key: 'K', license };
const get = { method: 'GET', path: '/api/v1/products/prod_1', idempotent: true } as const;

describe('retry policy', () => {
  it('reads Retry-After as seconds or as an HTTP date, and ignores garbage', () => {
    const now = Date.parse('2026-11-23T10:00:00Z');
    expect(parseRetryAfter('7', now)).toBe(7);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('Mon, 23 Nov 2026 10:00:30 GMT', now)).toBe(30);
    expect(parseRetryAfter('Mon, 23 Nov 2026 09:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter('-3', now)).toBeNull();
    expect(parseRetryAfter(null, now)).toBeNull();
  });

  it('backs off exponentially with jitter between half and all of the step, capped', () => {
    const options = { baseMs: 100, maxMs: 1_000 };
    expect([0, 1, 2, 3, 4, 10].map((a) => backoffDelayMs(a, options, () => 0))).toEqual([50, 100, 200, 400, 500, 500]);
    expect([0, 1, 2, 3, 4, 10].map((a) => backoffDelayMs(a, options, () => 1))).toEqual([
      100, 200, 400, 800, 1000, 1000,
    ]);
    expect(retryDelayMs(0, 3, options)).toBe(3_000);
  });
});

describe('Transport', () => {
  it('when rate limited, waits exactly what Retry-After says and then succeeds', async () => {
    const { http, calls, waits } = transport([
      problem(429, 'rate_limited', 'slow down', {}, { 'retry-after': '2' }),
      json(200, { id: 'prod_1' }),
    ]);
    await expect(http.request(get)).resolves.toEqual({ id: 'prod_1' });
    expect(calls).toHaveLength(2);
    expect(waits).toEqual([2_000]);
  });

  it('retries 503 with growing back-off up to maxRetries, then throws the last error', async () => {
    const down = problem(503, 'service_unavailable', 'the licence service is unavailable');
    const { http, calls, waits } = transport([down, down, down, json(200, {})], {
      backoff: { baseMs: 100, maxMs: 10_000 },
    });
    const err = await http.request(get).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LicensingError);
    expect(err).toMatchObject({
      status: 503,
      code: 'service_unavailable',
      detail: 'the licence service is unavailable',
    });
    expect(calls).toHaveLength(3);
    expect(waits).toEqual([75, 150]);
  });

  it.each([400, 401, 403, 404, 405, 409, 413, 415, 422, 500])('never retries a %i', async (status) => {
    const { http, calls } = transport([problem(status, 'some_code', 'no'), json(200, {})]);
    await expect(http.request(get)).rejects.toMatchObject({ status, code: 'some_code' });
    expect(calls).toHaveLength(1);
  });

  it('builds the error from problem+json: status, code, detail, requestId and field errors', async () => {
    const errors = [{ field: 'customer_email', message: 'customer_email must be a valid e-mail address' }];
    const { http } = transport([
      problem(400, 'invalid_request', 'customer_email must be a valid e-mail address', {
        errors,
        request_id: 'req_42',
      }),
    ]);
    const err = (await http.request(get).catch((e: unknown) => e)) as LicensingError;
    expect(err).toMatchObject({
      name: 'LicensingError',
      status: 400,
      code: 'invalid_request',
      requestId: 'req_42',
      errors,
      type: '/docs#error-invalid_request',
    });
    expect(err.message).toBe('400 invalid_request: customer_email must be a valid e-mail address');
  });

  it('gives an error a code even when a proxy answers without problem details', async () => {
    const { http } = transport(
      [
        {
          status: 502,
          body: '<html>bad gateway</html>',
          headers: { 'content-type': 'text/html', 'x-request-id': 'req_p' },
        },
      ],
      { maxRetries: 0 },
    );
    await expect(http.request(get)).rejects.toMatchObject({
      status: 502,
      code: 'service_unavailable',
      requestId: 'req_p',
    });
  });

  it('does not wait for a Retry-After longer than maxRetryDelayMs: it throws at once with retryAfterS', async () => {
    const { http, calls, waits } = transport(
      [problem(429, 'rate_limited', 'hourly limit', {}, { 'retry-after': '1800' })],
      { maxRetryDelayMs: 60_000 },
    );
    await expect(http.request(get)).rejects.toMatchObject({ status: 429, retryAfterS: 1800 });
    expect(calls).toHaveLength(1);
    expect(waits).toEqual([]);
  });

  it('retries a read after a network error, but not a state change that may have happened', async () => {
    const reset = new TypeError('fetch failed');
    const read = transport([reset, json(200, { ok: true })]);
    await expect(read.http.request(get)).resolves.toEqual({ ok: true });
    expect(read.calls).toHaveLength(2);

    const write = transport([reset, json(200, license)]);
    await expect(new Licenses(write.http).suspend('K')).rejects.toMatchObject({
      status: 0,
      code: 'network_error',
      detail: 'fetch failed',
    });
    expect(write.calls).toHaveLength(1);
  });

  it('retries a state change after 429 (refused before any work was done)', async () => {
    const { http, calls } = transport([
      problem(429, 'rate_limited', 'x', {}, { 'retry-after': '0' }),
      json(200, license),
    ]);
    await expect(new Licenses(http).revoke('K')).resolves.toEqual(license);
    expect(calls.map((c) => c.url)).toEqual([
      'https://api.example.test/api/v1/licenses/K/revoke',
      'https://api.example.test/api/v1/licenses/K/revoke',
    ]);
  });

  it('gives up on an attempt after timeoutMs (code timeout) and tries again', async () => {
    const { http, calls } = transport(['hang', json(200, { ok: true })], { timeoutMs: 20 });
    await expect(http.request(get)).resolves.toEqual({ ok: true });
    expect(calls).toHaveLength(2);
    const once = transport(['hang'], { timeoutMs: 20, maxRetries: 0 });
    await expect(once.http.request(get)).rejects.toMatchObject({
      status: 0,
      code: 'timeout',
      detail: 'no answer within 20 ms',
    });
  });

  it('sends the key as a bearer token, JSON with a content type, and nothing else unasked', async () => {
    const { http, calls } = transport([json(201, created)]);
    await new Licenses(http).create({ product_id: 'prod_1', customer_email: 'a@example.com' });
    expect(calls[0]).toMatchObject({
      method: 'POST',
      url: 'https://api.example.test/api/v1/licenses',
      body: '{"product_id":"prod_1","customer_email":"a@example.com"}',
    });
    expect(calls[0].headers).toMatchObject({
      authorization: 'Bearer lk_full_test',
      'content-type': 'application/json',
      accept: 'application/json',
    });
  });
});

describe('Idempotency-Key on creates', () => {
  it('makes one itself and sends the same one on every retry, so a lost answer never issues twice', async () => {
    const { http, calls } = transport([
      new TypeError('fetch failed'),
      problem(503, 'service_unavailable', 'x', {}, { 'retry-after': '0' }),
      json(201, created),
    ]);
    await expect(new Licenses(http).create({ product_id: 'prod_1', customer_email: 'a@example.com' })).resolves.toEqual(
      created,
    );
    const keys = calls.map((c) => c.headers['idempotency-key']);
    expect(keys).toHaveLength(3);
    expect(keys[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(keys).size).toBe(1);
  });

  it("uses the caller's key, a new one per call otherwise, and refuses a malformed one", async () => {
    const { http, calls } = transport([json(201, created)]);
    const licenses = new Licenses(http);
    await licenses.create({ product_id: 'prod_1', customer_email: 'a@example.com' }, { idempotencyKey: 'order-1234' });
    await licenses.create({ product_id: 'prod_1', customer_email: 'a@example.com' });
    await licenses.create({ product_id: 'prod_1', customer_email: 'a@example.com' });
    expect(calls[0].headers['idempotency-key']).toBe('order-1234');
    expect(calls[1].headers['idempotency-key']).not.toBe(calls[2].headers['idempotency-key']);
    await expect(
      licenses.create({ product_id: 'p', customer_email: 'a@example.com' }, { idempotencyKey: 'has space' }),
    ).rejects.toThrow('idempotencyKey must be 1–255 printable ASCII characters');
    expect(calls).toHaveLength(3);
  });
});

describe('LicensingClient', () => {
  it('refuses bad options with a message that says what is expected', () => {
    const ok = { baseUrl: 'https://api.example.test', apiKey: 'lk_full_x' };
    expect(() => new LicensingClient({ ...ok, baseUrl: 'api.example.test' })).toThrow(
      'baseUrl must be an absolute URL',
    );
    expect(() => new LicensingClient({ ...ok, baseUrl: 'ftp://api.example.test' })).toThrow('baseUrl must be http(s)');
    expect(() => new LicensingClient({ ...ok, apiKey: '' })).toThrow('apiKey must be a non-empty string');
    expect(() => new LicensingClient({ ...ok, maxRetries: -1 })).toThrow('maxRetries must be a whole number');
    expect(() => new LicensingClient({ ...ok, timeoutMs: 0 })).toThrow('timeoutMs must be a positive number');
    expect(() => new LicensingClient(undefined as never)).toThrow('LicensingClient needs options');
  });

  it('validates with POST /api/v1/keys/validate, the key in the body (never the URL), productId as product_id', async () => {
    const fake = fakeFetch(json(200, { valid: true, code: 'valid' }));
    const client = new LicensingClient({
      baseUrl: 'https://api.example.test/base/',
      apiKey: 'lk_val_x',
      fetch: fake.fetch,
    });
    await expect(client.licenses.validate('7K3QF-9XW2M', { productId: 'prod_1', fingerprint: 'box' })).resolves.toEqual(
      { valid: true, code: 'valid' },
    );
    expect(fake.calls[0]).toMatchObject({ method: 'POST', url: 'https://api.example.test/base/api/v1/keys/validate' });
    expect(JSON.parse(fake.calls[0].body!)).toEqual({ key: '7K3QF-9XW2M', product_id: 'prod_1', fingerprint: 'box' });
    await expect(client.licenses.validate('  ')).rejects.toThrow(new TypeError('key must be a non-empty string'));
  });

  it('encodes ids in paths, so an id cannot reach another endpoint', async () => {
    const fake = fakeFetch(json(200, {}));
    const client = new LicensingClient({ baseUrl: 'https://api.example.test', apiKey: 'k', fetch: fake.fetch });
    await client.products.get('../licenses?x=1');
    expect(fake.calls[0].url).toBe('https://api.example.test/api/v1/products/..%2Flicenses%3Fx%3D1');
    await expect(client.licenses.deactivate('K', '')).rejects.toThrow(
      new TypeError('activation id must be a non-empty string, got an empty string'),
    );
    expect(fake.calls).toHaveLength(1);
  });

  it('retries by default twice, and not at all with maxRetries: 0', async () => {
    const limited = problem(429, 'rate_limited', 'x', {}, { 'retry-after': '0' });
    const twice = fakeFetch(limited);
    await expect(
      new LicensingClient({ baseUrl: 'https://a.test', apiKey: 'k', fetch: twice.fetch }).status(),
    ).rejects.toMatchObject({ status: 429 });
    expect(twice.calls).toHaveLength(3);
    const never = fakeFetch(limited);
    await expect(
      new LicensingClient({ baseUrl: 'https://a.test', apiKey: 'k', fetch: never.fetch, maxRetries: 0 }).status(),
    ).rejects.toMatchObject({ status: 429 });
    expect(never.calls).toHaveLength(1);
  });
});
