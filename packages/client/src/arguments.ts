// Checks on what callers pass, so a wrong argument fails here with a clear
// message instead of as a puzzling 400 or 404 from the server.

/** A path segment: a non-empty string, encoded so it cannot change the path. */
export function segment(value: unknown, name: string): string {
  if (typeof value !== 'string' || value.trim() === '')
    throw new TypeError(`${name} must be a non-empty string, got ${describe(value)}`);
  return dotFree(encodeURIComponent(value.trim()), name);
}

/**
 * A file name as a path segment, exactly as given (spaces at its ends are part of it), percent-encoded
 * as UTF-8 so that spaces, `#`, `?`, `/` and non-ASCII letters arrive as they are.
 */
export function fileSegment(value: unknown, name: string): string {
  if (typeof value !== 'string' || value === '')
    throw new TypeError(`${name} must be a non-empty string, got ${describe(value)}`);
  return dotFree(encodeURIComponent(value), name);
}

/** URLs resolve "." and ".." segments (even encoded as %2E), which would send the request to another path. */
function dotFree(encoded: string, name: string): string {
  if (encoded === '.' || encoded === '..') throw new TypeError(`${name} must not be "." or ".."`);
  return encoded;
}

/** A JSON object body (not null, not an array). */
export function objectArg<T>(value: T, name: string): T {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new TypeError(`${name} must be an object, got ${describe(value)}`);
  return value;
}

export function optionalString(value: unknown, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '')
    throw new TypeError(`${name} must be a non-empty string when given, got ${describe(value)}`);
  return value;
}

export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return value === '' ? 'an empty string' : `"${value.slice(0, 40)}"`;
  return typeof value;
}

/** Per-call options of requests that create something and so may carry an Idempotency-Key. */
export interface CreateOptions {
  /** Your own key (1–255 printable ASCII); by default the SDK makes one so its retries never create twice. */
  idempotencyKey?: string;
}

/** The caller's Idempotency-Key, or a fresh random one. */
export function idempotencyKey(options: CreateOptions | undefined): string {
  const given = optionalString(options?.idempotencyKey, 'idempotencyKey');
  if (given !== undefined) {
    if (given.length > 255 || !/^[\x21-\x7e]+$/.test(given))
      throw new TypeError('idempotencyKey must be 1–255 printable ASCII characters without spaces');
    return given;
  }
  return globalThis.crypto.randomUUID();
}
