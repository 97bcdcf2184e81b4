import { AppError, checkEmail, findForbiddenText, metadataKeyProblem, textProblem } from '@licensing/runtime';
import {
  entitlementsProblem,
  FOREIGN_KEY_PATTERN,
  importFormats,
  type ImportFormatName,
  MAX_LICENSE_KEY_LENGTH,
  parseNativeKey,
  policyFields,
  policyProblems,
  policyRules,
  withPolicyDefaults,
  type LicensePolicy,
} from '@licensing/proto';
import { METADATA_MAX_ENTRIES } from '../../domain/metadata';

// One row of an import, checked: pure rules, no I/O. The formats (import-formats.ts) turn a
// line of each kind of file into the jsonl field names below; this says whether the row can be imported.

export { importFormats };
export type ImportFormat = ImportFormatName;
export const importRowStatuses = ['active', 'suspended', 'revoked', 'expired'] as const;
export type ImportRowStatus = (typeof importRowStatuses)[number];

/** Rows an import keeps the message of (later rejections are counted only). */
export const MAX_IMPORT_ERRORS = 1000;
/** Machines one imported licence may carry. */
export const MAX_IMPORT_ACTIVATIONS = 100;
const METADATA_VALUE_MAX = 500;
const EMAIL_MAX = 254;
const PRODUCT_NAME_MAX = 200;
const FOREIGN_KEY = new RegExp(FOREIGN_KEY_PATTERN);
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** A licence row as it will be stored (key in its stored form). */
export interface ImportRow {
  key: string;
  /** The key is not native-shaped: stored exactly as it was. */
  foreign: boolean;
  product_id: string;
  product_name: string;
  customer_email: string;
  status: ImportRowStatus;
  expires_at: Date | null;
  /** undefined: the product's policy decides; null: unlimited. */
  max_activations: number | null | undefined;
  /** The licence's own policy (an export writes it: a product's may have changed since); undefined: the product's. */
  policy?: LicensePolicy;
  activations: { fingerprint: string; name: string }[];
  metadata: Record<string, string>;
  entitlements: string[];
}

/** A product line of an export (type "product"), created in the account when no product has its name. */
export interface ImportProduct {
  name: string;
  description: string;
  policy: LicensePolicy | undefined;
  /** With a recurring price's interval, interval_count and trial_days (the product service checks them). */
  price:
    | { amount: number; currency: string; interval?: string; interval_count?: number; trial_days?: number }
    | undefined;
  email_on_purchase: boolean | undefined;
}

/** A webhook endpoint line of an export (type "webhook_endpoint"): created in the account with a new secret. */
export interface ImportEndpoint {
  url: string;
  events: string[];
  description: string;
  enabled: boolean;
}

export type CheckedRow =
  | { kind: 'license'; row: ImportRow }
  | { kind: 'product'; product: ImportProduct }
  | { kind: 'webhook_endpoint'; endpoint: ImportEndpoint }
  /**
   * A line of an export that is a record an import does not bring across (a checkout session, a
   * subscription, a type of a newer release): skipped, and reported with the reason.
   */
  | { kind: 'record'; type: string; reason: string }
  | { kind: 'rejected'; message: string };

/**
 * Why an export's records are not imported (the import reports each such row with this). A checkout
 * session is the history of a payment the exporting installation took; a subscription is billed by
 * the exporting installation's payment provider, and its licence (a licence line) is imported.
 */
export const recordReasons: Record<string, string> = {
  checkout_session:
    'checkout_session: not imported: a checkout session is the history of a payment taken by the installation it comes from (its licence, if any, is a license line)',
  subscription:
    'subscription: not imported: a subscription is billed by the payment provider of the installation it comes from (its licence is a license line); start a new one here to bill here',
};

const recordReason = (type: string) =>
  recordReasons[type] ?? `${type}: not imported: not a type this installation imports (an export of a newer release?)`;

const rejected = (message: string): CheckedRow => ({ kind: 'rejected', message });

