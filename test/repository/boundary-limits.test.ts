import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import {
  ACTIVATION_NAME_MAX_LENGTH,
  BATCH_MAX_ITEMS,
  CHECKOUT_EXPIRES_MAX_MINUTES,
  CHECKOUT_EXPIRES_MIN_MINUTES,
  EMAIL_MAX_LENGTH,
  ENTITLEMENT_CODE_MAX_LENGTH,
  FILE_TTL_MAX_DAYS,
  FINGERPRINT_MAX_LENGTH,
  licenseStatuses,
  MAX_IMPORT_BYTES,
  MAX_LICENSE_KEY_LENGTH,
  MAX_VALIDATIONS_PER_CALL,
  METADATA_MAX_ENTRIES,
  METADATA_VALUE_MAX_LENGTH,
  PRICE_AMOUNT_MAX,
  PRICE_INTERVAL_COUNT_MAX,
  PRICE_TRIAL_DAYS_MAX,
  PRODUCT_DESCRIPTION_MAX_LENGTH,
  PRODUCT_NAME_MAX_LENGTH,
  RELEASE_ENTITLEMENTS_MAX,
  RELEASE_NOTES_MAX_LENGTH,
  RELEASE_VERSION_MAX_LENGTH,
  REROLL_GRACE_HOURS_MAX,
  SEATS_MAX,
  URL_MAX_LENGTH,
  WEBHOOK_DESCRIPTION_MAX_LENGTH,
} from '@licensing/proto';
import * as checkoutLimits from '../../proto/rules/checkout-limits';
import * as emailAddress from '../../proto/rules/email-address';
import * as importLimits from '../../proto/rules/import-limits';
import * as licenseLimits from '../../proto/rules/license-limits';
import * as metadataLimits from '../../proto/rules/metadata-limits';
import * as productLimits from '../../proto/rules/product-limits';
import * as releaseLimits from '../../proto/rules/release-limits';
import * as webhookLimits from '../../proto/rules/webhook-limits';
import { AppError, checkEmail } from '@licensing/runtime';
import { gatewaySchema } from '../../gateway/src/config';
import { MAX_BATCH } from '../../gateway/src/license-validation/lookup-batch';
import { openApiDocument } from '../../gateway/src/openapi/document';
import { CSV_MAX_ROWS } from '../../web/src/dashboard/csv-emails';
import { checkBatchItems } from '../../services/license/src/transfer/domain/license-batch';
import { importRowStatuses } from '../../services/license/src/transfer/domain/import-rows';
import { checkFingerprint, mergeMetadata } from '../../services/license/src/domain/metadata';
import { graceEnd } from '../../services/license/src/domain/reroll';
import { checkMetadata } from '../../services/checkout/src/domain/metadata';
import { checkRedirectUrl, expiryMinutes } from '../../services/checkout/src/domain/session';
import { checkQuantity } from '../../services/checkout/src/domain/subscription';
import { checkPrice } from '../../services/product/src/domain/price';
import { checkProductInput } from '../../services/product/src/domain/product';
import { checkReleaseInput } from '../../services/product/src/domain/release';
import { checkDescription } from '../../services/webhook/src/domain/endpoint';

// A limit a request meets on both sides of the gateway–service boundary is declared once, in proto/rules,
// and read from there by both: the gateway's request shapes (so the OpenAPI document and the SDK's types)
// and the service's own check. This holds the document's numbers to the constants, each service's check to
// the same constant (the value passes, one more is refused), and no second declaration anywhere else.

type Json = Record<string, any>;
const doc = openApiDocument('test') as unknown as Json;
const schemas = doc.components.schemas as Record<string, Json>;
const props = (name: string): Record<string, Json> => schemas[name].properties;

/** Every path and query parameter of the document with its operation. */
const parameters = Object.entries(doc.paths as Record<string, Json>).flatMap(([path, ops]) =>
  Object.entries(ops).flatMap(([method, op]) =>
    ((op as Json).parameters ?? []).map((p: Json) => ({ at: `${method.toUpperCase()} ${path}`, ...p })),
  ),
);

