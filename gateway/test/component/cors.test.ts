import { client } from '../../../test/support/stack';
import {
  accountHandlers,
  fakeLicence,
  fakeProduct,
  fakeVendor,
  licenseHandlers,
  productHandlers,
} from './fake-service-answers';
import { startGatewayWithFakeServices, type GatewayWithFakeServices } from './gateway-with-fake-services';

// A browser page on an allowed origin calls the app routes (validation, the licence credential's
// routes) through real CORS; every other route, and every other origin, gets no CORS header at all
// (docs/api.md, "Calls from a browser"). The licence and its vendor are what the faked account and
// licence services say they are.

const PAGE = 'https://app.example.com';
const owner = fakeVendor();
const product = fakeProduct(owner, 'Web app');
const licence = fakeLicence(owner, product.id, 'web@example.com');
const key = licence.key;
let h: GatewayWithFakeServices;
let vendor: ReturnType<typeof client>;

beforeAll(async () => {
  h = await startGatewayWithFakeServices({
    settings: { CORS_ALLOWED_ORIGINS: `${PAGE}, https://other.example.com` },
    handlers: {
      account: accountHandlers([owner]),
      license: licenseHandlers([licence]),
      product: productHandlers([product]),
    },
  });
  vendor = client(h.url, owner.apiKey);
});

afterAll(async () => {
  await h?.stop();
});

/** A raw request (preflights and refusals are not in the OpenAPI document the test client checks against). */
const send = (method: string, path: string, headers: Record<string, string>) =>
  fetch(`${h.url}${path}`, { method, headers });

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
    const post = await fetch(`${h.url}/api/v1/keys/validate`, {
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
