import type { Request } from 'express';
import { AppError, isId, type FieldError } from '@licensing/runtime';
import type { PageRequest } from '@licensing/proto';

// Shape checks for request bodies and query strings. Domain rules (what makes
// a good e-mail or name) live in the services; this is only "is it the JSON
// we documented": known fields, right types, sane lengths.

export interface StringField {
  kind?: 'string';
  required?: boolean;
  max: number;
}

export interface IntField {
  kind: 'int';
  required?: boolean;
  min: number;
  max: number;
  /** null is a meaningful value (e.g. "unlimited"), kept as null. */
  nullable?: boolean;
}

export interface BoolField {
  kind: 'bool';
  required?: boolean;
}

export interface ObjectField {
  kind: 'object';
  required?: boolean;
  shape: Shape;
  /** null is a meaningful value (e.g. "remove the price"), kept as null. */
  nullable?: boolean;
}

/** An open map of string values (e.g. metadata); keys and sizes are checked by the owning service. */
export interface StringMapField {
  kind: 'map';
  required?: boolean;
  maxEntries: number;
}

/** A list of short strings (e.g. event type names). */
export interface StringListField {
  kind: 'list';
  required?: boolean;
  maxItems: number;
  maxLength: number;
}

export type Field = StringField | IntField | BoolField | ObjectField | StringMapField | StringListField;
export type Shape = Record<string, Field>;

type ValueOf<F extends Field> = F extends IntField
  ? number | null
  : F extends BoolField
    ? boolean
    : F extends ObjectField
      ? Record<string, unknown> | null
      : F extends StringMapField
        ? Record<string, string>
        : F extends StringListField
          ? string[]
          : string;
export type Parsed<S extends Shape> = { [K in keyof S]: ValueOf<S[K]> | undefined };

function check(
  source: Record<string, unknown>,
  shape: Shape,
  where: string,
  errors: FieldError[],
  prefix = '',
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of Object.keys(source)) {
    if (!(name in shape)) errors.push({ field: `${prefix}${name}`, message: `unknown ${where} "${prefix}${name}"` });
  }
  for (const [name, spec] of Object.entries(shape)) {
    const field = `${prefix}${name}`;
    const value = source[name];
    if (
      value === undefined ||
      (value === null && !((spec.kind === 'int' || spec.kind === 'object') && spec.nullable))
    ) {
      if (spec.required) errors.push({ field, message: `${field} is required` });
      continue;
    }
    switch (spec.kind ?? 'string') {
      case 'string': {
        const s = spec as StringField;
        if (typeof value !== 'string') errors.push({ field, message: `${field} must be a string` });
        else if (s.required && value.trim() === '') errors.push({ field, message: `${field} must not be empty` });
        else if (value.length > s.max) errors.push({ field, message: `${field} must be at most ${s.max} characters` });
        else out[name] = value;
        break;
      }
      case 'int': {
        const s = spec as IntField;
        if (value === null) out[name] = null;
        else if (typeof value !== 'number' || !Number.isInteger(value) || value < s.min || value > s.max)
          errors.push({
            field,
            message: `${field} must be a whole number from ${s.min} to ${s.max}${s.nullable ? ', or null' : ''}`,
          });
        else out[name] = value;
        break;
      }
      case 'bool':
        if (typeof value !== 'boolean') errors.push({ field, message: `${field} must be true or false` });
        else out[name] = value;
        break;
      case 'object':
        if (value === null) out[name] = null;
        else if (typeof value !== 'object' || Array.isArray(value))
          errors.push({ field, message: `${field} must be an object` });
        else
          out[name] = check(
            value as Record<string, unknown>,
            (spec as ObjectField).shape,
            'field',
            errors,
            `${field}.`,
          );
        break;
      case 'list': {
        const l = spec as StringListField;
        if (!Array.isArray(value) || value.some((v) => typeof v !== 'string' || v.length > l.maxLength))
          errors.push({ field, message: `${field} must be a list of strings` });
        else if (value.length > l.maxItems)
          errors.push({ field, message: `${field} may have at most ${l.maxItems} items` });
        else if (l.required && value.length === 0) errors.push({ field, message: `${field} must not be empty` });
        else out[name] = value;
        break;
      }
      case 'map': {
        const entries =
          typeof value === 'object' && !Array.isArray(value) ? Object.entries(value as Record<string, unknown>) : null;
        if (!entries || entries.some(([, v]) => typeof v !== 'string'))
          errors.push({ field, message: `${field} must be an object of strings` });
        else if (entries.length > (spec as StringMapField).maxEntries)
          errors.push({ field, message: `${field} may have at most ${(spec as StringMapField).maxEntries} entries` });
        else out[name] = Object.fromEntries(entries);
        break;
      }
    }
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

/** Query parameters are strings only; repeated ones arrive as arrays and fail the string check. */
export function readQuery<S extends Record<string, StringField>>(
  req: Request,
  shape: S,
): { [K in keyof S]: string | undefined } {
  const errors: FieldError[] = [];
  const out = check(req.query as Record<string, unknown>, shape, 'query parameter', errors);
  if (errors.length) fail(errors, 'query string');
  return out as { [K in keyof S]: string | undefined };
}

/** The list parameters every list endpoint takes. */
export const pageShape = { limit: { max: 3 }, starting_after: { max: 64 } } satisfies Record<string, StringField>;

export function toPage(query: { limit?: string; starting_after?: string }, idPrefix: string): PageRequest {
  let limit = 20;
  if (query.limit !== undefined) {
    limit = /^\d+$/.test(query.limit) ? Number(query.limit) : NaN;
    if (!(limit >= 1 && limit <= 100)) throw AppError.invalid('limit', 'limit must be an integer from 1 to 100');
  }
  const startingAfter = query.starting_after ?? '';
  if (startingAfter && !isId(idPrefix, startingAfter))
    throw AppError.invalid('starting_after', `starting_after must be an id (${idPrefix}_…) from a previous page`);
  return { limit, startingAfter };
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
