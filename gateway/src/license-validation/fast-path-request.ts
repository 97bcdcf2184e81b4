import { bearerKey } from '../auth/bearer';
import { licenseCredential } from '../auth/credential';
import { licenseValidateQuery } from '../request-shapes/operations';

// Part of a validation's flow through license-validation/, drawn in validator.ts's header.
//
// What the fast path (fast-path.ts) reads of a request, without Express: the few requests it can
// answer exactly as the Express route would are read here, and everything else is declined, before
// anything is counted or written, for Express to answer. Declining is always safe; answering a
// request Express would answer differently is the one thing this must never do
// (gateway/test/unit/fast-path-request.test.ts, and test/e2e/fast-path-parity.test.ts sends the same
// requests both ways and compares the answers).

const PATHS = ['/api/v1/licenses/validate?', '/v1/licenses/validate?'];
/** A query value with nothing to decode. */
const PLAIN_VALUE = /^[A-Za-z0-9._~-]*$/;
// The route's own query shape (which the OpenAPI document shows): a value past it is left to Express to refuse.
const KEY_LIMIT = licenseValidateQuery.license_key.max;
const FINGERPRINT_LIMIT = licenseValidateQuery.fingerprint.max;

/** A validation the fast path may answer, as Express would read it. */
export interface FastRequest {
  licenseKey: string;
  /** '' when not sent. */
  fingerprint: string;
  /** The API key of "Authorization: Bearer <key>" ('' when the credential is a licence). */
  apiKey: string;
  /** The licence key of "Authorization: License <key>", as sent (not yet normalised); absent for an API key. */
  license?: string;
  /** X-Forwarded-Proto and X-Request-Id as sent (once each), if sent. */
  forwardedProto?: string;
  /** X-Forwarded-For as sent (several joined with ", ", as Node joins them for Express), if sent. */
  forwardedFor?: string;
  requestId?: string;
}

/** Why a request is left to Express. */
export type Declined =
  /** Not a GET of /api/v1/licenses/validate (or /v1/…) with a query string. */
  | 'route'
  /** A query Express must decode or judge: a parameter other than license_key and fingerprint, one
   *  sent twice, an escape or a '+', an empty or too long licence key, a too long fingerprint. */
  | 'query'
  /** Authorization, X-Forwarded-Proto, X-Request-Id, Content-Length or Transfer-Encoding sent twice:
   *  Express reads them as node:http merges them. */
  | 'header twice'
  /** A body (Transfer-Encoding, or a Content-Length other than 0): Express checks its type and parses it. */
  | 'body'
  /** No "Authorization: Bearer <key>" nor "License <key>" (Express answers 401, and counts the failure). */
  | 'authorization'
  /** An Origin: a browser page's call, whose CORS headers Express decides (auth/cors.ts). */
  | 'cross-origin';

/** The request if the fast path may answer it, else why not. */
export function readFastRequest(method: string | undefined, url: string, rawHeaders: string[]): FastRequest | Declined {
  if (method !== 'GET' || !(url.startsWith(PATHS[0]) || url.startsWith(PATHS[1]))) return 'route';
  const query = readQuery(url.slice(url.indexOf('?') + 1));
  if (!query) return 'query';
  const headers = readHeaders(rawHeaders);
  if (!headers) return 'header twice';
  if (headers.transferEncoding !== undefined || (headers.contentLength !== undefined && headers.contentLength !== '0'))
    return 'body';
  if (headers.origin !== undefined) return 'cross-origin';
  const apiKey = bearerKey(headers.authorization);
  const license = apiKey === undefined ? licenseCredential(headers.authorization) : undefined;
  if (apiKey === undefined && license === undefined) return 'authorization';
  return {
    licenseKey: query.licenseKey,
    fingerprint: query.fingerprint,
    apiKey: apiKey ?? '',
    ...(license !== undefined ? { license } : {}),
    forwardedProto: headers.forwardedProto,
    forwardedFor: headers.forwardedFor,
    requestId: headers.requestId,
  };
}

