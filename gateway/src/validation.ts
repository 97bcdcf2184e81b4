import type { Request } from 'express';
import { AppError, isId, type FieldError } from '@licensing/runtime';
import type { PageRequest } from '@licensing/proto';

// Shape checks for request bodies and query strings. Domain rules (what makes
// a good e-mail or name) live in the services; this is only "is it the JSON
// we documented": known fields, right types, sane lengths.

export interface StringField {
  required?: boolean;
  max: number;
}

export type Shape = Record<string, StringField>;

function check(source: Record<string, unknown>, shape: Shape, where: string, errors: FieldError[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of Object.keys(source)) {
    if (!(name in shape)) errors.push({ field: name, message: `unknown ${where} "${name}"` });
  }
  for (const [name, spec] of Object.entries(shape)) {
    const value = source[name];
    if (value === undefined || value === null) {
      if (spec.required) errors.push({ field: name, message: `${name} is required` });
      continue;
    }
    if (typeof value !== 'string') {
      errors.push({ field: name, message: `${name} must be a string` });
      continue;
    }
    if (spec.required && value.trim() === '') errors.push({ field: name, message: `${name} must not be empty` });
    else if (value.length > spec.max) errors.push({ field: name, message: `${name} must be at most ${spec.max} characters` });
    else out[name] = value;
  }
  return out;
}

function fail(errors: FieldError[], what: string): never {
  throw new AppError('invalid_request', errors.length === 1 ? errors[0].message : `the ${what} has ${errors.length} problems`, errors);
}

export function readBody<S extends Shape>(req: Request, shape: S): { [K in keyof S]: string | undefined } {
  const body: unknown = req.body ?? {};
  if (typeof body !== 'object' || Array.isArray(body)) throw new AppError('invalid_request', 'the request body must be a JSON object');
  const errors: FieldError[] = [];
  const out = check(body as Record<string, unknown>, shape, 'field', errors);
  if (errors.length) fail(errors, 'request body');
  return out as { [K in keyof S]: string | undefined };
}

export function readQuery<S extends Shape>(req: Request, shape: S): { [K in keyof S]: string | undefined } {
  const errors: FieldError[] = [];
  // Repeated parameters arrive as arrays and fail the string check.
  const out = check(req.query as Record<string, unknown>, shape, 'query parameter', errors);
  if (errors.length) fail(errors, 'query string');
  return out as { [K in keyof S]: string | undefined };
}

/** The list parameters every list endpoint takes. */
export const pageShape = { limit: { max: 3 }, starting_after: { max: 64 } } satisfies Shape;

export function toPage(query: { limit?: string; starting_after?: string }, idPrefix: string): PageRequest {
  let limit = 20;
  if (query.limit !== undefined) {
    limit = /^\d+$/.test(query.limit) ? Number(query.limit) : NaN;
    if (!(limit >= 1 && limit <= 100)) throw AppError.invalid('limit', 'limit must be an integer from 1 to 100');
  }
  const startingAfter = query.starting_after ?? '';
  if (startingAfter && !isId(idPrefix, startingAfter)) throw AppError.invalid('starting_after', `starting_after must be an id (${idPrefix}_…) from a previous page`);
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
  if (!/^[\x21-\x7e]{1,255}$/.test(key)) throw AppError.invalid('Idempotency-Key', 'Idempotency-Key must be 1 to 255 printable ASCII characters');
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
