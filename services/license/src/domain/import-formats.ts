import { StringDecoder } from 'node:string_decoder';
import type { ImportFormat } from './import-rows';
import { splitList } from './import-rows';

// Reading an import file a piece at a time (never whole): jsonl lines or CSV records (RFC 4180: quoted
// fields, "" inside quotes, CRLF or LF), and each format's columns mapped to the jsonl field names
// (docs/api.md, "Imports", has the tables). Pure: the job feeds it the stored pieces in order.

/** A row is at most this long (a line of jsonl, a record of CSV). */
export const MAX_ROW_BYTES = 256 * 1024;

export class ImportFileError extends Error {}

/** One data row: its number (from 1) and its fields under the jsonl names, or the reason it cannot be read. */
export type FileRow = { row: number; fields: Record<string, unknown> } | { row: number; error: string };

interface Mapper {
  /** The header's problem (a required column missing), or undefined. CSV formats only. */
  header?(columns: string[]): string | undefined;
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

/** Reads a file of one format a piece at a time, and hands out its data rows, numbered from 1. */
export class ImportFileReader {
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';
  private row = 0;
  private header: string[] | undefined;
  private started = false;
  // CSV state across pieces: the record so far.
  private field = '';
  private fields: string[] = [];
  private quoted = false;
  private afterQuote = false;
  private recordBytes = 0;

  constructor(readonly format: ImportFormat) {}

  /** The rows completed by this piece (a row cut by the piece's end waits for the next). */
  push(data: Uint8Array): FileRow[] {
    let text = this.decoder.write(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    if (!this.started) {
      text = text.replace(/^\uFEFF/, '');
      if (text) this.started = true;
    }
    return this.format === 'jsonl' ? this.jsonl(text, false) : this.csv(text, false);
  }

  /** The rows left at the end of the file. */
  end(): FileRow[] {
    const text = this.decoder.end();
    return this.format === 'jsonl' ? this.jsonl(text, true) : this.csv(text, true);
  }

  private jsonl(text: string, last: boolean): FileRow[] {
    const out: FileRow[] = [];
    this.pending += text;
    let start = 0;
    for (;;) {
      const nl = this.pending.indexOf('\n', start);
      if (nl === -1) break;
      this.line(this.pending.slice(start, nl), out);
      start = nl + 1;
    }
    this.pending = this.pending.slice(start);
    if (this.pending.length > MAX_ROW_BYTES)
      throw new ImportFileError(`row ${this.row + 1} is longer than ${MAX_ROW_BYTES} bytes`);
    if (last && this.pending.trim()) {
      this.line(this.pending, out);
      this.pending = '';
    }
    return out;
  }

  private line(text: string, out: FileRow[]): void {
    const t = text.trim();
    if (!t) return;
    const row = ++this.row;
    let value: unknown;
    try {
      value = JSON.parse(t);
    } catch {
      // The first line decides whether this is jsonl at all (checkHead); later ones are bad rows.
      out.push({ row, error: 'not a JSON object on one line' });
      return;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      out.push({ row, error: 'each line must be a JSON object' });
    else out.push({ row, fields: value as Record<string, unknown> });
  }

  private csv(text: string, last: boolean): FileRow[] {
    const out: FileRow[] = [];
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      this.recordBytes++;
      if (this.quoted) {
        if (c === '"') {
          if (text[i + 1] === '"') {
            this.field += '"';
            i++;
          } else if (i + 1 === text.length && !last) {
            // A quote at the piece's end: whether it is "" is known with the next piece.
            this.pendingQuote = true;
            this.quoted = false;
            this.afterQuote = true;
          } else {
            this.quoted = false;
            this.afterQuote = true;
          }
        } else this.field += c;
      } else if (this.pendingQuote && c === '"') {
        this.pendingQuote = false;
        this.quoted = true;
        this.afterQuote = false;
        this.field += '"';
      } else {
        this.pendingQuote = false;
        if (c === '"' && this.field === '' && !this.afterQuote) this.quoted = true;
        else if (c === ',') this.endField();
        else if (c === '\n') this.endRecord(out);
        else if (c === '\r') {
          // CRLF: the \n ends the record.
        } else this.field += c;
      }
      if (this.recordBytes > MAX_ROW_BYTES)
        throw new ImportFileError(`row ${this.row + 1} is longer than ${MAX_ROW_BYTES} bytes`);
    }
    if (last) {
      if (this.quoted) throw new ImportFileError(`row ${this.row + 1}: a quoted field is never closed`);
      if (this.field !== '' || this.fields.length) this.endRecord(out);
    }
    return out;
  }

  private pendingQuote = false;

  private endField(): void {
    this.fields.push(this.field);
    this.field = '';
    this.afterQuote = false;
  }

  private endRecord(out: FileRow[]): void {
    this.endField();
    const record = this.fields;
    this.fields = [];
    this.recordBytes = 0;
    if (record.length === 1 && record[0].trim() === '') return; // a blank line
    if (!this.header) {
      this.header = record.map(columnName);
      const problem = mappers[this.format as Exclude<ImportFormat, 'jsonl'>].header?.(this.header);
      if (problem) throw new ImportFileError(`not a ${this.format} file: ${problem}`);
      return;
    }
    const row = ++this.row;
    if (record.length > this.header.length) {
      out.push({ row, error: `${record.length} fields, but the header has ${this.header.length}` });
      return;
    }
    const named: Record<string, string> = {};
    this.header.forEach((h, i) => {
      if (h && named[h] === undefined) named[h] = record[i] ?? '';
    });
    try {
      const mapped = mappers[this.format as Exclude<ImportFormat, 'jsonl'>].toFields(named);
      out.push(typeof mapped === 'string' ? { row, error: mapped } : { row, fields: stripUndefined(mapped) });
    } catch (err) {
      if (err instanceof ImportFileError) out.push({ row, error: err.message });
      else throw err;
    }
  }
}

function stripUndefined(o: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
  return out;
}

/**
 * Whether a file's first piece is of the format at all, before anything is stored: a CSV format's header
 * names its required columns; a jsonl file's first line is a JSON object. Undefined when it is; the
 * problem otherwise (the upload is refused with 400).
 */
export function checkHead(format: ImportFormat, head: Uint8Array): string | undefined {
  const text = Buffer.from(head.buffer, head.byteOffset, head.byteLength)
    .toString('utf8')
    .replace(/^\uFEFF/, '');
  if (format === 'jsonl') {
    const first = text.split('\n').find((l) => l.trim() !== '');
    if (first === undefined) return 'the file is empty';
    const complete = text.indexOf('\n') !== -1 || head.byteLength < 65536;
    if (!complete) return undefined;
    try {
      const v = JSON.parse(first);
      if (typeof v !== 'object' || v === null || Array.isArray(v))
        return 'not a jsonl file: line 1 is not a JSON object';
    } catch {
      return 'not a jsonl file: line 1 is not JSON (send Content-Type: text/csv and a CSV format for CSV files)';
    }
    return undefined;
  }
  if (!text.trim()) return 'the file is empty';
  if (text.trimStart().startsWith('{')) return `not a ${format} file: it looks like jsonl (use format=jsonl)`;
  const reader = new ImportFileReader(format);
  try {
    reader.push(head);
    // A header cut by the piece's end is checked when the job reads it.
  } catch (err) {
    if (err instanceof ImportFileError) return err.message;
    throw err;
  }
  return undefined;
}