const refused = (fn: () => unknown, field?: string) => {
  let thrown: unknown;
  try {
    fn();
  } catch (err) {
    thrown = err;
  }
  expect(thrown).toBeInstanceOf(AppError);
  expect((thrown as AppError).code).toBe('invalid_request');
  if (field) expect((thrown as AppError).fieldErrors.map((f) => f.field)).toContain(field);
};

describe('the OpenAPI document states the limits proto/rules declares', () => {
  it('licences: batch size, reroll grace, file validity, fingerprint, activation name, e-mail', () => {
    expect(props('LicenseBatchCreate').licenses.maxItems).toBe(BATCH_MAX_ITEMS);
    expect(props('LicenseBatchCreate').licenses.items.properties.customer_email.maxLength).toBe(EMAIL_MAX_LENGTH);
    expect(props('LicenseBatchCreate').licenses.items.properties.metadata.maxProperties).toBe(METADATA_MAX_ENTRIES);
    expect(props('LicenseReroll').grace_hours.maximum).toBe(REROLL_GRACE_HOURS_MAX);
    expect(props('LicenseFileRequest').ttl_days.maximum).toBe(FILE_TTL_MAX_DAYS);
    expect(props('ActivationCreate').fingerprint.maxLength).toBe(FINGERPRINT_MAX_LENGTH);
    expect(props('ActivationCreate').name.maxLength).toBe(ACTIVATION_NAME_MAX_LENGTH);
    expect(props('Activation').fingerprint.maxLength).toBe(FINGERPRINT_MAX_LENGTH);
    expect(props('KeyValidationRequest').fingerprint.maxLength).toBe(FINGERPRINT_MAX_LENGTH);
    expect(props('LicenseCreate').customer_email.maxLength).toBe(EMAIL_MAX_LENGTH);
    expect(props('LicenseUpdate').metadata.maxProperties).toBe(METADATA_MAX_ENTRIES);
  });

  it('the licence key: every key parameter and the key of a validation, at MAX_LICENSE_KEY_LENGTH', () => {
    const keys = parameters.filter((p) => p.name === 'key' || p.name === 'license_key');
    expect(keys.length).toBeGreaterThan(10);
    for (const p of keys) expect([p.at, p.name, p.schema.maxLength]).toEqual([p.at, p.name, MAX_LICENSE_KEY_LENGTH]);
    expect(props('KeyValidationRequest').key.maxLength).toBe(MAX_LICENSE_KEY_LENGTH);
    expect(props('KeyValidationRequest').entitlements.items.maxLength).toBe(ENTITLEMENT_CODE_MAX_LENGTH);
    const emails = parameters.filter((p) => p.name === 'email' || p.name === 'customer_email');
    expect(emails.length).toBeGreaterThan(1);
    for (const p of emails) expect([p.at, p.schema.maxLength]).toEqual([p.at, EMAIL_MAX_LENGTH]);
  });

  it('products and their prices', () => {
    for (const name of ['ProductCreate', 'ProductUpdate']) {
      expect(props(name).name.maxLength).toBe(PRODUCT_NAME_MAX_LENGTH);
      expect(props(name).description.maxLength).toBe(PRODUCT_DESCRIPTION_MAX_LENGTH);
    }
    expect(props('Product').name.maxLength).toBe(PRODUCT_NAME_MAX_LENGTH);
    const price = props('ProductCreate').price.properties;
    expect(price.amount.maximum).toBe(PRICE_AMOUNT_MAX);
    expect(price.interval_count.maximum).toBe(PRICE_INTERVAL_COUNT_MAX);
    expect(price.trial_days.maximum).toBe(PRICE_TRIAL_DAYS_MAX);
  });

  it('checkout sessions, subscriptions and webhook endpoints', () => {
    const checkout = props('CheckoutCreate');
    expect([checkout.expires_in_minutes.minimum, checkout.expires_in_minutes.maximum]).toEqual([
      CHECKOUT_EXPIRES_MIN_MINUTES,
      CHECKOUT_EXPIRES_MAX_MINUTES,
    ]);
    expect(checkout.expires_in_minutes.default).toBe(CHECKOUT_EXPIRES_MAX_MINUTES);
    expect(checkout.success_url.maxLength).toBe(URL_MAX_LENGTH);
    expect(checkout.cancel_url.maxLength).toBe(URL_MAX_LENGTH);
    expect(checkout.quantity.maximum).toBe(SEATS_MAX);
    expect(checkout.metadata.maxProperties).toBe(METADATA_MAX_ENTRIES);
    expect(props('CheckoutSession').quantity.maximum).toBe(SEATS_MAX);
    expect(props('Subscription').quantity.maximum).toBe(SEATS_MAX);
    for (const name of ['WebhookEndpointCreate', 'WebhookEndpointUpdate']) {
      expect(props(name).url.maxLength).toBe(URL_MAX_LENGTH);
      expect(props(name).description.maxLength).toBe(WEBHOOK_DESCRIPTION_MAX_LENGTH);
    }
  });
});