/**
 * The stored form of an imported key, or why it cannot be imported. A native-shaped key (30 Crockford
 * characters, as this system issues) is stored in its canonical form only if its check characters are
 * right: one whose check is wrong would be refused by the typo shortcut at every validation.
 */
export function importKey(raw: unknown): { key: string; foreign: boolean } | { error: string } {
  if (typeof raw !== 'string' || raw.trim() === '') return { error: 'key is required' };
  const text = raw.trim();
  if (text.length > MAX_LICENSE_KEY_LENGTH)
    return { error: `key is longer than ${MAX_LICENSE_KEY_LENGTH} characters (${text.length})` };
  const native = parseNativeKey(text);
  if (native.ok) return { key: native.key, foreign: false };
  if (native.reason === 'checksum')
    return {
      error:
        'key has the shape of a native key (30 Crockford characters) but its check characters are wrong: it could never validate',
    };
  if (!FOREIGN_KEY.test(text)) return { error: 'key must be 8 to 64 characters: letters, digits and . _ ~ + = : -' };
  return { key: text, foreign: true };
}

function str(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v.trim();
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return undefined;
}

const IMPORT_FIELDS = new Set([
  'type',
  'key',
  'product_id',
  'product_name',
  'customer_email',
  'status',
  'expires_at',
  'max_activations',
  'policy',
  'activations',
  'metadata',
  'entitlements',
]);

/** A jsonl line (or a row the other formats mapped to jsonl's names), checked. */
export function checkRow(line: Record<string, unknown>, now: Date): CheckedRow {
  const checked = checkLine(line, now);
  if (checked.kind === 'rejected') return checked;
  // Then every string of the row, names too, by the API's text rule: no control character (tab and
  // line breaks aside, which its one-line fields refused already), no unpaired surrogate. The store
  // cannot hold some (U+0000): a row it would refuse is rejected here, its field named, and never stops the run.
  const badText = findForbiddenText(line);
  return badText ? rejected(badText.message) : checked;
}

function checkLine(line: Record<string, unknown>, now: Date): CheckedRow {
  const type = line.type ?? 'license';
  if (type === 'product') return checkProduct(line);
  if (type === 'webhook_endpoint') return checkEndpoint(line);
  if (typeof type === 'string' && type !== 'license' && /^[a-z_]{1,40}$/.test(type))
    return { kind: 'record', type, reason: recordReason(type) };
  if (type !== 'license') return rejected('type must be license, product or another type of an export');
  for (const field of Object.keys(line))
    if (!IMPORT_FIELDS.has(field)) return rejected(`${field}: not a field of an import row`);

  const k = importKey(line.key);
  if ('error' in k) return rejected(k.error);

  const productId = str(line.product_id) ?? '';
  const productName = str(line.product_name) ?? '';
  if (!productId && !productName) return rejected('product_id or product_name is required');
  if (productId && !/^prod_[A-Za-z0-9]{1,40}$/.test(productId))
    return rejected('product_id must be a product id (prod_…)');
  if (productName.length > PRODUCT_NAME_MAX) return rejected(`product_name is at most ${PRODUCT_NAME_MAX} characters`);
  const badName = productName && textProblem('product_name', productName);
  if (badName) return rejected(badName.message);

  const email = checkCustomerEmail(line.customer_email);
  if ('error' in email) return rejected(email.error);

  const status = (str(line.status) ?? 'active').toLowerCase();
  if (!(importRowStatuses as readonly string[]).includes(status))
    return rejected(`status must be one of ${importRowStatuses.join(', ')}`);

  const expiresAt = checkExpiry(line.expires_at);
  if (typeof expiresAt === 'string') return rejected(expiresAt);
  if (status === 'expired' && !(expiresAt && expiresAt <= now))
    return rejected('status expired needs an expires_at in the past');

  const maxActivations = checkMaxActivations(line.max_activations);
  if (typeof maxActivations === 'string') return rejected(maxActivations);
  // The row's max_activations rules over its policy's (an imported licence may have 0, which a policy may not).
  const policy = checkPolicy(line.policy, line.max_activations !== undefined ? ['max_activations'] : []);
  if (typeof policy === 'string') return rejected(policy);

  const activations = checkActivations(line.activations);
  if (typeof activations === 'string') return rejected(activations);
  if (typeof maxActivations === 'number' && activations.length > maxActivations)
    return rejected(`activations: ${activations.length} machines, more than max_activations (${maxActivations})`);

  const metadata = checkMetadata(line.metadata);
  if (typeof metadata === 'string') return rejected(metadata);

  let entitlements: string[] = [];
  if (line.entitlements !== undefined && line.entitlements !== null) {
    const list = typeof line.entitlements === 'string' ? splitList(line.entitlements) : line.entitlements;
    const bad = entitlementsProblem('entitlements', list);
    if (bad) return rejected(bad.message);
    entitlements = [...new Set(list as string[])].sort();
  }

  return {
    kind: 'license',
    row: {
      key: k.key,
      foreign: k.foreign,
      product_id: productId,
      product_name: productName,
      customer_email: email.email,
      status: status as ImportRowStatus,
      expires_at: expiresAt,
      max_activations: maxActivations,
      ...(policy ? { policy } : {}),
      activations,
      metadata,
      entitlements,
    },
  };
}

