import { MAX_LICENSE_KEY_LENGTH } from '@licensing/proto';
import { pageShape } from '../request-shapes/shapes';
import { IDEMPOTENT_POSTS } from '../request-shapes/idempotent-posts';
import type { RequestBodyName } from './request-schemas';
import { ref } from './schemas';
import { queryParameters } from './shape-schema';

// How one operation of the OpenAPI document is written (op()), the parts many operations share
// (path parameters, rate-limit headers, the problem answer) and the Idempotency-Key declaration.

export type Schema = Record<string, unknown>;
export type Op = Record<string, unknown>;

export const json = (schema: Schema) => ({ 'application/json': { schema } });
export const problem = {
  description: 'Error (see Errors)',
  content: { 'application/problem+json': { schema: ref('Problem') } },
};
export const rateLimitHeaders = {
  RateLimit: { $ref: '#/components/headers/RateLimit' },
  'RateLimit-Policy': { $ref: '#/components/headers/RateLimitPolicy' },
  'X-Request-Id': { $ref: '#/components/headers/RequestId' },
};

export const pathParam = (name: string, description: string, schema: Schema = { type: 'string', maxLength: 80 }) => ({
  name,
  in: 'path',
  required: true,
  description,
  schema,
});
export const pageParams = queryParameters(pageShape);
export const idempotencyHeader = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description: 'Retry safely: the same key and body return the first answer for 24 h',
  schema: { type: 'string', minLength: 1, maxLength: 255 },
};

/** A path with its parameters' names left out: `/api/v1/licenses/{key}` and `/licenses/:key` alike. */
export const pathShape = (path: string) => path.replace(/\{[^}]+\}|:[a-z]+/g, '*');
const idempotentPosts = new Set(IDEMPOTENT_POSTS.map((template) => pathShape(`/api/v1${template}`)));

/**
 * Every POST the gateway honours Idempotency-Key on (routes/idempotency-keys.ts, the one list) declares
 * the header, and that a successful answer may be a replay (`Idempotent-Replayed: true`).
 */
export function withIdempotency(all: Record<string, Record<string, Op>>): Record<string, Record<string, Op>> {
  const declared = (post: Op): Op => {
    const parameters = (post.parameters as unknown[] | undefined) ?? [];
    const responses = Object.fromEntries(
      Object.entries(post.responses as Record<string, Record<string, unknown>>).map(([status, r]) => [
        status,
        status.startsWith('2')
          ? {
              ...r,
              headers: {
                ...(r.headers as object),
                'Idempotent-Replayed': { $ref: '#/components/headers/IdempotentReplayed' },
              },
            }
          : r,
      ]),
    );
    return {
      ...post,
      parameters: parameters.includes(idempotencyHeader) ? parameters : [...parameters, idempotencyHeader],
      responses,
    };
  };
  return Object.fromEntries(
    Object.entries(all).map(([path, ops]) => [
      path,
      ops.post && idempotentPosts.has(pathShape(path)) ? { ...ops, post: declared(ops.post) } : ops,
    ]),
  );
}

export interface OpSpec {
  summary: string;
  tag: string;
  description?: string;
  params?: unknown[];
  body?: RequestBodyName;
  /** A body that is not JSON (an import's file): its media types. */
  rawBody?: Record<string, Schema>;
  ok: Record<number, { description: string; schema?: Schema; media?: string }>;
  /** validate-scope keys may call it (else full keys only). */
  validateScope?: boolean;
  /**
   * An app route (auth/app-routes.ts): validate-scope keys may call it for any licence of their
   * account, and a `License` credential for its own licence (and product) only.
   */
  app?: boolean;
}

/** The answers app credentials get that full keys never do, on the routes they may call. */
export const appResponses = {
  401: {
    ...problem,
    description:
      'No credential, a malformed one, an unknown API key; or a `License` credential whose licence is revoked, suspended or unknown (on the validation routes it still gets the validation answer instead)',
  },
  404: {
    ...problem,
    description:
      'Not found; with a `License` credential also any licence (path, query or body) or product other than its own, as if it did not exist',
  },
  429: {
    ...problem,
    description:
      'A budget is spent (Retry-After says when to retry; RateLimit names it): for app traffic "license_minute" (per licence) or "app_hour" (per account), never the full keys\' quota',
  },
};
/** What an app credential gets on every other route. */
export const notForApps = {
  403: {
    ...problem,
    description:
      'Full-scope API keys only: a validate-scope key or a `License` credential is refused, the detail naming what it may do',
  },
};

export function op(id: string, spec: OpSpec): Op {
  const responses: Record<string, unknown> = {};
  for (const [status, r] of Object.entries(spec.ok)) {
    responses[status] = r.schema
      ? {
          description: r.description,
          headers: rateLimitHeaders,
          content: r.media ? { [r.media]: { schema: r.schema } } : json(r.schema),
        }
      : { description: r.description, headers: rateLimitHeaders };
  }
  Object.assign(responses, spec.app ? appResponses : spec.validateScope ? {} : notForApps);
  responses.default = problem;
  return {
    operationId: id,
    summary: spec.summary,
    tags: [spec.tag],
    ...(spec.description ? { description: spec.description } : {}),
    ...(spec.params?.length ? { parameters: spec.params } : {}),
    ...(spec.body ? { requestBody: { required: true, content: json(ref(spec.body)) } } : {}),
    ...(spec.rawBody
      ? {
          requestBody: {
            required: true,
            content: Object.fromEntries(Object.entries(spec.rawBody).map(([t, schema]) => [t, { schema }])),
          },
        }
      : {}),
    ...(spec.app ? { security: [{ bearer: [] }, { license: [] }] } : {}),
    'x-key-scopes': spec.validateScope || spec.app ? ['full', 'validate'] : ['full'],
    'x-license-credential': !!spec.app,
    responses,
  };
}

export const productId = pathParam('id', 'Product id (prod_…)');
export const licenseKey = pathParam('key', 'Licence key', { type: 'string', maxLength: MAX_LICENSE_KEY_LENGTH });
export const sessionId = pathParam('id', 'Checkout session id (cs_…)');
export const endpointId = pathParam('id', 'Webhook endpoint id (we_…)');
export const subscriptionId = pathParam('id', 'Subscription id (sub_…)');

export const licenseAction = (action: string, summary: string, description: string) =>
  op(`${action}License`, {
    summary,
    tag: 'Licences',
    description,
    params: [licenseKey],
    ok: { 200: { description: 'The licence after the change', schema: ref('License') } },
  });
