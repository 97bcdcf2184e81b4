// JSON Schemas (2020-12, as OpenAPI 3.1 uses) of every body the public API
// sends. Response objects are closed (additionalProperties: false): the
// end-to-end tests validate every response against them, so a field added in
// code but not here fails the suite. Request bodies are generated from the
// routes' shapes (request-schemas.ts).

import {
  ACTIVATION_NAME_MAX_LENGTH,
  API_KEY_ROLES,
  MEMBER_ROLES,
  MEMBER_STATUSES,
  actorTypes,
  FINGERPRINT_MAX_LENGTH,
  PRODUCT_DESCRIPTION_MAX_LENGTH,
  PRODUCT_NAME_MAX_LENGTH,
  SEATS_MAX,
  licenseBatchItemStatuses,
  licenseBatchStatuses,
  checkoutStatuses,
  deliveryStatuses,
  emailStatuses,
  emailTemplates,
  EXAMPLE_LICENSE_KEY,
  invoiceStatuses,
  refundCauses,
  priceIntervals,
  subscriptionStatuses,
  FOREIGN_KEY_PATTERN,
  importFormats,
  jobStatuses,
  exportStatuses,
  LICENSE_KEY_PATTERN,
  licenseStatuses,
  nextActions,
  policyFields,
  policyRules,
  validationCodes,
  type PolicyRule,
} from '@licensing/proto';
import { errorCodes } from '@licensing/runtime';
import { int, obj, orNull, ref, type Schema, str, time } from './schema-primitives';
import { entitlementsSchema } from './shape-schema';
import { statusSchemas } from './status-schemas';
import { releaseSchemas } from './release-schemas';
import { licenseOverrides } from './license-schemas';

/** Other parts of the document point at these schemas by name. */
export { ref };

const metadata: Schema = {
  type: 'object',
  additionalProperties: { type: 'string' },
  maxProperties: 50,
  description: 'Your own key/value strings (at most 50 entries)',
};
const id = (prefix: string) =>
  str(undefined, { pattern: `^${prefix}_[0-9A-HJKMNP-TV-Z]{26}$`, examples: [`${prefix}_01JD8Z3K6Q2W4E5R6T7Y8V9X0P`] });

/**
 * A policy field as answers show it (proto/rules/policy.ts). Numbers state their lower bound only: a
 * licence keeps the policy it was issued under, which an earlier upper bound may have allowed.
 */
function policyField(rule: PolicyRule): Schema {
  switch (rule.kind) {
    case 'int': {
      const schema = int(rule.description, { minimum: rule.min });
      return rule.nullable ? orNull(schema) : schema;
    }
    case 'bool':
      return { type: 'boolean', description: rule.description };
    case 'enum':
      return { enum: [...rule.values], description: rule.description };
    case 'entitlements':
      return { ...entitlementsSchema, description: rule.description };
  }
}
const policy = Object.fromEntries(policyFields.map((f) => [f, policyField(policyRules[f])]));
const licenseStatus: Schema = { enum: [...licenseStatuses] };

/** A licence's effective entitlements: its product's current ones and its own (up to 100 each), sorted, each once. */
const effectiveEntitlements: Schema = {
  type: 'array',
  items: entitlementsSchema.items,
  uniqueItems: true,
  description:
    "The licence's effective entitlements (its product's current ones and its own, sorted, each once); [] when no licence is shown",
};

