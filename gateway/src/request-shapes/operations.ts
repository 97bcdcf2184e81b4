import {
  API_KEY_NAME_MAX_LENGTH,
  API_KEY_ROLES,
  GIVEN_MEMBER_ROLES,
  ACTIVATION_NAME_MAX_LENGTH,
  BATCH_MAX_ITEMS,
  CHECKOUT_EXPIRES_MAX_MINUTES,
  CHECKOUT_EXPIRES_MIN_MINUTES,
  checkoutStatuses,
  EMAIL_MAX_LENGTH,
  FILE_TTL_DEFAULT_DAYS,
  FILE_TTL_MAX_DAYS,
  FINGERPRINT_MAX_LENGTH,
  MAX_LICENSE_KEY_LENGTH,
  METADATA_MAX_ENTRIES,
  PRICE_AMOUNT_MAX,
  PRICE_INTERVAL_COUNT_MAX,
  PRICE_TRIAL_DAYS_MAX,
  PRODUCT_DESCRIPTION_MAX_LENGTH,
  PRODUCT_NAME_MAX_LENGTH,
  REROLL_GRACE_HOURS_MAX,
  SEATS_MAX,
  TEST_CLOCK_MAX_ADVANCE_YEARS,
  URL_MAX_LENGTH,
  WEBHOOK_DESCRIPTION_MAX_LENGTH,
  artifactArchs,
  artifactPlatforms,
  releaseChannels,
  releaseStatuses,
  RELEASE_ENTITLEMENTS_MAX,
  RELEASE_NOTES_MAX_LENGTH,
  RELEASE_VERSION_MAX_LENGTH,
  importFormats,
  licenseStatuses,
  policyFields,
  policyRules,
  priceIntervals,
  subscriptionStatuses,
  type PolicyRule,
} from '@licensing/proto';
import { pageShape, type Field, type ObjectField, type QueryShape, type Shape } from './shapes';

// What each operation accepts: the routes validate with these shapes and the
// OpenAPI document's request schemas are generated from them
// (openapi/request-schemas.ts). A limit the services check again (they also
// serve the dashboard) is read from proto/rules (the *-limits.ts files), where
// it is declared once for both sides; the rest are the gateway's own.

/** A policy field as the REST body sends it: proto/rules/policy.ts's range, words and meaning. */
function policyField(rule: PolicyRule): Field {
  switch (rule.kind) {
    case 'int':
      return { kind: 'int', min: rule.min, max: rule.max, nullable: rule.nullable, description: rule.description };
    case 'bool':
      return { kind: 'bool', description: rule.description };
    case 'enum':
      return { kind: 'enum', values: rule.values, description: rule.description };
    case 'entitlements':
      return { kind: 'entitlements', description: rule.description };
  }
}

/** A policy object as sent; omitted fields take their defaults (the product service applies them). */
export const policyInput = {
  kind: 'object',
  component: 'PolicyInput',
  description: 'Omitted fields take their defaults: perpetual, unlimited, no grace, false, no entitlements',
  shape: Object.fromEntries(policyFields.map((f) => [f, policyField(policyRules[f])])),
} satisfies ObjectField;

const priceShape = {
  amount: {
    kind: 'int',
    required: true,
    min: 1,
    max: PRICE_AMOUNT_MAX,
    description: "In the currency's minor unit (cents)",
  },
  currency: { required: true, max: 3, description: 'ISO 4217, e.g. usd' },
  interval: {
    kind: 'enum',
    values: priceIntervals,
    nullable: true,
    description: 'A subscription billed every interval_count months or years; null or absent: a one-time price',
  },
  interval_count: {
    kind: 'int',
    min: 1,
    max: PRICE_INTERVAL_COUNT_MAX,
    description: 'With an interval: bill every this many (default 1)',
  },
  trial_days: {
    kind: 'int',
    min: 0,
    max: PRICE_TRIAL_DAYS_MAX,
    description: 'With an interval: free days before the first payment (default 0)',
  },
} satisfies Shape;

export const productCreate = {
  name: { required: true, max: PRODUCT_NAME_MAX_LENGTH },
  description: { max: PRODUCT_DESCRIPTION_MAX_LENGTH, multiline: true },
  policy: policyInput,
  price: { kind: 'object', shape: priceShape },
  email_on_purchase: {
    kind: 'bool',
    description: 'Whether a purchase e-mails the buyer their key (default true; false if you send your own)',
  },
} satisfies Shape;

