// JSON Schemas (2020-12, as OpenAPI 3.1 uses) of every body the public API
// sends. Response objects are closed (additionalProperties: false): the
// end-to-end tests validate every response against them, so a field added in
// code but not here fails the suite. Request bodies are generated from the
// routes' shapes (request-schemas.ts).

import { validationCodes } from '@licensing/proto';
import { errorCodes } from '@licensing/runtime';

type Schema = Record<string, unknown>;

export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const str = (description?: string, extra: Schema = {}): Schema => ({
  type: 'string',
  ...(description ? { description } : {}),
  ...extra,
});
const orNull = (schema: Schema): Schema => ({ anyOf: [schema, { type: 'null' }] });
const time = (description?: string) => str(description, { format: 'date-time' });
const int = (description?: string, extra: Schema = {}): Schema => ({
  type: 'integer',
  ...(description ? { description } : {}),
  ...extra,
});
const obj = (
  properties: Record<string, Schema>,
  required: string[] = Object.keys(properties),
  extra: Schema = {},
): Schema => ({ type: 'object', properties, required, additionalProperties: false, ...extra });
const metadata: Schema = {
  type: 'object',
  additionalProperties: { type: 'string' },
  maxProperties: 50,
  description: 'Your own key/value strings (at most 50 entries)',
};
const id = (prefix: string) =>
  str(undefined, { pattern: `^${prefix}_[0-9A-HJKMNP-TV-Z]{26}$`, examples: [`${prefix}_01JD8Z3K6Q2W4E5R6T7Y8V9X0P`] });

const policyFields = {
  duration_days: orNull(int('Days a licence is valid from issue; null = perpetual', { minimum: 1 })),
  max_activations: orNull(int('Machines a licence may be activated on; null = unlimited', { minimum: 1 })),
  grace_days: int('Days after expiry during which validation still passes (code expired_in_grace)', { minimum: 0 }),
  require_activation: {
    type: 'boolean',
    description: 'Validation fails (not_activated) unless the fingerprint is activated',
  },
  validate_keys_see_email: {
    type: 'boolean',
    description: 'validate-scope API keys see customer_email in validation answers',
  },
  refund_action: {
    enum: ['revoke', 'suspend'],
    description: 'What a refunded checkout payment does to the licence it paid for (default revoke)',
  },
};

const probe = obj({ status: { enum: ['ok', 'degraded', 'down'] }, latency_ms: orNull({ type: 'number', minimum: 0 }) });