/** customer_email: required, by the import's e-mail rule and the API's own. */
function checkCustomerEmail(raw: unknown): { email: string } | { error: string } {
  const email = (str(raw) ?? '').trim();
  if (!email) return { error: 'customer_email is required' };
  const badEmail = textProblem('customer_email', email);
  if (badEmail) return { error: badEmail.message };
  if (email.length > EMAIL_MAX || !EMAIL.test(email)) return { error: 'customer_email must be an e-mail address' };
  // The API's own e-mail rule too (a licence issued through the API would be refused the same address).
  try {
    checkEmail('customer_email', email);
  } catch (err) {
    if (err instanceof AppError) return { error: err.message };
    throw err;
  }
  return { email };
}

/** expires_at: an ISO 8601 date or time, or none (perpetual); a string: what is wrong. */
function checkExpiry(raw: unknown): Date | null | string {
  const text = str(raw);
  if (!text) return null;
  const d = new Date(text);
  if (Number.isNaN(d.getTime()) || !/^\d{4}-\d{2}-\d{2}/.test(text))
    return 'expires_at must be an ISO 8601 date or time (e.g. 2027-01-31T00:00:00Z)';
  return d;
}

/** max_activations: a whole number, null (unlimited) or absent (the policy's); a string: what is wrong. */
function checkMaxActivations(raw: unknown): number | null | undefined | string {
  if (raw === null) return null;
  if (raw === undefined || raw === '') return undefined;
  const n = typeof raw === 'number' ? raw : Number(str(raw));
  if (!Number.isInteger(n) || n < 0 || n > 1_000_000) return 'max_activations must be a whole number from 0 to 1000000';
  return n;
}

/** A row's machines: `[{fingerprint, name?}]` or fingerprints; a string: what is wrong. */
function checkActivations(raw: unknown): ImportRow['activations'] | string {
  const activations: ImportRow['activations'] = [];
  if (raw === undefined || raw === null) return activations;
  if (!Array.isArray(raw)) return 'activations must be a list of {fingerprint, name?}';
  if (raw.length > MAX_IMPORT_ACTIVATIONS) return `activations: at most ${MAX_IMPORT_ACTIVATIONS} machines per licence`;
  const seen = new Set<string>();
  for (const [i, a] of raw.entries()) {
    const item = typeof a === 'string' ? { fingerprint: a } : (a as Record<string, unknown>);
    if (!item || typeof item !== 'object') return `activations[${i}] must be {fingerprint, name?}`;
    const fp = str(item.fingerprint) ?? '';
    if (!fp || fp.length > 200 || !/^[\x20-\x7e]+$/.test(fp))
      return `activations[${i}].fingerprint must be 1 to 200 printable ASCII characters`;
    if (seen.has(fp)) return `activations[${i}].fingerprint appears twice`;
    seen.add(fp);
    const name = str(item.name) ?? '';
    if (name.length > 200) return `activations[${i}].name is at most 200 characters`;
    const badText = name && textProblem(`activations[${i}].name`, name);
    if (badText) return badText.message;
    activations.push({ fingerprint: fp, name });
  }
  return activations;
}