/** An API key as the API shows it (never its secret). */
const apiKeyFields = {
  id: id('key'),
  name: str('What the key is for'),
  role: { enum: [...API_KEY_ROLES], description: 'What the key may do (docs/api.md, "Roles")' },
  prefix: str('The visible start of the key, to recognise it'),
  created_by: str('Who made it: api_key:<id> for a key made through the API, an e-mail, or "operator"'),
  created_at: time(),
  last_used_at: orNull(time()),
  revoked_at: orNull(time()),
};

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
      next_action: {
        enum: [...nextActions],
        description:
          'An extension member (RFC 9457) of some refusals: `free_a_seat` on the 409 of an activation when every seat is taken (POST …/seat-rescue helps the user free one)',
      },
    },
    required: ['type', 'title', 'status', 'detail', 'code', 'request_id'],
    additionalProperties: false,
  },
  Policy: obj(policy),
  Price: obj({
    amount: int("In the currency's minor unit (cents)", { minimum: 1 }),
    currency: str('ISO 4217, e.g. usd', { minLength: 3, maxLength: 3 }),
    interval: orNull({ enum: [...priceIntervals], description: 'null: a one-time price' }),
    interval_count: orNull(int('Bill every this many intervals; null for a one-time price', { minimum: 1 })),
    trial_days: int('Free days before the first payment of a new subscription', { minimum: 0 }),
  }),
  Product: obj({
    id: id('prod'),
    name: str(undefined, { minLength: 1, maxLength: PRODUCT_NAME_MAX_LENGTH }),
    description: orNull(str(undefined, { maxLength: PRODUCT_DESCRIPTION_MAX_LENGTH })),
    policy: ref('Policy'),
    price: orNull(ref('Price')),
    email_on_purchase: { type: 'boolean', description: 'Whether a purchase e-mails the buyer their key' },
    created_at: time(),
    archived_at: orNull(
      time('When it was archived: it then sells and issues nothing new, its licences keep working; null while on sale'),
    ),
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
    key: str(
      'The licence key: six groups of five Crockford base32 characters, or a key imported from another system (8 to 64 characters, kept as it was)',
      {
        anyOf: [
          { type: 'string', pattern: LICENSE_KEY_PATTERN },
          { type: 'string', pattern: FOREIGN_KEY_PATTERN },
        ],
        examples: [EXAMPLE_LICENSE_KEY],
      },
    ),
    product_id: id('prod'),
    customer_email: orNull(str('null for validate-scope keys unless the policy allows it')),
    status: licenseStatus,
    expires_at: orNull(time('null = perpetual')),
    policy: ref('Policy'),
    overrides: licenseOverrides,
    activations: int('Active machines (counted on GET of one licence; 0 in lists)', { minimum: 0 }),
    metadata: { ...metadata, description: `${metadata.description}; {} in answers to validate-scope keys` },
    entitlements: effectiveEntitlements,
    extra_entitlements: {
      ...entitlementsSchema,
      description: "The licence's own entitlements on top of its policy's (set with PATCH, replaced whole)",
    },
    created_at: time(),
    last_validated_at: orNull(
      time(
        'When a validation last saw this licence, written in batches every few seconds; on GET of one licence only (null in lists and when never validated)',
      ),
    ),
    subscription: orNull(ref('LicenseSubscription')),
  }),
  LicenseSubscription: obj(
    {
      id: id('sub'),
      status: { enum: [...subscriptionStatuses] },
      trial_end: orNull(time('While trialing: when the trial ends')),
      paid_through: orNull(time('The end of the last paid (or trial) period; once canceled, the moment it ended')),
      grace_until: orNull(
        time(
          "While past_due: the end of the payment grace (period end + payment_grace_days), until which the licence stays valid; null otherwise. (A signed licence file's grace_until is when the licence stops validating, whatever the status.)",
        ),
      ),
    },
    undefined,
    { description: 'The subscription the licence follows (null: not a subscription licence)' },
  ),
  Subscription: obj({
    id: id('sub'),
    status: { enum: [...subscriptionStatuses] },
    product_id: id('prod'),
    customer_email: str(),
    license_key: orNull(str()),
    quantity: int('Seats', { minimum: 1, maximum: SEATS_MAX }),
    current_period_start: time(),
    current_period_end: time(),
    cancel_at_period_end: { type: 'boolean' },
    trial_end: orNull(time()),
    livemode: { type: 'boolean' },
    created_at: time(),
    interval: { enum: [...priceIntervals] },
    interval_count: int(undefined, { minimum: 1 }),
    amount: int('Per period, every seat, in minor units', { minimum: 0 }),
    currency: str(),
    canceled_at: orNull(time()),
    test_clock: orNull(time("Test mode: the subscription's clock; null for live subscriptions")),
    invoices: {
      type: 'array',
      description: 'Newest first (GET of one subscription; [] in lists)',
      items: obj({
        id: str(),
        period_start: time(),
        period_end: time(),
        amount: int(undefined, { minimum: 0 }),
        currency: str(),
        status: { enum: [...invoiceStatuses] },
        created_at: time(),
      }),
    },
    refunds: {
      type: 'array',
      description:
        "Refunds in full and disputes (chargebacks) of its invoices, newest first (GET of one subscription; [] in lists). A renewal's or a proration's leaves the licence as it is; the first payment's ends the subscription (cancelled on Stripe too) and applies the product's refund_action to the licence",
      items: obj({
        invoice_id: str(),
        cause: { enum: [...refundCauses] },
        amount: int("The invoice's amount, in minor units", { minimum: 0 }),
        currency: str(),
        refunded_at: time('When the refund or dispute was received'),
      }),
    },
  }),
  BillingPortal: obj({
    url: str('Where the customer updates their card', { format: 'uri' }),
    expires_at: time(),
  }),
  LicenseCreated: obj({ success: { const: true }, license_key: str(), license: ref('License') }),
  LicenseBatch: obj(
    {
      id: id('lbat'),
      object: { const: 'license_batch' },
      status: {
        enum: [...licenseBatchStatuses],
        description: 'running until every item is issued (or failed) and its mails are queued; then done',
      },
      product_id: id('prod'),
      total: int('Items in the batch', { minimum: 1 }),
      issued: int(undefined, { minimum: 0 }),
      failed: int(undefined, { minimum: 0 }),
      waiting: int('Items not issued yet', { minimum: 0 }),
      results: {
        type: 'array',
        description: 'One per item, in request order',
        items: obj({
          index: int("The item's position in `licenses`, from 0", { minimum: 0 }),
          status: { enum: [...licenseBatchItemStatuses] },
          license_id: id('lic'),
          license_key: orNull(str('Set once issued')),
          error: orNull(str('Why the item failed (failed only)')),
        }),
      },
      created_at: time(),
      completed_at: orNull(time('Set when done')),
    },
    undefined,
    {
      description:
        'A licence batch job (POST /api/v1/licenses/batch): its progress, the keys issued and the items that failed',
    },
  ),
  Activation: obj({
    id: id('act'),
    fingerprint: str(undefined, { maxLength: FINGERPRINT_MAX_LENGTH }),
    name: orNull(str(undefined, { maxLength: ACTIVATION_NAME_MAX_LENGTH })),
    created_at: time(),
    lease_expires_at: orNull(
      time(
        'Floating seats (a policy with lease_seconds): when this seat lapses unless heartbeated; in the past = lapsed, not yet reclaimed. null for a node-locked activation',
      ),
    ),
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
  NextAction: { enum: [...nextActions] },
  QueryValidation: obj({
    valid: { type: 'boolean' },
    code: ref('ValidationCode'),
    detail: str(),
    product_id: orNull(str()),
    customer_email: orNull(str()),
    status: orNull(licenseStatus),
    expires_at: orNull(time()),
    entitlements: effectiveEntitlements,
    next_action: ref('NextAction'),
    cache_until: time('Trust this answer offline until then'),
    trial_end: orNull(time('A trialing subscription licence: when its trial ends; else null')),
  }),
  KeyValidation: obj({
    valid: { type: 'boolean' },
    code: ref('ValidationCode'),
    detail: str(),
    status: orNull(licenseStatus),
    expires_at: orNull(time()),
    entitlements: effectiveEntitlements,
    next_action: ref('NextAction'),
    cache_until: time(),
    trial_end: orNull(time('A trialing subscription licence: when its trial ends; else null')),
    license: orNull(ref('License')),
  }),
  CheckoutSession: obj({
    id: id('cs'),
    url: str('Where to send the customer to pay: Stripe Checkout, or the hosted test-mode page', { format: 'uri' }),
    status: { enum: [...checkoutStatuses] },
    expires_at: time(),
    product_id: id('prod'),
    amount: int(undefined, { minimum: 1 }),
    currency: str(),
    customer_email: orNull(str()),
    success_url: str(),
    cancel_url: orNull(str()),
    metadata,
    license_key: orNull(str('Set once the session is complete')),
    quantity: int('Seats bought (1 for a one-time price)', { minimum: 1, maximum: SEATS_MAX }),
    subscription_id: orNull(str('The subscription a paid recurring checkout started')),
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
  ApiKey: obj(apiKeyFields),
  ApiKeyWithSecret: obj({ ...apiKeyFields, key: str('The key itself; shown only here, keep it safe') }),
  Member: obj({
    id: id('mem'),
    email: str(),
    role: { enum: [...MEMBER_ROLES], description: 'What the member may do (docs/api.md, "Roles")' },
    status: { enum: [...MEMBER_STATUSES], description: 'invited until the mailed link is used; removed after DELETE' },
    name: orNull(str('The name they gave when they accepted')),
    invited_by: str('api_key:<id>, an e-mail, or "sign-up" for the owner who made the account'),
    created_at: time(),
  }),
  AuditEvent: obj({
    id: id('aud'),
    at: time(),
    actor: obj(
      {
        type: {
          enum: [...actorTypes],
          description: 'member, api_key, license (an app signed in with its licence) or system',
        },
        id: str('The member, API key or licence id; "system" for the system'),
        name: orNull(str("A member's e-mail or an API key's name")),
        email: orNull(str("A member's e-mail (members only)")),
      },
      ['type', 'id', 'name'],
    ),
    action: str('What happened: an event type (license.suspended, api_key.created, …)'),
    target: obj({ type: str('license, product, api_key, checkout, subscription, …'), id: str() }),
    request_id: orNull(str('The request that made the change (null for the system)')),
    ip: orNull(str("The client's address")),
    user_agent: orNull(str()),
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
    status: { enum: [...deliveryStatuses] },
    attempts: int(undefined, { minimum: 0 }),
    last_status_code: orNull(int()),
    last_error: orNull(str()),
    last_latency_ms: orNull({ type: 'number', minimum: 0 }),
    next_attempt_at: orNull(time()),
    delivered_at: orNull(time()),
    created_at: time(),
  }),
  Email: obj({
    id: id('eml'),
    to: str('The buyer it goes to'),
    template: { enum: [...emailTemplates] },
    subject: orNull(str('Set once the mail is first rendered')),
    license_key: str(),
    status: { enum: [...emailStatuses] },
    attempts: int(undefined, { minimum: 0 }),
    last_error: orNull(str('Why the last attempt failed')),
    next_attempt_at: orNull(time()),
    created_at: time(),
    sent_at: orNull(time()),
  }),
  SeatRescue: obj({ object: { const: 'seat_rescue' }, status: { const: 'queued' } }, undefined, {
    description:
      "Queued: the licence's customer gets a one-time portal link to its machines by e-mail (the answer never says the address)",
  }),
  CustomerErasure: obj({
    object: { const: 'customer_erasure' },
    placeholder: str('What replaces the e-mail everywhere: erased-<16 hex>@erased.invalid'),
    erased: int('Documents (licences, checkout sessions, mails, deliveries…) that no longer hold the e-mail', {
      minimum: 0,
    }),
  }),
  ...statusSchemas,
  ...releaseSchemas,
  Empty: obj({}, [], { description: 'An empty JSON object (or no body)' }),
  Import: obj({
    id: id('imp'),
    status: { enum: [...jobStatuses], description: 'running until every row is done (or the file failed as a whole)' },
    format: { enum: [...importFormats] },
    total: int('Data rows in the file (rows read so far until the job has counted them)', { minimum: 0 }),
    imported: int('Rows imported: licences (and the products and webhook endpoints of an export) added', {
      minimum: 0,
    }),
    skipped: int(
      'Rows already in the account with the same fields, and the records of an export that are not imported (each in notices, with why)',
      { minimum: 0 },
    ),
    rejected: int('Rows refused; the first 1,000 are in errors', { minimum: 0 }),
    errors: {
      type: 'array',
      maxItems: 1000,
      items: obj({ row: int('Data row, counted from 1 (a CSV header is not a row)', { minimum: 1 }), message: str() }),
    },
    notices: {
      type: 'array',
      maxItems: 1000,
      description:
        "The first 1,000 rows skipped for a reason (an export's checkout sessions and subscriptions, which stay with the installation that took their payments) or imported with a change (a webhook endpoint, created with a new signing secret)",
      items: obj({ row: int('Data row, counted from 1', { minimum: 1 }), message: str() }),
    },
    failure: orNull(str('Why the file failed as a whole (status failed)')),
    created_at: time(),
    finished_at: orNull(time()),
  }),
  Export: obj({
    id: id('exp'),
    status: {
      enum: [...exportStatuses],
      description: 'expired once its file is deleted: 24 hours after it finished, or at an erasure of a customer',
    },
    counts: {
      type: 'object',
      additionalProperties: { type: 'integer', minimum: 0 },
      description: 'Lines written so far by type (product, license, checkout_session, webhook_endpoint, subscription)',
    },
    bytes: int('Size of the file so far', { minimum: 0 }),
    failure: orNull(
      str(
        'Why the export failed (status failed). When the gateway process running it stopped mid-way (a crash, a restart), the export ends failed within a minute with "the process running this export stopped before it finished …: start a new export"; it is never left running.',
      ),
    ),
    created_at: time(),
    finished_at: orNull(time()),
    expires_at: orNull(time('The file can be downloaded until then (24 hours after it finished)')),
    download_url: orNull(str('GET it for the JSON lines (status done)')),
  }),
};

/** `{data, has_more, next_cursor}` of one item schema. */
export const listOf = (item: string): Schema =>
  obj({
    data: { type: 'array', items: ref(item) },
    has_more: { type: 'boolean' },
    next_cursor: orNull(str('Pass as starting_after for the next page')),
  });