export const schemas: Record<string, Schema> = {
  Problem: {
    type: 'object',
    description: 'RFC 9457 problem details; `code` is the stable machine word',
    properties: {
      type: str('Where the code is explained: /docs#error-<code>'),
      title: str(),
      status: int(undefined, { minimum: 400, maximum: 599 }),
      detail: str('What went wrong, for a person'),
      code: { enum: [...errorCodes] },
      request_id: str('The X-Request-Id of the request (quote it to support)'),
      errors: {
        type: 'array',
        items: obj({ field: str(), message: str() }),
        description: 'One entry per invalid field (400 only)',
      },
    },
    required: ['type', 'title', 'status', 'detail', 'code', 'request_id'],
    additionalProperties: false,
  },
  Policy: obj(policyFields),
  Price: obj({
    amount: int("In the currency's minor unit (cents)", { minimum: 1 }),
    currency: str('ISO 4217, e.g. usd', { minLength: 3, maxLength: 3 }),
  }),
  Product: obj({
    id: id('prod'),
    name: str(undefined, { minLength: 1, maxLength: 200 }),
    description: orNull(str(undefined, { maxLength: 2000 })),
    policy: ref('Policy'),
    price: orNull(ref('Price')),
    created_at: time(),
  }),
  SigningKey: obj({
    kid: str('Key id, named in every licence file it signs'),
    algorithm: { const: 'Ed25519' },
    public_key_pem: str('SPKI PEM; embed it in your app to verify licence files offline'),
    current: { type: 'boolean' },
    created_at: time(),
  }),
  License: obj({
    id: id('lic'),
    key: str('The licence key, e.g. XXXXX-XXXXX-XXXXX-XXXXX-XXXXX'),
    product_id: id('prod'),
    customer_email: orNull(str('null for validate-scope keys unless the policy allows it')),
    status: { enum: ['active', 'suspended', 'revoked', 'expired'] },
    expires_at: orNull(time('null = perpetual')),
    policy: ref('Policy'),
    activations: int('Active machines (counted on GET of one licence; 0 in lists)', { minimum: 0 }),
    metadata: { ...metadata, description: `${metadata.description}; {} in answers to validate-scope keys` },
    created_at: time(),
    last_validated_at: orNull(
      time(
        'When a validation last saw this licence, written in batches every few seconds; on GET of one licence only (null in lists and when never validated)',
      ),
    ),
  }),
  LicenseCreated: obj({ success: { const: true }, license_key: str(), license: ref('License') }),
  Activation: obj({
    id: id('act'),
    fingerprint: str(undefined, { maxLength: 200 }),
    name: orNull(str(undefined, { maxLength: 100 })),
    created_at: time(),
  }),
  LicenseFile: obj({
    kid: str(),
    algorithm: { const: 'Ed25519' },
    payload: str('base64url of the signed JSON'),
    signature: str('base64url Ed25519 signature over the payload bytes'),
  }),
  ValidationCode: {
    enum: [...validationCodes],
  },
  NextAction: { enum: ['none', 'activate', 'renew', 'contact_vendor'] },
  QueryValidation: obj({
    valid: { type: 'boolean' },
    code: ref('ValidationCode'),
    detail: str(),
    product_id: orNull(str()),
    customer_email: orNull(str()),
    status: orNull({ enum: ['active', 'suspended', 'revoked', 'expired'] }),
    expires_at: orNull(time()),
    next_action: ref('NextAction'),
    cache_until: time('Trust this answer offline until then'),
  }),
  KeyValidation: obj({
    valid: { type: 'boolean' },
    code: ref('ValidationCode'),
    detail: str(),
    status: orNull({ enum: ['active', 'suspended', 'revoked', 'expired'] }),
    expires_at: orNull(time()),
    next_action: ref('NextAction'),
    cache_until: time(),
    license: orNull(ref('License')),
  }),
  CheckoutSession: obj({
    id: id('cs'),
    url: str('Where to send the customer to pay: Stripe Checkout, or the hosted test-mode page', { format: 'uri' }),
    status: { enum: ['open', 'complete', 'expired'] },
    expires_at: time(),
    product_id: id('prod'),
    amount: int(undefined, { minimum: 1 }),
    currency: str(),
    customer_email: orNull(str()),
    success_url: str(),
    cancel_url: orNull(str()),
    metadata,
    license_key: orNull(str('Set once the session is complete')),
    livemode: {
      type: 'boolean',
      description: 'true only for a real payment (a live Stripe key); false in test mode and with Stripe test keys',
    },
    created_at: time(),
  }),
  WebhookEndpoint: obj({
    id: id('we'),
    url: str(),
    events: { type: 'array', items: str() },
    description: orNull(str()),
    enabled: { type: 'boolean' },
    created_at: time(),
  }),
  WebhookEndpointWithSecret: obj({
    id: id('we'),
    url: str(),
    events: { type: 'array', items: str() },
    description: orNull(str()),
    enabled: { type: 'boolean' },
    created_at: time(),
    secret: str('whsec_…; shown only here, keep it safe'),
  }),
  WebhookDelivery: obj({
    id: str(),
    event_id: str(),
    event_type: str(),
    status: { enum: ['pending', 'delivered', 'failed'] },
    attempts: int(undefined, { minimum: 0 }),
    last_status_code: orNull(int()),
    last_error: orNull(str()),
    last_latency_ms: orNull({ type: 'number', minimum: 0 }),
    next_attempt_at: orNull(time()),
    delivered_at: orNull(time()),
    created_at: time(),
  }),
  Probe: probe,
  Status: obj({
    status: { enum: ['ok', 'degraded', 'down'] },
    version: str(),
    time: time(),
    services: obj({
      account: ref('Probe'),
      product: ref('Probe'),
      license: ref('Probe'),
      checkout: ref('Probe'),
      webhook: ref('Probe'),
    }),
    dependencies: obj({ mongodb: ref('Probe'), nats: ref('Probe'), redis: ref('Probe') }),
    rate_limits: obj(
      {
        plan: str('free, pro or enterprise'),
        hourly_quota: int('Requests per hour for the account with full-scope keys and the dashboard', {
          minimum: 1,
        }),
        hourly_app_allowance: int(
          'Requests per hour for the account with validate-scope keys (app traffic); never spends hourly_quota',
          { minimum: 1 },
        ),
        per_key_per_minute: int('Requests per minute for each API key', { minimum: 1 }),
      },
      undefined,
      { description: "The calling account's rate limits (see RateLimit-Policy for the window this key spends)" },
    ),
  }),
  Readiness: obj({
    status: { enum: ['ready', 'not_ready', 'shutting_down'] },
    account_service: ref('Probe'),
    rate_limits: { enum: ['redis', 'in_memory_fallback'] },
  }),
  Liveness: obj({ status: { const: 'ok' } }),
  Empty: obj({}, [], { description: 'An empty JSON object (or no body)' }),
};

/** `{data, has_more, next_cursor}` of one item schema. */
export const listOf = (item: string): Schema =>
  obj({
    data: { type: 'array', items: ref(item) },
    has_more: { type: 'boolean' },
    next_cursor: orNull(str('Pass as starting_after for the next page')),
  });