describe("the gateway's own bounds stay within the services'", () => {
  it('an import file (IMPORT_MAX_BYTES may only lower MAX_IMPORT_BYTES), a lookup batch, the dashboard CSV', () => {
    expect(gatewaySchema.IMPORT_MAX_BYTES.max).toBe(MAX_IMPORT_BYTES);
    expect(gatewaySchema.IMPORT_MAX_BYTES.default).toBe(MAX_IMPORT_BYTES);
    expect(MAX_BATCH).toBeLessThanOrEqual(MAX_VALIDATIONS_PER_CALL);
    expect(CSV_MAX_ROWS).toBe(BATCH_MAX_ITEMS);
  });
});

describe("each service's check refuses one past the same constant, and takes the constant itself", () => {
  const now = new Date('2026-01-01T00:00:00Z');
  const text = (n: number) => 'a'.repeat(n);

  it('licence service: batch size, reroll grace, fingerprint, metadata', () => {
    const item = (i: number) => ({
      customer_email: `c${i}@example.com`,
      metadata: {},
      entitlements: [],
      send_email: false,
    });
    expect(checkBatchItems(Array.from({ length: BATCH_MAX_ITEMS }, (_, i) => item(i)))).toHaveLength(BATCH_MAX_ITEMS);
    refused(() => checkBatchItems(Array.from({ length: BATCH_MAX_ITEMS + 1 }, (_, i) => item(i))), 'licenses');
    expect(graceEnd(REROLL_GRACE_HOURS_MAX, now).getTime()).toBe(now.getTime() + REROLL_GRACE_HOURS_MAX * 3_600_000);
    refused(() => graceEnd(REROLL_GRACE_HOURS_MAX + 1, now), 'grace_hours');
    expect(checkFingerprint(text(FINGERPRINT_MAX_LENGTH))).toHaveLength(FINGERPRINT_MAX_LENGTH);
    refused(() => checkFingerprint(text(FINGERPRINT_MAX_LENGTH + 1)), 'fingerprint');
    expect(mergeMetadata({}, { k: text(METADATA_VALUE_MAX_LENGTH) }).k).toHaveLength(METADATA_VALUE_MAX_LENGTH);
    refused(() => mergeMetadata({}, { k: text(METADATA_VALUE_MAX_LENGTH + 1) }), 'metadata.k');
    const entries = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 'v']));
    expect(Object.keys(mergeMetadata({}, entries(METADATA_MAX_ENTRIES)))).toHaveLength(METADATA_MAX_ENTRIES);
    refused(() => mergeMetadata({}, entries(METADATA_MAX_ENTRIES + 1)), 'metadata');
    expect(importRowStatuses).toEqual(licenseStatuses);
  });

  it('checkout service: expiry, URLs, seats, metadata', () => {
    expect(expiryMinutes(0)).toBe(CHECKOUT_EXPIRES_MAX_MINUTES);
    expect(expiryMinutes(CHECKOUT_EXPIRES_MIN_MINUTES)).toBe(CHECKOUT_EXPIRES_MIN_MINUTES);
    refused(() => expiryMinutes(CHECKOUT_EXPIRES_MIN_MINUTES - 1), 'expires_in_minutes');
    refused(() => expiryMinutes(CHECKOUT_EXPIRES_MAX_MINUTES + 1), 'expires_in_minutes');
    const url = (n: number) => `https://example.com/${text(n - 'https://example.com/'.length)}`;
    expect(checkRedirectUrl('success_url', url(URL_MAX_LENGTH), true)).toHaveLength(URL_MAX_LENGTH);
    refused(() => checkRedirectUrl('success_url', url(URL_MAX_LENGTH + 1), true), 'success_url');
    expect(checkQuantity(SEATS_MAX, true)).toBe(SEATS_MAX);
    refused(() => checkQuantity(SEATS_MAX + 1, true), 'quantity');
    expect(checkMetadata({ k: text(METADATA_VALUE_MAX_LENGTH) }).k).toHaveLength(METADATA_VALUE_MAX_LENGTH);
    refused(() => checkMetadata({ k: text(METADATA_VALUE_MAX_LENGTH + 1) }), 'metadata.k');
  });

  it('product service: name, description, price', () => {
    const input = { name: text(PRODUCT_NAME_MAX_LENGTH), description: text(PRODUCT_DESCRIPTION_MAX_LENGTH) };
    expect(checkProductInput(input)).toEqual(input);
    refused(() => checkProductInput({ ...input, name: text(PRODUCT_NAME_MAX_LENGTH + 1) }), 'name');
    refused(
      () => checkProductInput({ ...input, description: text(PRODUCT_DESCRIPTION_MAX_LENGTH + 1) }),
      'description',
    );
    const price = {
      amount: PRICE_AMOUNT_MAX,
      currency: 'usd',
      interval: 'month',
      interval_count: PRICE_INTERVAL_COUNT_MAX,
      trial_days: PRICE_TRIAL_DAYS_MAX,
    };
    expect(checkPrice(price)).toMatchObject({ amount: PRICE_AMOUNT_MAX, interval_count: PRICE_INTERVAL_COUNT_MAX });
    refused(() => checkPrice({ ...price, amount: PRICE_AMOUNT_MAX + 1 }), 'price.amount');
    refused(() => checkPrice({ ...price, interval_count: PRICE_INTERVAL_COUNT_MAX + 1 }), 'price.interval_count');
    refused(() => checkPrice({ ...price, trial_days: PRICE_TRIAL_DAYS_MAX + 1 }), 'price.trial_days');
  });

  it('product service: a release’s version, notes and entitlements', () => {
    const release = { version: '1.0.0', channel: undefined, notes: '', entitlements: [], published_at: undefined };
    const version = `1.0.0-${text(RELEASE_VERSION_MAX_LENGTH - 6)}`;
    expect(checkReleaseInput({ ...release, version }).version).toBe(version);
    refused(() => checkReleaseInput({ ...release, version: `${version}a` }), 'version');
    expect(checkReleaseInput({ ...release, notes: text(RELEASE_NOTES_MAX_LENGTH) }).notes).toHaveLength(
      RELEASE_NOTES_MAX_LENGTH,
    );
    refused(() => checkReleaseInput({ ...release, notes: text(RELEASE_NOTES_MAX_LENGTH + 1) }), 'notes');
    const codes = (n: number) => Array.from({ length: n }, (_, i) => `code-${i}`);
    expect(checkReleaseInput({ ...release, entitlements: codes(RELEASE_ENTITLEMENTS_MAX) }).entitlements).toHaveLength(
      RELEASE_ENTITLEMENTS_MAX,
    );
    refused(() => checkReleaseInput({ ...release, entitlements: codes(RELEASE_ENTITLEMENTS_MAX + 1) }), 'entitlements');
  });

  it('webhook service and the shared e-mail check', () => {
    expect(checkDescription(text(WEBHOOK_DESCRIPTION_MAX_LENGTH))).toHaveLength(WEBHOOK_DESCRIPTION_MAX_LENGTH);
    refused(() => checkDescription(text(WEBHOOK_DESCRIPTION_MAX_LENGTH + 1)), 'description');
    const email = (n: number) => `a@${text(n - 'a@.com'.length)}.com`;
    expect(checkEmail('email', email(EMAIL_MAX_LENGTH))).toHaveLength(EMAIL_MAX_LENGTH);
    refused(() => checkEmail('email', email(EMAIL_MAX_LENGTH + 1)), 'email');
  });
});