export const productUpdate = {
  name: { max: PRODUCT_NAME_MAX_LENGTH },
  description: { max: PRODUCT_DESCRIPTION_MAX_LENGTH, multiline: true },
  policy: policyInput,
  price: { kind: 'object', shape: priceShape, nullable: true, description: 'null removes the price' },
  email_on_purchase: { kind: 'bool', description: 'Whether a purchase e-mails the buyer their key' },
} satisfies Shape;

const metadata = {
  kind: 'map',
  maxEntries: METADATA_MAX_ENTRIES,
  description: `Your own key/value strings (at most ${METADATA_MAX_ENTRIES} entries)`,
} as const;

export const licenseList = {
  ...pageShape,
  product_id: { max: 64, description: "Only this product's licences" },
  customer_email: { max: EMAIL_MAX_LENGTH, description: "Only this customer's licences" },
  status: { kind: 'enum', values: licenseStatuses, description: 'Only licences in this status' },
} satisfies QueryShape;

/**
 * A licence's own terms over its product's policy (docs/api.md, "Per-licence terms"): the policy rule's
 * ranges (proto/rules/policy.ts), and an expiry the licence service checks as a time.
 */
const licenseTerms = {
  expires_at: {
    max: 64,
    nullable: true,
    format: 'date-time',
    description: "This licence's own expiry (ISO 8601), over the policy's duration_days; null: perpetual",
  },
  max_activations: {
    kind: 'int',
    min: policyRules.max_activations.min,
    max: policyRules.max_activations.max,
    nullable: true,
    description: "This licence's own max_activations, over its product's policy; null: unlimited",
  },
  lease_seconds: {
    kind: 'int',
    min: policyRules.lease_seconds.min,
    max: policyRules.lease_seconds.max,
    nullable: true,
    description:
      "This licence's own lease_seconds, over its product's policy (on a node-locked policy it makes the licence floating); null: node-locked",
  },
} satisfies Shape;

export const licenseCreate = {
  product_id: { required: true, max: 64 },
  customer_email: { required: true, max: EMAIL_MAX_LENGTH },
  send_email: {
    kind: 'bool',
    description: 'Also e-mail the licence (the purchase e-mail) to customer_email; see GET /api/v1/emails',
  },
  ...licenseTerms,
} satisfies Shape;

export const licenseBatchCreate = {
  product_id: { required: true, max: 64 },
  licenses: {
    kind: 'objects',
    required: true,
    minItems: 1,
    maxItems: BATCH_MAX_ITEMS,
    description: `The licences to issue (1 to ${BATCH_MAX_ITEMS.toLocaleString('en')}), each checked before any is issued; problems name the item: licenses[3].customer_email`,
    shape: {
      customer_email: { required: true, max: EMAIL_MAX_LENGTH },
      metadata: {
        ...metadata,
        description: `Your own key/value strings for this licence (at most ${METADATA_MAX_ENTRIES} entries)`,
      },
      entitlements: { kind: 'entitlements', description: "The licence's own entitlements on top of its policy's" },
      send_email: {
        kind: 'bool',
        description: 'Also e-mail the licence (the purchase e-mail) to customer_email once it is issued',
      },
    },
  },
} satisfies Shape;

export const licenseReroll = {
  grace_hours: {
    kind: 'int',
    min: 0,
    max: REROLL_GRACE_HOURS_MAX,
    default: 0,
    description:
      'How long the old key keeps validating (answering next_action update_key), in hours; 0 (the default): it stops at once',
  },
  send_email: {
    kind: 'bool',
    description: "Also e-mail the new key (the licence e-mail) to the licence's customer_email",
  },
} satisfies Shape;

/** A licence key as a path or query parameter: longer ones are refused unread (no key is longer). */
export const KEY_MAX = MAX_LICENSE_KEY_LENGTH;

export const licenseValidateQuery = {
  license_key: { required: true, max: KEY_MAX, description: 'The key to check' },
  fingerprint: { max: FINGERPRINT_MAX_LENGTH, description: "This machine's fingerprint" },
} satisfies QueryShape;

export const deactivationQuery = {
  fingerprint: {
    max: FINGERPRINT_MAX_LENGTH,
    description:
      "With an app credential: this machine's fingerprint. Its own floating seat is then released without counting against the policy's customer_deactivations_per_30_days",
  },
} satisfies QueryShape;

