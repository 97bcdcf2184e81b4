import { requestSchemas } from './request-schemas';
import { schemas } from './schemas';
import { problem, withIdempotency } from './operation';
import { importCheckoutAndWebhookPaths } from './paths-imports-checkout-webhooks';
import { productAndLicencePaths } from './paths-products-licences';
import { publicPaths } from './paths-public';
import { accountPaths } from './paths-account';
import { releasePaths } from './paths-releases';
import { operationRoles } from '../routes/operation-roles';

// The OpenAPI 3.1 description of every public endpoint, served at
// /openapi.json and rendered at /docs. Paths are written once, in paths-*.ts; the test
// suite checks that every route the gateway registers appears, with the body
// and query its route validates (generated from the same shapes), and
// validates every end-to-end response against the schema of its status code.

/** A path with its parameters' names left out (routes and documented paths are compared by it). */
export { pathShape } from './operation';

/** Each operation an API key calls, with `x-required-role`: the lowest role that may (proto/rules/roles.ts). */
function withRoles(paths: Record<string, Record<string, Record<string, unknown>>>) {
  const roles = operationRoles();
  return Object.fromEntries(
    Object.entries(paths).map(([path, ops]) => [
      path,
      Object.fromEntries(
        Object.entries(ops).map(([method, op]) => {
          const role = roles.get(`${method.toUpperCase()} ${path}`);
          if (!role) return [method, op];
          // Every API key's role covers read_only: only the operations above it can be refused for a role.
          if (role === 'read_only') return [method, { ...op, 'x-required-role': role }];
          const responses = op.responses as Record<string, { description?: string }>;
          const below = `an API key whose role is below ${role} (x-required-role): the detail names its role and the one needed`;
          const forbidden = responses['403']
            ? { ...responses['403'], description: `${responses['403'].description}; or ${below}` }
            : { ...problem, description: `Forbidden: ${below}` };
          return [method, { ...op, 'x-required-role': role, responses: { ...responses, 403: forbidden } }];
        }),
      ),
    ]),
  );
}

export function openApiDocument(version: string) {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Licensing API',
      version,
      description:
        'Products, licence keys, validation, hosted checkout and webhooks. Every `/api/v1/...` path is also served as `/v1/...`. ' +
        'Authenticate with `Authorization: Bearer <API key>`, or, on the operations marked `x-license-credential`, as an app with `Authorization: License <licence key>` (its own licence only); errors are `application/problem+json` with a stable `code`. ' +
        'Every authenticated answer carries rate-limit headers (RateLimit, RateLimit-Policy, X-RateLimit-*).',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    tags: [
      'Products',
      'Releases',
      'Licences',
      'Validation',
      'Checkout',
      'Subscriptions',
      'Webhooks',
      'Imports and exports',
      'Account',
      'Operations',
    ].map((name) => ({ name })),
    paths: withRoles(
      withIdempotency({
        ...productAndLicencePaths,
        ...releasePaths,
        ...importCheckoutAndWebhookPaths,
        ...accountPaths,
        ...publicPaths,
      }),
    ),
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description:
            'An API key: lk_full_… (everything) or lk_val_… (the app routes for any licence of its account, and status)',
        },
        license: {
          type: 'http',
          scheme: 'License',
          description:
            '`Authorization: License <licence key>`: an app acting as its licence, on the operations marked `x-license-credential` only, for its own licence and product (any other is 404); every other operation is 403. A revoked, suspended or unknown licence gets the validation answer on the validation operations and 401 elsewhere. Budgets: "license_minute" per licence and the account\'s "app_hour", never the full keys\' quota.',
        },
      },
      headers: {
        RateLimit: {
          description:
            'The window closest to running out: "minute";r=<remaining>;t=<seconds to reset> (or "license_minute", "hour", "app_hour")',
          schema: { type: 'string' },
        },
        RateLimitPolicy: {
          description:
            'Both windows: "hour";q=<limit>;w=3600, "minute";q=<limit>;w=60 (app traffic, a validate-scope key or a License credential, spends the app allowance "app_hour" instead of "hour", and a request naming a licence spends "license_minute" instead of "minute")',
          schema: { type: 'string' },
        },
        RequestId: {
          description: 'Yours if sane, else generated; in every log line the request causes',
          schema: { type: 'string' },
        },
        IdempotentReplayed: {
          description:
            '"true" when this answer is the first answer to an earlier request with the same Idempotency-Key, given again (nothing was done this time); absent otherwise',
          schema: { type: 'string', const: 'true' },
        },
      },
      schemas: { ...schemas, ...requestSchemas },
    },
  };
}

export type OpenApiDocument = ReturnType<typeof openApiDocument>;