describe('no limit is declared a second time', () => {
  const root = join(__dirname, '..', '..');
  const ruleNames = [
    ...[
      checkoutLimits,
      emailAddress,
      importLimits,
      licenseLimits,
      metadataLimits,
      productLimits,
      releaseLimits,
      webhookLimits,
    ].flatMap((m) => Object.keys(m)),
    'MAX_LICENSE_KEY_LENGTH',
    'ENTITLEMENT_CODE_MAX_LENGTH',
  ];
  /** Names the services and the gateway gave their own copies of these limits before they moved to proto/rules. */
  const retiredCopies = [
    'KEY_MAX',
    'MAX_LICENSE_CREDENTIAL_LENGTH',
    'MAX_CHUNK_BYTES',
    'QUANTITY_MAX',
    'URL_MAX',
    'AMOUNT_MAX',
    'TRIAL_DAYS_MAX',
    'NAME_MAX',
    'DESCRIPTION_MAX',
    'EXPIRES_MIN_MINUTES',
    'EXPIRES_MAX_MINUTES',
    'MAX_ADVANCE_YEARS',
    'VALUE_MAX',
    'EMAIL_MAX',
    'PRODUCT_NAME_MAX',
    'METADATA_VALUE_MAX',
  ];

  /** Every TypeScript source outside proto/rules that either side of the boundary is built from. */
  function sources(dir: string): string[] {
    return readdirSync(dir).flatMap((name) => {
      const path = join(dir, name);
      if (name === 'node_modules' || name === 'dist' || name === 'generated') return [];
      if (statSync(path).isDirectory()) return sources(path);
      return name.endsWith('.ts') ? [path] : [];
    });
  }
  const tops = [
    'gateway',
    'web',
    ...['services', 'packages'].flatMap((d) => readdirSync(join(root, d)).map((n) => join(d, n))),
  ];
  const files = tops
    .map((t) => join(root, t, 'src'))
    .filter((d) => {
      try {
        return statSync(d).isDirectory();
      } catch {
        return false;
      }
    })
    .flatMap(sources);

  it('were read: the gateway and every service', () => {
    expect(ruleNames).toEqual(
      expect.arrayContaining(['BATCH_MAX_ITEMS', 'MAX_IMPORT_BYTES', 'REROLL_GRACE_HOURS_MAX']),
    );
    expect(files.some((f) => f.includes(join('gateway', 'src')))).toBe(true);
    expect(files.some((f) => f.includes(join('services', 'license', 'src')))).toBe(true);
  });

  it('outside proto/rules, by its own name or by a name a copy once had', () => {
    const declared = new RegExp(`\\b(?:const|let|var)\\s+(${ruleNames.join('|')})\\b\\s*=`);
    const copied = new RegExp(`\\b(?:const|let|var)\\s+(${retiredCopies.join('|')})\\s*=\\s*[\\d(]`);
    const found = files.flatMap((f) =>
      readFileSync(f, 'utf8')
        .split('\n')
        .flatMap((line, i) =>
          declared.test(line) || copied.test(line) ? [`${f.slice(root.length + 1)}:${i + 1}: ${line.trim()}`] : [],
        ),
    );
    expect(found).toEqual([]);
  });
});
