import { client, startStack, type Stack } from '../support/stack';

// A browser page on an allowed origin calls the app routes (validation, the licence credential's
// routes) through real CORS; every other route, and every other origin, gets no CORS header at all
// (docs/api.md, "Calls from a browser").

const PAGE = 'https://app.example.com';
let stack: Stack;
let vendor: ReturnType<typeof client>;
let key: string;

beforeAll(async () => {
  stack = await startStack({}, { CORS_ALLOWED_ORIGINS: `${PAGE}, https://other.example.com` });
  const acct = await stack.newAccount();
  vendor = client(stack.url, acct.apiKey);
  const product = (await vendor('POST', '/api/v1/products', { name: 'Web app' })).body.id;
  key = (await vendor('POST', '/api/v1/licenses', { product_id: product, customer_email: 'web@example.com' })).body
    .license_key;
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

/** A raw request (preflights and refusals are not in the OpenAPI document the test client checks against). */
const send = (method: string, path: string, headers: Record<string, string>) =>
  fetch(`${stack.url}${path}`, { method, headers });

const preflight = (path: string, method: string, origin = PAGE) =>
  send('OPTIONS', path, {
    origin,
    'access-control-request-method': method,
    'access-control-request-headers': 'authorization, content-type',
  });

describe('CORS on the app routes', () => {
  it('answers a preflight from an allowed origin with the methods of that path', async () => {
    const res = await preflight(`/api/v1/licenses/${key}/activations`, 'POST');
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(PAGE);
    expect(res.headers.get('access-control-allow-methods')).toBe('GET, POST');
    expect(res.headers.get('access-control-allow-headers')).toMatch(/Authorization/);
    expect(res.headers.get('access-control-max-age')).toBe('600');
    expect(res.headers.get('vary')).toMatch(/Origin/);
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
  });

  it('lets the page read a validation, through the /v1 alias too, with its request id and rate limits', async () => {
    for (const path of [`/api/v1/licenses/validate?license_key=${key}`, `/v1/licenses/validate?license_key=${key}`]) {
      const res = await send('GET', path, { origin: PAGE, authorization: `License ${key}` });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { code: string }).code).toBe('valid');
      expect(res.headers.get('access-control-allow-origin')).toBe(PAGE);
      expect(res.headers.get('access-control-expose-headers')).toMatch(/X-Request-Id.*Retry-After/);
    }
    const post = await fetch(`${stack.url}/api/v1/keys/validate`, {
      method: 'POST',
      headers: {
        origin: 'https://other.example.com',
        authorization: `License ${key}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ key }),
    });
    expect(post.status).toBe(200);
    expect(post.headers.get('access-control-allow-origin')).toBe('https://other.example.com');
  });

  it('lets the page read a refusal too (401 without a credential)', async () => {
    const res = await send('GET', `/api/v1/licenses/validate?license_key=${key}`, { origin: PAGE });
    expect(res.status).toBe(401);
    expect(res.headers.get('access-control-allow-origin')).toBe(PAGE);
  });
});

describe('no CORS anywhere else', () => {
  it('a vendor route (an API key belongs on a server) sends no CORS header, and its preflight is refused', async () => {
    const list = await vendor('GET', '/api/v1/products', undefined, { origin: PAGE });
    expect(list.status).toBe(200);
    expect(list.headers.get('access-control-allow-origin')).toBeNull();
    const refused = await preflight('/api/v1/licenses', 'POST');
    expect(refused.status).toBe(403);
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const body = (await refused.json()) as { code: string; detail: string };
    expect(body.code).toBe('forbidden');
    expect(body.detail).toMatch(/CORS_ALLOWED_ORIGINS/);
  });

  it('an origin not listed gets nothing, on a preflight or a call', async () => {
    const refused = await preflight(`/api/v1/licenses/validate?license_key=${key}`, 'GET', 'https://evil.example.com');
    expect(refused.status).toBe(403);
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
    const res = await send('GET', `/api/v1/licenses/validate?license_key=${key}`, {
      origin: 'https://evil.example.com',
      authorization: `License ${key}`,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('a call without an Origin (a native app) carries no CORS header', async () => {
    const res = await send('GET', `/api/v1/licenses/validate?license_key=${key}`, { authorization: `License ${key}` });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });
});