export const keyValidationRequest = {
  key: { required: true, max: KEY_MAX },
  product_id: { max: 64 },
  fingerprint: { max: FINGERPRINT_MAX_LENGTH },
  entitlements: {
    kind: 'entitlements',
    description: 'Entitlement codes the app needs: any the licence lacks answers valid: false, entitlements_missing',
  },
} satisfies Shape;

export const licenseUpdate = {
  customer_email: { max: EMAIL_MAX_LENGTH },
  metadata: { ...metadata, description: "Merged into the licence's metadata; an empty value removes that entry" },
  entitlements: {
    kind: 'entitlements',
    description: "The licence's own entitlements on top of its policy's, replaced whole ([] clears them)",
  },
  ...licenseTerms,
  deactivate_excess: {
    kind: 'bool',
    description:
      'With max_activations below the machines in use: deactivate the longest-unseen until they fit (else 409)',
  },
} satisfies Shape;

export const activationCreate = {
  fingerprint: { required: true, max: FINGERPRINT_MAX_LENGTH },
  name: { max: ACTIVATION_NAME_MAX_LENGTH },
} satisfies Shape;

export const licenseFileRequest = {
  fingerprint: { max: FINGERPRINT_MAX_LENGTH, description: 'Bind the file to one machine' },
  ttl_days: {
    kind: 'int',
    min: 1,
    max: FILE_TTL_MAX_DAYS,
    description: `How long the file is valid offline, in days: ${FILE_TTL_DEFAULT_DAYS} when absent; with an app credential at most the policy's max_file_ttl_days (and that when absent, if smaller than ${FILE_TTL_DEFAULT_DAYS})`,
  },
} satisfies Shape;

export const checkoutList = {
  ...pageShape,
  status: { kind: 'enum', values: checkoutStatuses, description: 'Only sessions in this status' },
} satisfies QueryShape;

export const checkoutCreate = {
  product_id: { required: true, max: 64 },
  customer_email: { max: EMAIL_MAX_LENGTH },
  success_url: {
    required: true,
    max: URL_MAX_LENGTH,
    description: 'Absolute URL the buyer returns to after paying, with `session_id` added; https in production',
  },
  cancel_url: { max: URL_MAX_LENGTH },
  metadata,
  expires_in_minutes: {
    kind: 'int',
    min: CHECKOUT_EXPIRES_MIN_MINUTES,
    max: CHECKOUT_EXPIRES_MAX_MINUTES,
    default: CHECKOUT_EXPIRES_MAX_MINUTES,
  },
  quantity: {
    kind: 'int',
    min: 1,
    max: SEATS_MAX,
    description: "Seats (recurring prices only; default 1): the licence's max_activations is multiplied by it",
  },
} satisfies Shape;

export const subscriptionList = {
  ...pageShape,
  status: { kind: 'enum', values: subscriptionStatuses, description: 'Only subscriptions in this status' },
  customer_email: { max: EMAIL_MAX_LENGTH, description: "Only this customer's subscriptions (case-insensitive)" },
  product_id: { max: 64, description: "Only this product's subscriptions" },
} satisfies QueryShape;

export const subscriptionCancel = {
  at_period_end: {
    kind: 'bool',
    required: true,
    description: 'true: at the end of the current period (valid until then); false: now (the licence expires now)',
  },
} satisfies Shape;

export const subscriptionTestClock = {
  advance_to: {
    required: true,
    max: 40,
    description: `RFC 3339 time after the subscription's clock, at most ${TEST_CLOCK_MAX_ADVANCE_YEARS} years ahead of it`,
  },
} satisfies Shape;

const events = { kind: 'list', maxItems: 50, maxLength: 64, description: 'Event types, or "*" for all' } as const;

export const webhookEndpointCreate = {
  url: { required: true, max: URL_MAX_LENGTH },
  events: { ...events, required: true },
  description: { max: WEBHOOK_DESCRIPTION_MAX_LENGTH, multiline: true },
} satisfies Shape;

export const webhookEndpointUpdate = {
  url: { max: URL_MAX_LENGTH },
  events,
  description: { max: WEBHOOK_DESCRIPTION_MAX_LENGTH, multiline: true },
  enabled: { kind: 'bool' },
} satisfies Shape;

/** POST /api/v1/imports: the file's format (the body is the file itself, streamed). */
export const importCreateQuery = {
  format: {
    kind: 'enum',
    values: importFormats,
    required: true,
    description:
      'jsonl (Content-Type: application/x-ndjson), or csv, keygen, lemonsqueezy, gumroad (Content-Type: text/csv)',
  },
} satisfies QueryShape;

