import type { Request } from 'express';
import {
  AppError,
  isId,
  metadataKeyProblem,
  printableFieldName,
  textProblem,
  type FieldError,
} from '@licensing/runtime';
import { entitlementsProblem, type PageRequest } from '@licensing/proto';

// Shape checks for request bodies and query strings: known fields, right
// types, sane lengths and ranges, and no control characters in any string
// (the shared rule of @licensing/runtime's text.ts). A shape is also what the OpenAPI document
// says the operation accepts (openapi/shape-schema.ts turns it into JSON
// Schema), so a limit changed here changes the document too. Domain rules
// (what makes a good e-mail or URL) live in the services.

interface Documented {
  required?: boolean;
  /** For the OpenAPI document only. */
  description?: string;
}

export interface StringField extends Documented {
  kind?: 'string';
  max: number;
  /** Free text that may span lines: tab, line feed and carriage return are allowed (other controls never). */
  multiline?: boolean;
  /** null is a meaningful value (e.g. "perpetual"), kept as null. */
  nullable?: boolean;
  /** For the OpenAPI document: a time (ISO 8601), which the owning service checks. */
  format?: 'date-time';
}

/** One of a few words (a status, an action). */
export interface EnumField extends Documented {
  kind: 'enum';
  values: readonly string[];
  /** null is a meaningful value (e.g. "no interval": a one-time price), kept as null. */
  nullable?: boolean;
}

export interface IntField extends Documented {
  kind: 'int';
  min: number;
  max: number;
  /** null is a meaningful value (e.g. "unlimited"), kept as null. */
  nullable?: boolean;
  /** Taken when the field is absent. */
  default?: number;
}

export interface BoolField extends Documented {
  kind: 'bool';
}

export interface ObjectField extends Documented {
  kind: 'object';
  shape: Shape;
  /** null is a meaningful value (e.g. "remove the price"), kept as null. */
  nullable?: boolean;
  /** Documented once under this name (components/schemas) when several bodies share it. */
  component?: string;
}

/**
 * The vendor's metadata: an open map of strings. Keys follow the shared metadata-key rule, values are
 * free text (line breaks allowed); value lengths are checked by the owning service.
 */
export interface StringMapField extends Documented {
  kind: 'map';
  maxEntries: number;
}

/** A list of short strings (e.g. event type names). */
export interface StringListField extends Documented {
  kind: 'list';
  maxItems: number;
  maxLength: number;
}

/** A list of entitlement codes (proto/rules/entitlements.ts): at most 100 (or maxItems), each a code, each once. */
export interface EntitlementsField extends Documented {
  kind: 'entitlements';
  /** Fewer than the policy's 100 (a release's list). */
  maxItems?: number;
}

/** A list of objects of one shape (the items of a batch); each item's problems are named `field[i].name`. */
export interface ObjectListField extends Documented {
  kind: 'objects';
  shape: Shape;
  minItems: number;
  maxItems: number;
}

export type Field =
  | ObjectListField
  | StringField
  | EnumField
  | IntField
  | BoolField
  | ObjectField
  | StringMapField
  | StringListField
  | EntitlementsField;
export type Shape = Record<string, Field>;
/** Query parameters arrive as text: strings, words, and whole numbers written in digits. */
export type QueryShape = Record<string, StringField | EnumField | IntField>;

type ValueOf<F extends Field> = F extends IntField
  ? number | null
  : F extends BoolField
    ? boolean
    : F extends ObjectField
      ? Record<string, unknown> | null
      : F extends StringMapField
        ? Record<string, string>
        : F extends StringListField | EntitlementsField
          ? string[]
          : F extends ObjectListField
            ? Record<string, unknown>[]
            : string;
export type Parsed<S extends Shape> = { [K in keyof S]: ValueOf<S[K]> | undefined };

/** A query value that is a whole number in digits, as a number; anything else stays as it is (and fails). */
const fromDigits = (value: unknown): unknown =>
  typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value;

/** What a field's check answers when the value is refused (its problem is in `errors`). */
const REFUSED = Symbol('refused');

/** Where a field is read, for its messages and for reading digits as numbers in a query. */
interface FieldSite {
  field: string;
  where: 'field' | 'query parameter';
  errors: FieldError[];
}

type KindCheck<F extends Field> = (spec: F, value: unknown, site: FieldSite) => unknown;

const checkString: KindCheck<StringField> = (s, value, { field, errors }) => {
  if (typeof value !== 'string') errors.push({ field, message: `${field} must be a string` });
  else if (s.required && value.trim() === '') errors.push({ field, message: `${field} must not be empty` });
  else if (value.length > s.max) errors.push({ field, message: `${field} must be at most ${s.max} characters` });
  else {
    const bad = textProblem(field, value, s.multiline);
    if (!bad) return value;
    errors.push(bad);
  }
  return REFUSED;
};