interface ReadHeaders {
  authorization?: string;
  forwardedFor?: string;
  forwardedProto?: string;
  requestId?: string;
  contentLength?: string;
  transferEncoding?: string;
  origin?: string;
}

/**
 * The headers the fast path reads, from the raw list (req.headers would build an object of every
 * header, lower-casing each name, which cost more than the rest of a cached answer's reading).
 * Any of them sent twice: null.
 */
function readHeaders(raw: string[]): ReadHeaders | null {
  const found: ReadHeaders = {};
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i];
    if (name.length === 15 && name.toLowerCase() === 'x-forwarded-for') {
      found.forwardedFor = found.forwardedFor === undefined ? raw[i + 1] : `${found.forwardedFor}, ${raw[i + 1]}`;
      continue;
    }
    let field: Exclude<keyof ReadHeaders, 'forwardedFor'>;
    if (name.length === 13 && name.toLowerCase() === 'authorization') field = 'authorization';
    else if (name.length === 17 && name.toLowerCase() === 'x-forwarded-proto') field = 'forwardedProto';
    else if (name.length === 12 && name.toLowerCase() === 'x-request-id') field = 'requestId';
    else if (name.length === 14 && name.toLowerCase() === 'content-length') field = 'contentLength';
    else if (name.length === 17 && name.toLowerCase() === 'transfer-encoding') field = 'transferEncoding';
    else if (name.length === 6 && name.toLowerCase() === 'origin') field = 'origin';
    else continue;
    if (found[field] !== undefined) return null;
    found[field] = raw[i + 1];
  }
  return found;
}

/** license_key (required, once) and fingerprint (optional, once), with nothing to decode; null = let Express judge it. */
function readQuery(qs: string): { licenseKey: string; fingerprint: string } | null {
  let key: string | undefined;
  let fingerprint: string | undefined;
  for (const pair of qs.split('&')) {
    const eq = pair.indexOf('=');
    if (eq < 0) return null;
    const name = pair.slice(0, eq);
    const value = pair.slice(eq + 1);
    if (!PLAIN_VALUE.test(value)) return null;
    if (name === 'license_key' && key === undefined && value.length > 0 && value.length <= KEY_LIMIT) key = value;
    else if (name === 'fingerprint' && fingerprint === undefined && value.length <= FINGERPRINT_LIMIT)
      fingerprint = value;
    else return null;
  }
  return key === undefined ? null : { licenseKey: key, fingerprint: fingerprint ?? '' };
}

/**
 * As express's req.secure (its req.protocol): the connection's own protocol, unless the hop is a
 * trusted proxy that sent X-Forwarded-Proto, whose first value then decides (so a TLS connection
 * from a trusted proxy saying "http" is not secure).
 */
export function isSecure(
  encrypted: boolean,
  remoteAddress: string,
  forwardedProto: string | undefined,
  trustProxy: (address: string) => boolean,
): boolean {
  if (!forwardedProto || !trustProxy(remoteAddress)) return encrypted;
  const comma = forwardedProto.indexOf(',');
  return (comma < 0 ? forwardedProto : forwardedProto.slice(0, comma)).trim() === 'https';
}

/**
 * The client's address as express's req.ip gives it (proxy-addr): the connection's address, then
 * each X-Forwarded-For entry from the right while the hop before it is a trusted proxy.
 */
export function clientAddress(
  remoteAddress: string,
  forwardedFor: string | undefined,
  trust: (address: string, hop: number) => boolean,
): string {
  if (forwardedFor === undefined) return remoteAddress;
  const hops = [
    remoteAddress,
    ...forwardedFor
      .split(',')
      .map((a) => a.trim())
      .reverse(),
  ];
  for (let i = 0; i < hops.length - 1; i++) if (!trust(hops[i], i)) return hops[i];
  return hops[hops.length - 1];
}
