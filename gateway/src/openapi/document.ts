import { EMAIL_MAX_LENGTH, MAX_LICENSE_KEY_LENGTH } from '@licensing/proto';
import {
  checkoutList,
  importCreateQuery,
  licenseList,
  licenseValidateQuery,
  deactivationQuery,
  subscriptionList,
} from '../request-shapes/operations';
import { pageShape } from '../request-shapes/shapes';
import { IDEMPOTENT_POSTS } from '../request-shapes/idempotent-posts';
import { type RequestBodyName, requestSchemas } from './request-schemas';
import { listOf, ref, schemas } from './schemas';
import { queryParameters } from './shape-schema';

// The OpenAPI 3.1 description of every public endpoint, served at
// /openapi.json and rendered at /docs. Paths are written once here; the test
// suite checks that every route the gateway registers appears, with the body
// and query its route validates (generated from the same shapes), and
// validates every end-to-end response against the schema of its status code.

type Schema = Record<string, unknown>;
type Op = Record<string, unknown>;

const json = (schema: Schema) => ({ 'application/json': { schema } });
const problem = {
  description: 'Error (see Errors)',
  content: { 'application/problem+json': { schema: ref('Problem') } },
};
const rateLimitHeaders = {
  RateLimit: { $ref: '#/components/headers/RateLimit' },
  'RateLimit-Policy': { $ref: '#/components/headers/RateLimitPolicy' },
  'X-Request-Id': { $ref: '#/components/headers/RequestId' },
};