/** A row's metadata: an object of strings, by the licence's metadata rules; a string: what is wrong. */
function checkMetadata(raw: unknown): Record<string, string> | string {
  const metadata: Record<string, string> = {};
  if (raw === undefined || raw === null) return metadata;
  if (typeof raw !== 'object' || Array.isArray(raw)) return 'metadata must be an object of strings';
  for (const [mk, mv] of Object.entries(raw as Record<string, unknown>)) {
    const badKey = metadataKeyProblem(mk);
    if (badKey) return badKey.message;
    const v = str(mv);
    if (v === undefined) return `metadata.${mk} must be a string`;
    if (v.length > METADATA_VALUE_MAX) return `metadata.${mk}: values are at most ${METADATA_VALUE_MAX} characters`;
    const badValue = textProblem(`metadata.${mk}`, v, true);
    if (badValue) return badValue.message;
    if (v !== '') metadata[mk] = v;
  }
  if (Object.keys(metadata).length > METADATA_MAX_ENTRIES) return `metadata: at most ${METADATA_MAX_ENTRIES} entries`;
  return metadata;
}

/**
 * A policy as a line carries it (a product's, or a licence's own), by the policy's own rules: each field
 * of policyRules (null: no limit), checked as the API checks one; absent, undefined. A string: what is wrong.
 */
export function checkPolicy(raw: unknown, overridden: readonly string[] = []): LicensePolicy | undefined | string {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== 'object' || Array.isArray(raw)) return 'policy must be an object';
  const given = raw as Record<string, unknown>;
  const fields = policyFields as readonly string[];
  const unknown = Object.keys(given).find((f) => !fields.includes(f));
  if (unknown) return `policy.${unknown}: not a policy field`;
  const policy: Record<string, unknown> = {};
  for (const f of policyFields) {
    const v = given[f];
    if (v === undefined || v === null || overridden.includes(f)) continue; // null: no limit, absent in the contract
    if (policyRules[f].kind === 'bool' && typeof v !== 'boolean') return `policy.${f} must be true or false`;
    policy[f] = v;
  }
  const problems = policyProblems(policy as unknown as LicensePolicy);
  return problems.length ? problems[0].message : (policy as unknown as LicensePolicy);
}

function checkProduct(line: Record<string, unknown>): CheckedRow {
  const name = str(line.name) ?? '';
  if (!name || name.length > PRODUCT_NAME_MAX) return rejected(`name: 1 to ${PRODUCT_NAME_MAX} characters`);
  const badName = textProblem('name', name);
  if (badName) return rejected(badName.message);
  const description = str(line.description) ?? '';
  if (description.length > 2000) return rejected('description: at most 2000 characters');
  const policy = checkPolicy(line.policy);
  if (typeof policy === 'string') return rejected(policy);
  let price: ImportProduct['price'];
  if (line.price !== undefined && line.price !== null) {
    const pr = line.price as {
      amount?: unknown;
      currency?: unknown;
      interval?: unknown;
      interval_count?: unknown;
      trial_days?: unknown;
    };
    if (typeof pr !== 'object' || !Number.isInteger(pr.amount) || typeof pr.currency !== 'string')
      return rejected('price must be {amount, currency}');
    price = { amount: pr.amount as number, currency: pr.currency };
    // A recurring price (an export's subscription product) keeps its billing period.
    if (pr.interval !== undefined && pr.interval !== null) {
      if (typeof pr.interval !== 'string') return rejected('price.interval must be month or year');
      const whole = (v: unknown) => v === undefined || v === null || Number.isInteger(v);
      if (!whole(pr.interval_count) || !whole(pr.trial_days))
        return rejected('price.interval_count and price.trial_days must be whole numbers');
      price.interval = pr.interval;
      if (typeof pr.interval_count === 'number') price.interval_count = pr.interval_count;
      if (typeof pr.trial_days === 'number') price.trial_days = pr.trial_days;
    }
  }
  const email = line.email_on_purchase;
  return {
    kind: 'product',
    product: {
      name,
      description,
      policy,
      price,
      email_on_purchase: typeof email === 'boolean' ? email : undefined,
    },
  };
}

