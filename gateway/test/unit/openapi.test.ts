import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { errorCodes } from '@licensing/runtime';
import { MEMBER_ROLES } from '@licensing/proto';
import { openApiDocument, pathShape } from '../../src/openapi/document';
import { IDEMPOTENT_POSTS } from '../../src/request-shapes/idempotent-posts';
import { everyRoute } from '../../../test/support/routes';
import { referencePage } from '../../src/openapi/reference-page';
import { checkAcceptedRequest, checkResponse, matchPath } from '../../../test/support/openapi';

// The routes the gateway registers and the paths the document describes must
// be the same set: a route added without documentation fails here.
const doc = openApiDocument('1.2.3');
const registeredRoutes = everyRoute();
const toTemplate = (expressPath: string) => `/api/v1${expressPath.replace(/:(\w+)/g, '{$1}')}`;

const product = {
  id: 'prod_01JD8Z3K6Q2W4E5R6T7Y8V9X0P',
  name: 'App',
  description: null,
  policy: {
    duration_days: null,
    max_activations: 3,
    grace_days: 0,
    require_activation: false,
    validate_keys_see_email: false,
    refund_action: 'revoke',
    lease_seconds: null,
    customer_deactivations_per_30_days: 3,
    entitlements: [],
    payment_grace_days: 7,
    max_file_ttl_days: 30,
    expiration_strategy: 'restrict',
  },
  price: null,
  email_on_purchase: true,
  created_at: '2026-11-22T10:00:00.000Z',
  archived_at: null,
};