/** POST /api/v1/api-keys: a name, and the role (at most its creator's; proto/rules/roles.ts). */
export const apiKeyCreate = {
  name: { required: true, max: API_KEY_NAME_MAX_LENGTH, description: 'What the key is for' },
  role: { kind: 'enum', values: API_KEY_ROLES, required: true, description: 'What the key may do' },
} satisfies Shape;

export const auditEventList = {
  ...pageShape,
  actor_id: { max: 100, description: 'Only what this actor did (a member, an API key or a licence id, or "system")' },
  action: { max: 64, description: 'Only entries of this action (an event type such as license.suspended)' },
  target_id: { max: 100, description: 'Only entries about this object (a licence, product, key, … id)' },
  since: { max: 40, description: 'Only entries at or after this time (ISO 8601)' },
  until: { max: 40, description: 'Only entries before this time (ISO 8601); after since' },
} satisfies QueryShape;

export const memberInvite = {
  email: { required: true, max: EMAIL_MAX_LENGTH, description: 'Where the invitation goes' },
  role: { kind: 'enum', values: GIVEN_MEMBER_ROLES, required: true, description: 'What the member may do' },
} satisfies Shape;

export const memberUpdate = {
  role: { kind: 'enum', values: GIVEN_MEMBER_ROLES, required: true, description: 'The new role' },
} satisfies Shape;

export const ownershipTransfer = {
  member_id: { required: true, max: 64, description: 'The active member who becomes the owner' },
} satisfies Shape;

/** A new release of a product (its version, channel, notes, publication time and needed entitlements). */
export const releaseCreate = {
  version: {
    required: true,
    max: RELEASE_VERSION_MAX_LENGTH,
    description: 'Semantic Versioning 2.0.0 (1.4.2, 2.0.0-beta.1); once per product',
  },
  channel: {
    kind: 'enum',
    values: releaseChannels,
    description:
      "stable, beta, alpha or dev; default: from the version's pre-release tag (beta for -beta.1 and -rc.1), else stable",
  },
  notes: { max: RELEASE_NOTES_MAX_LENGTH, multiline: true, description: 'Release notes (shown in update feeds)' },
  published_at: { max: 40, description: 'ISO 8601; default: when it is published' },
  entitlements: {
    kind: 'entitlements',
    maxItems: RELEASE_ENTITLEMENTS_MAX,
    description: 'What a licence must have, besides being valid, to download it',
  },
} satisfies Shape;

/** A product's releases, filtered. */
export const releaseList = {
  ...pageShape,
  channel: { kind: 'enum', values: releaseChannels, description: 'Only this channel' },
  status: { kind: 'enum', values: releaseStatuses, description: 'Only draft, published or yanked releases' },
} satisfies QueryShape;

/** What an uploaded release file is for. */
export const artifactUpload = {
  platform: { kind: 'enum', values: artifactPlatforms, description: 'The operating system it is for; default any' },
  arch: { kind: 'enum', values: artifactArchs, description: 'The processor it is for; default any' },
} satisfies QueryShape;

/** The licence an API key (or the app, without a header) downloads or asks for updates as. */
const licenseKeyParameter = {
  license_key: {
    max: KEY_MAX,
    description:
      'The licence asking: with a validate-scope key, or alone (no Authorization header) for updaters that cannot send one. Never logged',
  },
} satisfies QueryShape;

export const artifactDownload = { ...licenseKeyParameter } satisfies QueryShape;

/** GET /products/{id}/updates: the version the app runs and the machine it runs on. */
export const updateCheck = {
  version: { required: true, max: RELEASE_VERSION_MAX_LENGTH, description: 'The version the app runs (semver)' },
  platform: { kind: 'enum', values: artifactPlatforms, description: 'Only releases with a file for this system' },
  arch: { kind: 'enum', values: artifactArchs, description: 'Only releases with a file for this processor' },
  channel: {
    kind: 'enum',
    values: releaseChannels,
    description: 'The least stable channel wanted (beta: beta and stable); default stable',
  },
  ...licenseKeyParameter,
} satisfies QueryShape;

export const appcastQuery = {
  channel: updateCheck.channel,
  ...licenseKeyParameter,
} satisfies QueryShape;

export const tauriQuery = { ...licenseKeyParameter } satisfies QueryShape;