const checkEnum: KindCheck<EnumField> = ({ values }, value, { field, errors }) => {
  if (typeof value === 'string' && values.includes(value)) return value;
  errors.push({ field, message: `${field} must be one of ${values.join(', ')}` });
  return REFUSED;
};

const checkInt: KindCheck<IntField> = (s, value, { field, where, errors }) => {
  const n = where === 'query parameter' ? fromDigits(value) : value;
  if (typeof n === 'number' && Number.isInteger(n) && n >= s.min && n <= s.max) return n;
  errors.push({
    field,
    message: `${field} must be a whole number from ${s.min} to ${s.max}${s.nullable ? ', or null' : ''}`,
  });
  return REFUSED;
};

const checkBool: KindCheck<BoolField> = (_s, value, { field, errors }) => {
  if (typeof value === 'boolean') return value;
  errors.push({ field, message: `${field} must be true or false` });
  return REFUSED;
};

const checkObject: KindCheck<ObjectField> = (s, value, { field, errors }) => {
  if (typeof value === 'object' && value !== null && !Array.isArray(value))
    return check(value as Record<string, unknown>, s.shape, 'field', errors, `${field}.`);
  errors.push({ field, message: `${field} must be an object` });
  return REFUSED;
};

const checkList: KindCheck<StringListField> = (l, value, { field, errors }) => {
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string' || v.length > l.maxLength))
    errors.push({ field, message: `${field} must be a list of strings` });
  else if (value.length > l.maxItems) errors.push({ field, message: `${field} may have at most ${l.maxItems} items` });
  else if (l.required && value.length === 0) errors.push({ field, message: `${field} must not be empty` });
  else {
    const bad = value.map((v: string, i) => textProblem(`${field}[${i}]`, v)).find(Boolean);
    if (!bad) return value;
    errors.push(bad);
  }
  return REFUSED;
};

const checkObjects: KindCheck<ObjectListField> = (l, value, { field, errors }) => {
  if (!Array.isArray(value)) errors.push({ field, message: `${field} must be a list of objects` });
  else if (value.length > l.maxItems)
    errors.push({ field, message: `${field} may have at most ${l.maxItems} items (got ${value.length})` });
  else if (value.length < l.minItems)
    errors.push({
      field,
      message: `${field} must have at least ${l.minItems} item${l.minItems === 1 ? '' : 's'}`,
    });
  else {
    const before = errors.length;
    const items = value.map((item: unknown, i) => {
      if (typeof item === 'object' && item !== null && !Array.isArray(item))
        return check(item as Record<string, unknown>, l.shape, 'field', errors, `${field}[${i}].`);
      errors.push({ field: `${field}[${i}]`, message: `${field}[${i}] must be an object` });
      return {};
    });
    // At most 50 of a list's problems are listed (a bad 1,000-item list answers a readable error).
    if (errors.length - before > 50) errors.splice(before + 50);
    return items;
  }
  return REFUSED;
};

const checkEntitlements: KindCheck<EntitlementsField> = (spec, value, { field, errors }) => {
  const problem = entitlementsProblem(field, value, spec.maxItems);
  if (!problem) return [...(value as string[])];
  errors.push(problem);
  return REFUSED;
};

const checkMap: KindCheck<StringMapField> = (spec, value, { field, errors }) => {
  const entries =
    typeof value === 'object' && value !== null && !Array.isArray(value)
      ? Object.entries(value as Record<string, unknown>)
      : null;
  if (!entries || entries.some(([, v]) => typeof v !== 'string'))
    errors.push({ field, message: `${field} must be an object of strings` });
  else if (entries.length > spec.maxEntries)
    errors.push({ field, message: `${field} may have at most ${spec.maxEntries} entries` });
  else {
    const bad = entries
      .map(([k, v]) => metadataKeyProblem(k, field) ?? textProblem(`${field}.${k}`, v as string, true))
      .find(Boolean);
    if (!bad) return Object.fromEntries(entries);
    errors.push(bad);
  }
  return REFUSED;
};

/** Each kind of field's check, by its kind (a field without one is a string). */
const kindChecks: { [K in NonNullable<Field['kind']>]: KindCheck<Extract<Field, { kind?: K }>> } = {
  string: checkString,
  enum: checkEnum,
  int: checkInt,
  bool: checkBool,
  object: checkObject,
  list: checkList,
  objects: checkObjects,
  entitlements: checkEntitlements,
  map: checkMap,
};

