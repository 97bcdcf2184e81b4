import type { ImportFormat } from './import-rows';
import { splitList } from './import-rows';

// Each import format's columns mapped to the jsonl field names (docs/api.md, "Imports", has the
// tables): the header's check, the columns read, and a record's fields. Pure.

/** A file that cannot be read as its format (400 `body`). */
export class ImportFileError extends Error {}

export interface Mapper {
  /** The header's problem (a required column missing), or undefined. CSV formats only. */
  header?(columns: string[]): string | undefined;
  /** The columns toFields reads (besides `metadata_<name>` ones): the others are never read. */
  columns: readonly string[];
  toFields(record: Record<string, string>): Record<string, unknown> | string;
}

/** Header names compared loosely: "License Key", "license_key" and "licenseKey" are one column. */
export const columnName = (h: string) =>
  h
    .replace(/^\uFEFF/, '')
    .trim()
    .replace(/([a-z])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_|_$/g, '');

const pick = (r: Record<string, string>, ...names: string[]) => {
  for (const n of names) if (r[n] !== undefined && r[n].trim() !== '') return r[n].trim();
  return undefined;
};
const truthy = (v: string | undefined) => !!v && /^(true|yes|y|1)$/i.test(v.trim());
const json = (v: string | undefined, what: string): unknown => {
  if (v === undefined || v.trim() === '') return undefined;
  try {
    return JSON.parse(v);
  } catch {
    throw new ImportFileError(`${what} must be JSON`);
  }
};
const needOne =
  (label: string, ...names: string[]) =>
  (cols: string[]) =>
    names.some((n) => cols.includes(n)) ? undefined : `the ${label} column is missing (one of: ${names.join(', ')})`;
const firstProblem =
  (...checks: ((cols: string[]) => string | undefined)[]) =>
  (cols: string[]) => {
    for (const c of checks) {
      const p = c(cols);
      if (p) return p;
    }
    return undefined;
  };

/** Fingerprints in one cell: a JSON list of {fingerprint, name} or of strings, or "fp1; fp2". */
function activationsCell(v: string | undefined): unknown {
  if (v === undefined || v.trim() === '') return undefined;
  return v.trim().startsWith('[') ? json(v, 'activations') : splitList(v);
}

/** metadata: a JSON object cell, and/or metadata.<name> columns (metadata_<name> once normalised). */
function metadataOf(r: Record<string, string>, extra: Record<string, string | undefined> = {}) {
  const out: Record<string, unknown> = {};
  const cell = json(r.metadata, 'metadata');
  if (cell !== undefined) {
    if (typeof cell !== 'object' || cell === null || Array.isArray(cell))
      throw new ImportFileError('metadata must be a JSON object');
    Object.assign(out, cell);
  }
  for (const [k, v] of Object.entries(r)) if (k.startsWith('metadata_') && v !== '') out[k.slice(9)] = v;
  for (const [k, v] of Object.entries(extra)) if (v) out[k] = v;
  return Object.keys(out).length ? out : undefined;
}

const KEYGEN_STATUS: Record<string, string> = {
  active: 'active',
  inactive: 'active',
  expiring: 'active',
  expired: 'expired',
  suspended: 'suspended',
  banned: 'revoked',
};
const LEMON_STATUS: Record<string, string> = {
  active: 'active',
  inactive: 'active',
  expired: 'expired',
  disabled: 'suspended',
};