describe('OpenAPI document', () => {
  it('documents every registered route and method, and nothing that is not registered', () => {
    const registered = [...registeredRoutes]
      .flatMap(([path, methods]) => [...methods.keys()].map((m) => `${m.toUpperCase()} ${toTemplate(path)}`))
      .sort();
    const documented = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith('/api/v1/'))
      .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`))
      .sort();
    expect(registered.length).toBeGreaterThan(30);
    expect(documented).toEqual(registered);
  });

  it('names the role every registered operation needs (x-required-role), the one its route enforces, and documents the 403 of a role above read_only', () => {
    const enforced = [...registeredRoutes].flatMap(([path, methods]) =>
      [...methods].map(([m, shapes]) => [`${m.toUpperCase()} ${toTemplate(path)}`, shapes.role]),
    );
    const named = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith('/api/v1/'))
      .flatMap(([path, ops]) =>
        Object.entries(ops as Record<string, { 'x-required-role'?: string; responses: Record<string, unknown> }>).map(
          ([m, op]) => {
            if (op['x-required-role'] !== 'read_only')
              expect([`${m} ${path}`, op.responses['403']]).toEqual([`${m} ${path}`, expect.anything()]);
            return [`${m.toUpperCase()} ${path}`, op['x-required-role']];
          },
        ),
      );
    expect(enforced.every(([, role]) => MEMBER_ROLES.includes(role as never))).toBe(true);
    expect(Object.fromEntries(named)).toEqual(Object.fromEntries(enforced));
  });

  it('is OpenAPI 3.1 whose every schema compiles as JSON Schema 2020-12', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.2.3');
    const ajv = new Ajv2020({ strict: false });
    addFormats(ajv);
    const root = JSON.parse(
      JSON.stringify({ $id: 'api', components: doc.components }).replaceAll('"#/components/', '"api#/components/'),
    );
    ajv.addSchema(root);
    for (const name of Object.keys(doc.components.schemas))
      expect(() => ajv.getSchema(`api#/components/schemas/${name}`)).not.toThrow();
    const ids = Object.values(doc.paths).flatMap((ops) =>
      Object.values(ops).map((o) => (o as { operationId: string }).operationId),
    );
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('every POST that honours Idempotency-Key declares the header and the Idempotent-Replayed answer header', () => {
    const posts = new Map(
      Object.entries(doc.paths as Record<string, Record<string, Record<string, any>>>)
        .filter(([, ops]) => ops.post)
        .map(([path, ops]) => [pathShape(path), ops.post]),
    );
    expect(IDEMPOTENT_POSTS.length).toBeGreaterThan(15);
    for (const template of IDEMPOTENT_POSTS) {
      const post = posts.get(pathShape(`/api/v1${template}`));
      expect([template, post !== undefined]).toEqual([template, true]);
      const header = (post!.parameters ?? []).find((p: { in: string; name: string }) => p.in === 'header');
      expect([template, header?.name, header?.required]).toEqual([template, 'Idempotency-Key', false]);
      const ok = Object.entries(post!.responses as Record<string, { headers?: Record<string, unknown> }>).filter(
        ([status]) => status.startsWith('2'),
      );
      expect(ok.length).toBeGreaterThan(0);
      for (const [status, r] of ok)
        expect([template, status, r.headers?.['Idempotent-Replayed']]).toEqual([
          template,
          status,
          { $ref: '#/components/headers/IdempotentReplayed' },
        ]);
    }
    expect(doc.components.headers.IdempotentReplayed.schema).toEqual({ type: 'string', const: 'true' });
  });

  it('the reference page shows every operation and an anchor for every error code', () => {
    const html = referencePage(doc);
    for (const [path, ops] of Object.entries(doc.paths))
      for (const m of Object.keys(ops)) expect(html).toContain(`${m.toUpperCase()}</span> <code>${path}</code>`);
    for (const code of errorCodes) expect(html).toContain(`id="error-${code}"`);
    expect(html).not.toContain('<script');
  });
});

describe('response checking against the document', () => {
  it('accepts a response that matches, on both /api/v1 and /v1', () => {
    expect(() =>
      checkResponse(
        'GET',
        '/api/v1/products/prod_01JD8Z3K6Q2W4E5R6T7Y8V9X0P',
        200,
        'application/json; charset=utf-8',
        product,
      ),
    ).not.toThrow();
    expect(() =>
      checkResponse('GET', '/v1/products/prod_01JD8Z3K6Q2W4E5R6T7Y8V9X0P', 200, 'application/json', product),
    ).not.toThrow();
    expect(matchPath('/api/v1/licenses/validate?license_key=x')).toBe('/api/v1/licenses/validate');
    expect(matchPath('/api/v1/licenses/ABCDE-12345')).toBe('/api/v1/licenses/{key}');
  });

  it('refuses a missing field, an extra field, a wrong type and a wrong content type', () => {
    const { price: _p, ...missing } = product;
    expect(() => checkResponse('GET', '/api/v1/products/x', 200, 'application/json', missing)).toThrow(/price/);
    expect(() =>
      checkResponse('GET', '/api/v1/products/x', 200, 'application/json', { ...product, secret_field: 1 }),
    ).toThrow(/additional/);
    expect(() =>
      checkResponse('GET', '/api/v1/products/x', 200, 'application/json', { ...product, created_at: 12 }),
    ).toThrow(/created_at/);
    expect(() => checkResponse('GET', '/api/v1/products/x', 200, 'text/html', product)).toThrow(/content type/);
  });

  it('refuses an undocumented path, method or success status, and checks error bodies', () => {
    expect(() => checkResponse('GET', '/api/v1/coupons', 200, 'application/json', {})).toThrow(
      /not in the OpenAPI document/,
    );
    expect(() => checkResponse('PUT', '/api/v1/products', 200, 'application/json', {})).toThrow(
      /not in the OpenAPI document/,
    );
    expect(() => checkResponse('GET', '/api/v1/products', 201, 'application/json', {})).toThrow(/not documented/);
    const problem = {
      type: '/docs#error-not_found',
      title: 'Not Found',
      status: 404,
      detail: 'product not found',
      code: 'not_found',
      request_id: 'req_1',
    };
    expect(() => checkResponse('GET', '/api/v1/coupons', 404, 'application/problem+json', problem)).not.toThrow();
    expect(() =>
      checkResponse('PUT', '/api/v1/products', 405, 'application/problem+json', {
        ...problem,
        status: 405,
        code: 'method_not_allowed',
      }),
    ).not.toThrow();
    expect(() => checkResponse('GET', '/api/v1/products/x', 404, 'application/json', problem)).toThrow(/problem\+json/);
    expect(() =>
      checkResponse('GET', '/api/v1/products/x', 404, 'application/problem+json', { ...problem, code: 'nope' }),
    ).toThrow(/code/);
  });
});

describe('accepted requests against the document', () => {
  it('a 2xx for a body or query parameter the document does not allow is drift', () => {
    expect(() => checkAcceptedRequest('POST', '/api/v1/products', 201, { name: 'A' })).not.toThrow();
    expect(() => checkAcceptedRequest('POST', '/api/v1/products', 201, { name: 'A', colour: 'red' })).toThrow(
      /accepted a body its document refuses/,
    );
    expect(() => checkAcceptedRequest('POST', '/api/v1/products', 201, {})).toThrow(/name/);
    expect(() => checkAcceptedRequest('GET', '/api/v1/licenses?limit=5&status=active', 200, undefined)).not.toThrow();
    expect(() => checkAcceptedRequest('GET', '/api/v1/licenses?sort=asc', 200, undefined)).toThrow(
      /query parameter "sort"/,
    );
    expect(() => checkAcceptedRequest('POST', '/api/v1/licenses/K/suspend', 200, {})).not.toThrow();
    expect(() => checkAcceptedRequest('POST', '/api/v1/licenses/K/suspend', 200, { reason: 'x' })).toThrow(
      /documents none/,
    );
    // Refusals are not drift: the document need not allow what the server refused.
    expect(() => checkAcceptedRequest('POST', '/api/v1/products', 400, { colour: 'red' })).not.toThrow();
  });
});