function check(
  source: Record<string, unknown>,
  shape: Shape,
  where: 'field' | 'query parameter',
  errors: FieldError[],
  prefix = '',
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of Object.keys(source)) {
    if (!Object.hasOwn(shape, name)) {
      const field = `${prefix}${printableFieldName(name)}`;
      errors.push({ field, message: `unknown ${where} "${field}"` });
    }
  }
  for (const [name, spec] of Object.entries(shape)) {
    const field = `${prefix}${name}`;
    const value = source[name];
    if (
      value === null &&
      (spec.kind === undefined ||
        spec.kind === 'string' ||
        spec.kind === 'int' ||
        spec.kind === 'object' ||
        spec.kind === 'enum') &&
      spec.nullable
    ) {
      out[name] = null;
      continue;
    }
    if (value === undefined || (value === null && spec.required)) {
      if (spec.required) errors.push({ field, message: `${field} is required` });
      else if (spec.kind === 'int' && spec.default !== undefined) out[name] = spec.default;
      continue;
    }
    // From here null is a wrong type, as the document says: it never means "absent".
    const kindCheck = kindChecks[spec.kind ?? 'string'] as KindCheck<Field>;
    const accepted = kindCheck(spec, value, { field, where, errors });
    if (accepted !== REFUSED) out[name] = accepted;
  }
  return out;
}

function fail(errors: FieldError[], what: string): never {
  throw new AppError(
    'invalid_request',
    errors.length === 1 ? errors[0].message : `the ${what} has ${errors.length} problems`,
    errors,
  );
}

export function readBody<S extends Shape>(req: Request, shape: S): Parsed<S> {
  const body: unknown = req.body ?? {};
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new AppError('invalid_request', 'the request body must be a JSON object');
  const errors: FieldError[] = [];
  const out = check(body as Record<string, unknown>, shape, 'field', errors);
  if (errors.length) fail(errors, 'request body');
  return out as Parsed<S>;
}

/** Query parameters arrive as strings; repeated ones arrive as arrays and fail the check. */
export function readQuery<S extends QueryShape>(req: Request, shape: S): Parsed<S> {
  const errors: FieldError[] = [];
  const out = check(req.query as Record<string, unknown>, shape, 'query parameter', errors);
  if (errors.length) fail(errors, 'query string');
  return out as Parsed<S>;
}

/** A route that takes no query parameters refuses any (400 naming each), as unknown body fields are refused. */
export function noQuery(req: Request): void {
  readQuery(req, {});
}

/** Path parameters (ids, licence keys, decoded from the URL) hold no control characters: 400 naming the parameter. */
export function checkPathParameters(req: Request): void {
  const errors: FieldError[] = [];
  for (const [name, value] of Object.entries(req.params as Record<string, unknown>)) {
    const bad = typeof value === 'string' ? textProblem(name, value) : undefined;
    if (bad) errors.push(bad);
  }
  if (errors.length) fail(errors, 'path');
}

/** The list parameters every list endpoint takes. */
export const pageShape = {
  limit: { kind: 'int', min: 1, max: 100, default: 20, description: 'Items per page' },
  starting_after: { max: 64, description: 'The last id of the previous page (next_cursor)' },
} satisfies QueryShape;

/** The page to read; starting_after must be an id of the listed kind. */
export function toPage(query: { limit?: number | null; starting_after?: string }, idPrefix: string): PageRequest {
  const startingAfter = query.starting_after ?? '';
  if (startingAfter && !isId(idPrefix, startingAfter))
    throw AppError.invalid('starting_after', `starting_after must be an id (${idPrefix}_…) from a previous page`);
  return { limit: query.limit ?? pageShape.limit.default, starting_after: startingAfter };
}

/** A page of a list as every list answers it: its items, whether more follow, and the cursor to them. */
export function pageJson<T>(page: { has_more: boolean; next_cursor: string }, data: T[]) {
  return { data, has_more: page.has_more, next_cursor: page.next_cursor || null };
}

export function checkId(field: string, prefix: string, value: string): string {
  if (!isId(prefix, value)) throw AppError.invalid(field, `${field} must be an id (${prefix}_…)`);
  return value;
}

/** Idempotency-Key: optional, printable ASCII, at most 255 characters. */
export function idempotencyKey(req: Request): string {
  const key = req.get('idempotency-key');
  if (key === undefined) return '';
  if (!/^[\x21-\x7e]{1,255}$/.test(key))
    throw AppError.invalid('Idempotency-Key', 'Idempotency-Key must be 1 to 255 printable ASCII characters');
  return key;
}

/** A request that carries a body must say it is JSON; bodiless requests pass. */
export function requireJsonBody(req: Request, _res: unknown, next: () => void): void {
  const hasBody = req.get('transfer-encoding') !== undefined || Number(req.get('content-length') ?? 0) > 0;
  if (hasBody && !req.is(['application/json', 'application/*+json'])) {
    throw new AppError('unsupported_media_type', 'the request body must be JSON (Content-Type: application/json)');
  }
  next();
}