const pathParam = (name: string, description: string, schema: Schema = { type: 'string', maxLength: 80 }) => ({
  name,
  in: 'path',
  required: true,
  description,
  schema,
});
const pageParams = queryParameters(pageShape);
const idempotencyHeader = {
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
function withIdempotency(all: Record<string, Record<string, Op>>): Record<string, Record<string, Op>> {
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

interface OpSpec {
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
const appResponses = {
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
const notForApps = {
  403: {
    ...problem,
    description:
      'Full-scope API keys only: a validate-scope key or a `License` credential is refused, the detail naming what it may do',
  },
};

function op(id: string, spec: OpSpec): Op {
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

const productId = pathParam('id', 'Product id (prod_…)');
const licenseKey = pathParam('key', 'Licence key', { type: 'string', maxLength: MAX_LICENSE_KEY_LENGTH });
const sessionId = pathParam('id', 'Checkout session id (cs_…)');
const endpointId = pathParam('id', 'Webhook endpoint id (we_…)');
const subscriptionId = pathParam('id', 'Subscription id (sub_…)');

const licenseAction = (action: string, summary: string, description: string) =>
  op(`${action}License`, {
    summary,
    tag: 'Licences',
    description,
    params: [licenseKey],
    ok: { 200: { description: 'The licence after the change', schema: ref('License') } },
  });

const paths: Record<string, Record<string, Op>> = {
  '/api/v1/products': {
    get: op('listProducts', {
      summary: 'List products',
      tag: 'Products',
      params: pageParams,
      ok: { 200: { description: 'A page of products, newest first', schema: listOf('Product') } },
    }),
    post: op('createProduct', {
      summary: 'Create a product',
      tag: 'Products',
      description: 'An account has at most 1,000 products: 409 for one more.',
      body: 'ProductCreate',
      ok: { 201: { description: 'The new product (Location names it)', schema: ref('Product') } },
    }),
  },
  '/api/v1/products/{id}': {
    get: op('getProduct', {
      summary: 'Get a product',
      tag: 'Products',
      params: [productId],
      ok: { 200: { description: 'The product', schema: ref('Product') } },
    }),
    patch: op('updateProduct', {
      summary: 'Update a product',
      tag: 'Products',
      description:
        'Only the fields sent change; `price: null` removes the price. A new policy applies to licences issued afterwards.',
      params: [productId],
      body: 'ProductUpdate',
      ok: { 200: { description: 'The product after the change', schema: ref('Product') } },
    }),
  },
  '/api/v1/products/{id}/signing-keys': {
    get: op('listSigningKeys', {
      summary: "List the product's licence-file signing keys",
      tag: 'Products',
      params: [productId],
      ok: {
        200: {
          description: 'Every key, current first',
          schema: {
            type: 'object',
            properties: { data: { type: 'array', items: ref('SigningKey') } },
            required: ['data'],
            additionalProperties: false,
          },
        },
      },
      app: true,
    }),
  },
  '/api/v1/products/{id}/signing-keys/rotate': {
    post: op('rotateSigningKey', {
      summary: 'Rotate the signing key',
      tag: 'Products',
      description:
        'New files are signed with the new key; files signed earlier stay verifiable with the old public key.',
      params: [productId],
      ok: { 201: { description: 'The new current key', schema: ref('SigningKey') } },
    }),
  },
  '/api/v1/licenses': {
    get: op('listLicenses', {
      summary: 'List licences',
      tag: 'Licences',
      params: queryParameters(licenseList),
      ok: { 200: { description: 'A page of licences, newest first', schema: listOf('License') } },
    }),
    post: op('createLicense', {
      summary: 'Issue a licence key',
      tag: 'Licences',
      params: [idempotencyHeader],
      body: 'LicenseCreate',
      ok: { 201: { description: 'The new licence and its key', schema: ref('LicenseCreated') } },
    }),
  },
  '/api/v1/licenses/batch': {
    post: op('createLicenseBatch', {
      summary: 'Issue licences in bulk (a job)',
      tag: 'Licences',
      description:
        'Up to 1,000 licences of one product, issued by a job: the answer (202, Location naming the job) says `running`; `GET /api/v1/licenses/batch/{id}` shows its progress, each issued key and each failed item. Every item is checked first: one bad item (named `licenses[3].customer_email`), an unknown product or more than 1,000 items refuse the whole batch, and nothing is issued. Each item is issued once whatever happens (a crash mid-batch, a retry under the same `Idempotency-Key`, which answers the same job). `send_email` items get the licence e-mail once issued. Each licence publishes `license.created`, and the batch `license.batch_completed` when done. The body may be up to 2 MiB.',
      params: [idempotencyHeader],
      body: 'LicenseBatchCreate',
      ok: { 202: { description: 'The job, running', schema: ref('LicenseBatch') } },
    }),
  },
  '/api/v1/licenses/batch/{id}': {
    get: op('getLicenseBatch', {
      summary: 'Get a licence batch job',
      tag: 'Licences',
      params: [pathParam('id', 'Licence batch id (lbat_…)')],
      ok: { 200: { description: 'The job: its progress and results', schema: ref('LicenseBatch') } },
    }),
  },
  '/api/v1/licenses/validate': {
    get: op('validateLicenseByQuery', {
      summary: 'Validate a licence key (query form)',
      tag: 'Validation',
      description:
        'Always 200 for a well-formed request: `valid` says yes or no, `code` says why. Prefer POST /keys/validate: keys in URLs reach logs.',
      params: queryParameters(licenseValidateQuery),
      ok: { 200: { description: 'The verdict', schema: ref('QueryValidation') } },
      app: true,
    }),
  },
  '/api/v1/keys/validate': {
    post: op('validateKey', {
      summary: 'Validate a licence key',
      tag: 'Validation',
      description:
        'Always 200 for a well-formed request. With `entitlements`, a licence that lacks any of them answers `valid: false`, `entitlements_missing` (checked after status and activation). `/v1/keys/validate` is the same endpoint.',
      body: 'KeyValidationRequest',
      ok: { 200: { description: 'The verdict', schema: ref('KeyValidation') } },
      app: true,
    }),
  },
  '/api/v1/licenses/{key}': {
    get: op('getLicense', {
      summary: 'Get a licence',
      tag: 'Licences',
      params: [licenseKey],
      ok: { 200: { description: 'The licence', schema: ref('License') } },
      app: true,
    }),
    patch: op('updateLicense', {
      summary: "Update a licence's e-mail, metadata or entitlements",
      tag: 'Licences',
      description:
        "`entitlements` replaces the licence's own entitlements whole (`[]` clears them); its effective set is its policy's and these. Publishes `license.updated`.",
      params: [licenseKey],
      body: 'LicenseUpdate',
      ok: { 200: { description: 'The licence after the change', schema: ref('License') } },
    }),
    delete: op('deleteLicense', {
      summary: 'Delete a licence',
      tag: 'Licences',
      description:
        'Deletes the licence and its activations: its key then validates as `not_found` and its `License` credential stops working. Publishes `license.deleted`. 404 when the account has no such licence; 409 while a subscription bills it (any status but canceled): cancel the subscription first.',
      params: [licenseKey],
      ok: { 204: { description: 'Deleted' } },
    }),
  },
  '/api/v1/licenses/{key}/suspend': {
    post: licenseAction(
      'suspend',
      'Suspend a licence',
      'Validation answers `suspended` until reinstated. 409 when not allowed (see the state diagram).',
    ),
  },
  '/api/v1/licenses/{key}/reinstate': {
    post: licenseAction('reinstate', 'Reinstate a suspended licence', '409 when not allowed (revocation is final).'),
  },
  '/api/v1/licenses/{key}/revoke': {
    post: licenseAction(
      'revoke',
      'Revoke a licence for good',
      'From active or suspended; final. 409 when not allowed.',
    ),
  },
  '/api/v1/licenses/{key}/renew': {
    post: licenseAction(
      'renew',
      'Renew a licence',
      "Extends expiry by the policy's duration (from the current expiry while it is ahead, else from now) and takes the product's current policy. 409 for perpetual or revoked licences.",
    ),
  },
  '/api/v1/licenses/{key}/reroll': {
    post: op('rerollLicense', {
      summary: 'Give the licence a new key',
      tag: 'Licences',
      description:
        'Replaces a leaked or shared key, keeping everything else (id, activations, entitlements, metadata, expiry). The old key keeps validating for `grace_hours` (0 to 720; 0, the default: it stops at once) with `next_action: update_key` and the licence shown under the old key (never the new one); afterwards it is `not_found`, and it never works on other routes. A revoked licence cannot be rerolled (409). Asking again with the old key (a retry) answers the licence with its new key. Publishes `license.rerolled`; `send_email: true` mails the new key to the customer.',
      params: [licenseKey],
      body: 'LicenseReroll',
      ok: { 200: { description: 'The licence with its new key', schema: ref('License') } },
    }),
  },
  '/api/v1/licenses/{key}/activations': {
    get: op('listActivations', {
      summary: "List a licence's activations",
      tag: 'Licences',
      params: [licenseKey, ...pageParams],
      ok: { 200: { description: 'A page of activations', schema: listOf('Activation') } },
      app: true,
    }),
    post: op('activateLicense', {
      summary: 'Activate a machine',
      tag: 'Licences',
      description:
        '201 for a new activation, 200 when the fingerprint was already active (on a floating licence with a fresh lease, even a lapsed one). 409 when every slot is taken (the detail starts with activation_limit_reached and the problem has `next_action: free_a_seat`: POST …/seat-rescue lets the user free one); on a floating licence a lapsed seat is reclaimed first (license.deactivated, reason lapsed) and its slot reused.',
      params: [licenseKey],
      body: 'ActivationCreate',
      ok: {
        200: { description: 'Already active', schema: ref('Activation') },
        201: { description: 'Activated', schema: ref('Activation') },
      },
      app: true,
    }),
  },
  '/api/v1/licenses/{key}/activations/{id}': {
    delete: op('deactivateLicense', {
      summary: 'Free an activation slot',
      tag: 'Licences',
      description:
        "With an app credential (a License credential or a validate-scope key) this counts against the policy's customer_deactivations_per_30_days, as a machine freed in the customer portal (429 once spent, 409 when it is 0), except an app releasing its own floating seat (fingerprint: the seat's). A full-scope key frees any machine.",
      params: [licenseKey, pathParam('id', 'Activation id (act_…)'), ...queryParameters(deactivationQuery)],
      ok: { 204: { description: 'Deactivated' } },
      app: true,
    }),
  },
  '/api/v1/licenses/{key}/activations/{id}/heartbeat': {
    post: op('heartbeatActivation', {
      summary: "Renew a floating seat's lease",
      tag: 'Licences',
      description:
        "Sets lease_expires_at to now + the policy's lease_seconds. 404 when the licence has no such activation (another licence's included). 409 (conflict) when the policy has no lease (node-locked), the activation was deactivated or reclaimed, the licence is not active, or the lease already lapsed (detail starts with lease_expired): activate again, which is idempotent.",
      params: [licenseKey, pathParam('id', 'Activation id (act_…)')],
      ok: { 200: { description: 'The activation with its new lease', schema: ref('Activation') } },
      app: true,
    }),
  },
  '/api/v1/licenses/{key}/file': {
    post: op('issueLicenseFile', {
      summary: 'Issue a signed licence file for offline checks',
      tag: 'Licences',
      description:
        "With an app credential (a License credential or a validate-scope key) the file's customer_email is null unless the policy's validate_keys_see_email allows it, and ttl_days is at most the policy's max_file_ttl_days (default 30; more is 400 naming ttl_days). A full-scope key may ask for up to 365.",
      params: [licenseKey],
      body: 'LicenseFileRequest',
      ok: { 201: { description: 'The signed file', schema: ref('LicenseFile') } },
      app: true,
    }),
  },
  '/api/v1/licenses/{key}/email': {
    post: op('sendLicenseEmail', {
      summary: 'E-mail the licence to its customer again',
      tag: 'Licences',
      description:
        "Queues the purchase e-mail (key, product, expiry, portal link, licence file) to the licence's customer_email; the notification service sends it with retries. Its progress is in GET /api/v1/emails.",
      params: [licenseKey],
      ok: { 202: { description: 'Queued', schema: ref('Email') } },
    }),
  },
  '/api/v1/licenses/{key}/seat-rescue': {
    post: op('requestSeatRescue', {
      summary: "E-mail the licence's owner a portal link to free a seat",
      tag: 'Licences',
      description:
        "For an app whose activation was refused because every seat is taken (`next_action: free_a_seat`): the licence's customer e-mail gets a one-time link (valid an hour) that opens the customer portal on this licence's machines, where they free one; the app's next activation then succeeds. No body. 409 when the licence has no customer e-mail; 429 (Retry-After) when one was sent for this licence within the hour.",
      params: [licenseKey],
      ok: { 202: { description: 'Queued (the answer never names the address)', schema: ref('SeatRescue') } },
      app: true,
    }),
  },
  '/api/v1/customers/{email}': {
    delete: op('eraseCustomer', {
      summary: "Erase a customer's e-mail everywhere",
      tag: 'Licences',
      description:
        "Replaces the e-mail (case-insensitive) with one placeholder in the account's licences and their activations' names, checkout sessions, mail log and webhook deliveries, and ends the customer's portal sessions; the licences stay valid and their keys keep working. Publishes customer.erased (without the e-mail). 400 for a malformed e-mail; 503 when a service did not answer: repeat the request (every step is idempotent).",
      params: [
        pathParam('email', 'The customer e-mail (percent-encoded)', { type: 'string', maxLength: EMAIL_MAX_LENGTH }),
      ],
      ok: { 200: { description: 'Erased', schema: ref('CustomerErasure') } },
    }),
  },
  '/api/v1/imports': {
    post: op('createImport', {
      summary: 'Import licences with their keys (a job)',
      tag: 'Imports and exports',
      description:
        'The body is the file itself, up to 100 MB, streamed: JSON lines (`format=jsonl`, `Content-Type: application/x-ndjson`; an export of another account is such a file) or CSV (`format=csv|keygen|lemonsqueezy|gumroad`, `Content-Type: text/csv`). The job imports each row idempotently (a row already in the account with the same fields is skipped; the same key with other fields, or a key taken anywhere else, is rejected naming the row). 400 when the file is not of that format (its header or first line is wrong, or a CSV header has more than 256 columns); 409 while the account has another import waiting or running (one at a time); 413 over 100 MB; 415 for another Content-Type. The columns of each format are in docs/api.md, "Imports".',
      params: queryParameters(importCreateQuery),
      rawBody: {
        'application/x-ndjson': { type: 'string', description: 'One JSON object per line' },
        'text/csv': { type: 'string', description: 'A header row, then one licence per row' },
      },
      ok: { 202: { description: 'The import job, running (Location names it)', schema: ref('Import') } },
    }),
  },
  '/api/v1/imports/{id}': {
    get: op('getImport', {
      summary: "An import's progress and outcome",
      tag: 'Imports and exports',
      params: [pathParam('id', 'Import id (imp_…)')],
      ok: { 200: { description: 'The import job', schema: ref('Import') } },
    }),
  },
  '/api/v1/exports': {
    post: op('createExport', {
      summary: "Export the account's data as JSON lines (a job)",
      tag: 'Imports and exports',
      description:
        'Products, licences with their machines, checkout sessions and webhook endpoints (never secrets), one JSON object per line with its `type`. Downloadable for 24 hours once done; `format=jsonl` imports it into another account. The gateway that answered runs the job; if that process stops before the export is done (a crash, a restart), the export ends `failed` within a minute (its lease lapses), its `failure` saying to start a new export: POST again. 409 while another export of the account runs (one at a time).',
      ok: { 202: { description: 'The export job, running (Location names it)', schema: ref('Export') } },
    }),
  },
  '/api/v1/exports/{id}': {
    get: op('getExport', {
      summary: "An export's progress",
      tag: 'Imports and exports',
      description:
        '`running` until `done` or `failed`: an export always ends. One whose gateway process stopped mid-way is `failed` within a minute, with a `failure` that says so and to start a new export.',
      params: [pathParam('id', 'Export id (exp_…)')],
      ok: { 200: { description: 'The export job', schema: ref('Export') } },
    }),
  },
  '/api/v1/exports/{id}/download': {
    get: op('downloadExport', {
      summary: 'Download an export file',
      tag: 'Imports and exports',
      description:
        '409 while the export runs; 404 after its 24 hours, or once an erasure of a customer deleted the file (status expired).',
      params: [pathParam('id', 'Export id (exp_…)')],
      ok: {
        200: {
          description: 'The JSON lines',
          media: 'application/x-ndjson',
          schema: { type: 'string' },
        },
      },
    }),
  },
  '/api/v1/emails': {
    get: op('listEmails', {
      summary: 'The mail log: e-mails sent to your customers',
      tag: 'Licences',
      params: [...pageParams],
      ok: { 200: { description: 'A page of e-mails, newest first', schema: listOf('Email') } },
    }),
  },
  '/api/v1/checkout': {
    get: op('listCheckoutSessions', {
      summary: 'List checkout sessions',
      tag: 'Checkout',
      params: queryParameters(checkoutList),
      ok: { 200: { description: 'A page of sessions, newest first', schema: listOf('CheckoutSession') } },
    }),
    post: op('createCheckoutSession', {
      summary: 'Create a hosted checkout session',
      tag: 'Checkout',
      description:
        'The product must have a price. Send the customer to `url`; on payment a licence is issued and they land on `success_url`.',
      params: [idempotencyHeader],
      body: 'CheckoutCreate',
      ok: { 201: { description: 'The open session', schema: ref('CheckoutSession') } },
    }),
  },
  '/api/v1/checkout/{id}': {
    get: op('getCheckoutSession', {
      summary: 'Get a checkout session',
      tag: 'Checkout',
      params: [sessionId],
      ok: { 200: { description: 'The session', schema: ref('CheckoutSession') } },
    }),
  },
  '/api/v1/checkout/{id}/expire': {
    post: op('expireCheckoutSession', {
      summary: 'Expire an open session now',
      tag: 'Checkout',
      params: [sessionId],
      ok: { 200: { description: 'The expired session', schema: ref('CheckoutSession') } },
    }),
  },
  '/api/v1/subscriptions': {
    get: op('listSubscriptions', {
      summary: 'List subscriptions',
      tag: 'Subscriptions',
      description: 'Made by paid checkouts of recurring prices; each has one licence that follows it.',
      params: queryParameters(subscriptionList),
      ok: { 200: { description: 'A page of subscriptions, newest first', schema: listOf('Subscription') } },
    }),
  },
  '/api/v1/subscriptions/{id}': {
    get: op('getSubscription', {
      summary: 'Get a subscription, with its invoices',
      tag: 'Subscriptions',
      params: [subscriptionId],
      ok: { 200: { description: 'The subscription', schema: ref('Subscription') } },
    }),
  },
  '/api/v1/subscriptions/{id}/cancel': {
    post: op('cancelSubscription', {
      summary: 'Cancel a subscription, now or at its period end',
      tag: 'Subscriptions',
      description:
        'At the period end: the licence stays valid until then, then expires. Now: the licence expires now. 409 for a subscription already canceled.',
      params: [subscriptionId],
      body: 'SubscriptionCancel',
      ok: { 200: { description: 'The subscription after the change', schema: ref('Subscription') } },
    }),
  },
  '/api/v1/subscriptions/{id}/billing_portal': {
    post: op('createBillingPortal', {
      summary: 'A link where the customer updates their card',
      tag: 'Subscriptions',
      description:
        "Stripe subscriptions: a session of Stripe's Billing Portal for the subscription's Stripe customer (short-lived: expires_at is 5 minutes on), returning to the checkout's success_url. Test mode: a test page (valid for an hour). 409 (conflict) for a canceled subscription, or a Stripe one whose Stripe customer is not known yet (its next subscription event tells it); 503 when Stripe is unreachable.",
      params: [subscriptionId],
      ok: { 200: { description: 'The link', schema: ref('BillingPortal') } },
    }),
  },
  '/api/v1/subscriptions/{id}/test_clock': {
    post: op('advanceSubscriptionTestClock', {
      summary: "Test mode: move a subscription's clock forward",
      tag: 'Subscriptions',
      description:
        'Bills each period end passed with the test card on file (4242 4242 4242 4242 always pays; 4000 0000 0000 0341 pays the first time, then fails: it pays only a charge made when it is given, so a trial bought with it ends unpaid and its licence expires) and makes the state changes (renewals, past due, unpaid, trial ends, cancellation) with their events. 400 for a time not after the clock or more than 5 years ahead; 409 for a live subscription; 404 with PAYMENT_PROVIDER=stripe.',
      params: [subscriptionId],
      body: 'SubscriptionTestClock',
      ok: { 200: { description: 'The subscription at its new time', schema: ref('Subscription') } },
    }),
  },
  '/api/v1/webhooks': {
    get: op('listWebhookEndpoints', {
      summary: 'List webhook endpoints',
      tag: 'Webhooks',
      params: pageParams,
      ok: { 200: { description: 'A page of endpoints', schema: listOf('WebhookEndpoint') } },
    }),
    post: op('createWebhookEndpoint', {
      summary: 'Add a webhook endpoint',
      tag: 'Webhooks',
      description: 'The signing secret is in this answer only.',
      body: 'WebhookEndpointCreate',
      ok: { 201: { description: 'The endpoint with its secret', schema: ref('WebhookEndpointWithSecret') } },
    }),
  },
  '/api/v1/webhooks/{id}': {
    get: op('getWebhookEndpoint', {
      summary: 'Get a webhook endpoint',
      tag: 'Webhooks',
      params: [endpointId],
      ok: { 200: { description: 'The endpoint', schema: ref('WebhookEndpoint') } },
    }),
    patch: op('updateWebhookEndpoint', {
      summary: 'Change or re-enable a webhook endpoint',
      tag: 'Webhooks',
      params: [endpointId],
      body: 'WebhookEndpointUpdate',
      ok: { 200: { description: 'The endpoint after the change', schema: ref('WebhookEndpoint') } },
    }),
    delete: op('deleteWebhookEndpoint', {
      summary: 'Delete a webhook endpoint',
      tag: 'Webhooks',
      params: [endpointId],
      ok: { 204: { description: 'Deleted; pending deliveries are dropped' } },
    }),
  },
  '/api/v1/webhooks/{id}/deliveries': {
    get: op('listWebhookDeliveries', {
      summary: "The endpoint's delivery log",
      tag: 'Webhooks',
      params: [endpointId, ...pageParams],
      ok: { 200: { description: 'A page of deliveries, newest first', schema: listOf('WebhookDelivery') } },
    }),
  },
  '/api/v1/webhooks/{id}/deliveries/{delivery}/retry': {
    post: op('retryWebhookDelivery', {
      summary: 'Deliver again now',
      tag: 'Webhooks',
      params: [endpointId, pathParam('delivery', 'Delivery id')],
      ok: { 200: { description: 'The delivery, pending again', schema: ref('WebhookDelivery') } },
    }),
  },
  '/api/v1/webhooks/{id}/test': {
    post: op('sendTestWebhook', {
      summary: 'Send a webhook.test event',
      tag: 'Webhooks',
      params: [endpointId],
      ok: { 202: { description: 'Queued for delivery', schema: ref('WebhookDelivery') } },
    }),
  },
  '/api/v1/webhooks/{id}/rotate-secret': {
    post: op('rotateWebhookSecret', {
      summary: 'Rotate the signing secret',
      tag: 'Webhooks',
      description:
        'Deliveries are signed with both secrets for 24 h, then with the new one only. At most two secrets sign: rotating again within the 24 h stops the oldest at once.',
      params: [endpointId],
      ok: { 200: { description: 'The endpoint with its new secret', schema: ref('WebhookEndpointWithSecret') } },
    }),
  },
  '/api/v1/status': {
    get: op('getStatus', {
      summary: 'System status',
      tag: 'Operations',
      description: 'Every service and dependency with its latency; `degraded` means requests may still succeed.',
      ok: { 200: { description: 'Status', schema: ref('Status') } },
      validateScope: true,
    }),
  },
};

// Unauthenticated operational endpoints, outside /api/v1.
const publicPaths: Record<string, Record<string, Op>> = {
  '/healthz': {
    get: {
      operationId: 'liveness',
      summary: 'Liveness: the process answers',
      tags: ['Operations'],
      security: [],
      responses: { 200: { description: 'Alive', content: json(ref('Liveness')) } },
    },
  },
  '/readyz': {
    get: {
      operationId: 'readiness',
      summary:
        'Readiness: the gateway can authenticate (account service) and count limits (Redis or its in-memory fallback)',
      tags: ['Operations'],
      security: [],
      responses: {
        200: { description: 'Ready', content: json(ref('Readiness')) },
        503: { description: 'Not ready', content: json(ref('Readiness')) },
      },
    },
  },
  '/openapi.json': {
    get: {
      operationId: 'openapi',
      summary: 'This document',
      tags: ['Operations'],
      security: [],
      responses: {
        200: {
          description: 'OpenAPI 3.1',
          content: { 'application/json': { schema: { type: 'object', required: ['openapi', 'paths'] } } },
        },
      },
    },
  },
  '/docs': {
    get: {
      operationId: 'reference',
      summary: 'This document as a readable page',
      tags: ['Operations'],
      security: [],
      responses: { 200: { description: 'HTML', content: { 'text/html': { schema: { type: 'string' } } } } },
    },
  },
  '/checkout/{id}': {
    get: {
      operationId: 'hostedCheckoutPage',
      summary: 'The hosted payment page of a session (send customers here; the session id is the capability)',
      tags: ['Checkout'],
      security: [],
      parameters: [sessionId],
      responses: {
        200: { description: 'HTML page', content: { 'text/html': { schema: { type: 'string' } } } },
        404: { description: 'No such session (HTML)', content: { 'text/html': { schema: { type: 'string' } } } },
        429: {
          description: 'Too many requests from this address (HTML)',
          content: { 'text/html': { schema: { type: 'string' } } },
        },
      },
    },
  },
  '/webhooks/stripe': {
    post: {
      operationId: 'stripeWebhook',
      summary: 'Receives Stripe events (point a Stripe webhook endpoint here)',
      description:
        'For Stripe, not for API clients: no API key (Stripe cannot send one), throttled per address (`STRIPE_WEBHOOK_REQUESTS_PER_MINUTE`), at most 256 KiB with a Content-Length. ' +
        "The body is passed untouched to the checkout service, which checks the `Stripe-Signature` header over the raw bytes with the endpoint's signing secret (300 s tolerance). " +
        'Handled: `checkout.session.completed`, `checkout.session.async_payment_succeeded`, `checkout.session.expired`, `charge.refunded`, `charge.dispute.created` (a chargeback, like a full refund); other types are acknowledged and ignored. ' +
        "A refund or dispute of a subscription's renewal or proration is recorded on the subscription (`refunds`) and leaves its licence as it is; one of its first payment cancels the subscription on Stripe and here, and applies the product's `refund_action` to the licence. " +
        'The event id counts, whatever the bytes: an event already handled, delivered again (Stripe signs each retry anew), does nothing (`duplicate: true`), and one delivered while another delivery handles it waits for that (409 if it takes over 10 s); the same event signed at the same time again is a replay (409). Any non-2xx answer makes Stripe retry.',
      tags: ['Checkout'],
      security: [],
      parameters: [
        {
          name: 'Stripe-Signature',
          in: 'header',
          required: true,
          description: 't=<unix time>,v1=<HMAC-SHA256 hex>',
          schema: { type: 'string' },
        },
      ],
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: { type: 'object', required: ['id', 'type', 'data'], description: 'A Stripe event object' },
          },
        },
      },
      responses: {
        200: {
          description: 'Accepted (handled, ignored, or a duplicate of one already handled)',
          content: json({
            type: 'object',
            required: ['received'],
            additionalProperties: false,
            properties: {
              received: { const: true },
              duplicate: { const: true },
              ignored: { type: 'string', description: 'Why the event needs nothing from us' },
            },
          }),
        },
        400: {
          ...problem,
          description: 'Bad or stale signature, or an event that does not match its session (nothing was done)',
        },
        404: {
          ...problem,
          description:
            'The checkout session the event names is unknown, or Stripe is not the payment provider (nothing was done)',
        },
        405: { ...problem, description: 'Not POST' },
        409: { ...problem, description: 'A replay: this very signed delivery was already received (nothing was done)' },
        413: { ...problem, description: 'Body over 256 KiB or without Content-Length' },
        429: { ...problem, description: 'Too many deliveries from this address' },
        503: { ...problem, description: 'The checkout service or its store is unavailable; Stripe retries' },
      },
    },
  },
};

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
      'Licences',
      'Validation',
      'Checkout',
      'Subscriptions',
      'Webhooks',
      'Imports and exports',
      'Operations',
    ].map((name) => ({ name })),
    paths: withIdempotency({ ...paths, ...publicPaths }),
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