/**
 * A webhook endpoint line: its url, events, description and enabled (its id and times are the other
 * installation's; it never carries a secret). The webhook service checks the url and the events as
 * for any new endpoint; here only their shapes.
 */
function checkEndpoint(line: Record<string, unknown>): CheckedRow {
  const url = typeof line.url === 'string' ? line.url.trim() : '';
  if (!url || url.length > 2048) return rejected('webhook_endpoint: url must be a URL of at most 2048 characters');
  const badUrl = textProblem('url', url);
  if (badUrl) return rejected(`webhook_endpoint: ${badUrl.message}`);
  if (!Array.isArray(line.events) || !line.events.length || line.events.some((e) => typeof e !== 'string'))
    return rejected('webhook_endpoint: events must be a list of event types');
  const description = line.description === null || line.description === undefined ? '' : line.description;
  if (typeof description !== 'string') return rejected('webhook_endpoint: description must be a string');
  const enabled = line.enabled === undefined ? true : line.enabled;
  if (typeof enabled !== 'boolean') return rejected('webhook_endpoint: enabled must be true or false');
  return {
    kind: 'webhook_endpoint',
    endpoint: { url, events: [...new Set(line.events as string[])].sort(), description, enabled },
  };
}

/** The form two endpoints are compared by: one already in the account with the same one is skipped. */
export const endpointForm = (e: ImportEndpoint): string =>
  JSON.stringify([e.url, [...e.events].sort(), e.description, e.enabled]);

/** "a; b, c" or "a b" → ["a", "b", "c"] (entitlements and fingerprints in one CSV cell). */
export function splitList(text: string): string[] {
  return text
    .split(/[;,\s]+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** What an imported licence is compared by: a row already in the account with these the same is skipped. */
export interface ComparableLicense {
  product_id: string;
  customer_email: string;
  status: string;
  expires_at: Date | null;
  max_activations: number | null;
  metadata: Record<string, string>;
  entitlements: string[];
  fingerprints: string[];
  /** The stored policy's form (policyKey), where the row gives one: a row without compares by the rest. */
  policy?: string;
}

/** A stored policy's form for comparing (every field, in policyFields' order; entitlements are the product's, live). */
export const policyKey = (p: Partial<Record<string, unknown>>): string =>
  JSON.stringify(withPolicyDefaults({ ...p, entitlements: [] }));

/** The first field in which two forms of one licence differ, or undefined when they are the same. */
export function firstDifference(a: ComparableLicense, b: ComparableLicense): string | undefined {
  if (a.product_id !== b.product_id) return 'product';
  if (a.customer_email.toLowerCase() !== b.customer_email.toLowerCase()) return 'customer_email';
  if (a.status !== b.status) return 'status';
  if ((a.expires_at?.getTime() ?? null) !== (b.expires_at?.getTime() ?? null)) return 'expires_at';
  if (a.max_activations !== b.max_activations) return 'max_activations';
  if (a.policy !== undefined && b.policy !== undefined && a.policy !== b.policy) return 'policy';
  if (JSON.stringify(sortedEntries(a.metadata)) !== JSON.stringify(sortedEntries(b.metadata))) return 'metadata';
  if ([...a.entitlements].sort().join(',') !== [...b.entitlements].sort().join(',')) return 'entitlements';
  if ([...a.fingerprints].sort().join('\n') !== [...b.fingerprints].sort().join('\n')) return 'activations';
  return undefined;
}

const sortedEntries = (m: Record<string, string>) => Object.entries(m).sort(([x], [y]) => (x < y ? -1 : 1));