export const mappers: Record<Exclude<ImportFormat, 'jsonl'>, Mapper> = {
  // The jsonl names as columns; activations, metadata (JSON) and entitlements ("a; b") in one cell each.
  csv: {
    header: firstProblem(needOne('key', 'key'), needOne('customer_email', 'customer_email'), (cols) =>
      cols.includes('product_id') || cols.includes('product_name')
        ? undefined
        : 'the product column is missing (product_id or product_name)',
    ),
    columns: [
      'key',
      'product_id',
      'product_name',
      'customer_email',
      'status',
      'expires_at',
      'max_activations',
      'activations',
      'metadata',
      'entitlements',
    ],
    toFields: (r) => ({
      key: r.key,
      product_id: pick(r, 'product_id'),
      product_name: pick(r, 'product_name'),
      customer_email: r.customer_email,
      status: pick(r, 'status'),
      expires_at: pick(r, 'expires_at'),
      max_activations: pick(r, 'max_activations'),
      activations: activationsCell(r.activations),
      metadata: metadataOf(r),
      entitlements: pick(r, 'entitlements'),
    }),
  },
  // Keygen's licence attributes (its API and dashboard export): key, status, expiry, maxMachines,
  // the policy or product name, the user's e-mail, metadata; machines' fingerprints if listed.
  keygen: {
    header: firstProblem(
      needOne('key', 'key'),
      needOne('e-mail', 'email', 'user_email', 'user'),
      needOne('product', 'product', 'product_name', 'policy', 'policy_name'),
    ),
    columns: [
      'key',
      'product',
      'product_name',
      'policy',
      'policy_name',
      'email',
      'user_email',
      'user',
      'status',
      'expiry',
      'expires_at',
      'max_machines',
      'machines',
      'fingerprints',
      'metadata',
      'id',
      'name',
      'entitlements',
    ],
    toFields: (r) => {
      const status = pick(r, 'status')?.toLowerCase();
      return {
        key: r.key,
        product_name: pick(r, 'product', 'product_name', 'policy', 'policy_name'),
        customer_email: pick(r, 'email', 'user_email', 'user'),
        status: status === undefined ? undefined : (KEYGEN_STATUS[status] ?? status),
        expires_at: pick(r, 'expiry', 'expires_at'),
        max_activations: pick(r, 'max_machines'),
        activations: activationsCell(pick(r, 'machines', 'fingerprints')),
        metadata: metadataOf(r, { keygen_id: pick(r, 'id'), name: pick(r, 'name') }),
        entitlements: pick(r, 'entitlements'),
      };
    },
  },
  // Lemon Squeezy's licence keys export: Key, Status, Product, Variant, Customer email, Activation
  // limit, Expires at, Order.
  lemonsqueezy: {
    header: firstProblem(
      needOne('key', 'key', 'license_key'),
      needOne('customer e-mail', 'customer_email', 'user_email', 'email'),
      needOne('product', 'product', 'product_name'),
    ),
    columns: [
      'key',
      'license_key',
      'product',
      'product_name',
      'customer_email',
      'user_email',
      'email',
      'status',
      'expires_at',
      'activation_limit',
      'instances',
      'metadata',
      'order',
      'order_id',
      'order_number',
      'variant',
      'variant_name',
      'customer_name',
      'user_name',
    ],
    toFields: (r) => {
      const status = pick(r, 'status')?.toLowerCase();
      return {
        key: pick(r, 'key', 'license_key'),
        product_name: pick(r, 'product', 'product_name'),
        customer_email: pick(r, 'customer_email', 'user_email', 'email'),
        status: status === undefined ? undefined : (LEMON_STATUS[status] ?? status),
        expires_at: pick(r, 'expires_at'),
        max_activations: pick(r, 'activation_limit'),
        activations: activationsCell(pick(r, 'instances')),
        metadata: metadataOf(r, {
          lemonsqueezy_order: pick(r, 'order', 'order_id', 'order_number'),
          lemonsqueezy_variant: pick(r, 'variant', 'variant_name'),
          customer_name: pick(r, 'customer_name', 'user_name'),
        }),
      };
    },
  },
  // Gumroad's sales export: one row per sale; License Key, Item Name, Purchase Email, Buyer Name,
  // Purchase ID, Refunded?, Disputed?, Chargebacked?. A refunded or disputed sale's licence is revoked.
  gumroad: {
    header: firstProblem(
      needOne('license key', 'license_key'),
      needOne('purchase e-mail', 'purchase_email', 'email', 'buyer_email'),
      needOne('item name', 'item_name', 'product_name', 'product'),
    ),
    columns: [
      'license_key',
      'item_name',
      'product_name',
      'product',
      'purchase_email',
      'email',
      'buyer_email',
      'refunded',
      'disputed',
      'chargebacked',
      'chargeback',
      'metadata',
      'purchase_id',
      'sale_id',
      'buyer_name',
      'full_name',
    ],
    toFields: (r) => {
      const key = pick(r, 'license_key');
      if (!key) return 'this sale has no License Key (a product sold without licence keys)';
      const revoked = truthy(r.refunded) || truthy(r.disputed) || truthy(r.chargebacked) || truthy(r.chargeback);
      return {
        key,
        product_name: pick(r, 'item_name', 'product_name', 'product'),
        customer_email: pick(r, 'purchase_email', 'email', 'buyer_email'),
        status: revoked ? 'revoked' : 'active',
        metadata: metadataOf(r, {
          gumroad_purchase_id: pick(r, 'purchase_id', 'sale_id'),
          customer_name: pick(r, 'buyer_name', 'full_name'),
        }),
      };
    },
  },
};
