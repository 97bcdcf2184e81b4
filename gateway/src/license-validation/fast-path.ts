import type { IncomingMessage, ServerResponse } from 'node:http';
import { sha256, withRequestId, type Logger } from '@licensing/runtime';
import type { AuthCache } from '../auth/auth-cache';
import type { LicenseValidator, ValidationAnswer } from './validator';
import { pushRateLimitHeaders } from '../rate-limits/headers';
import type { RateLimits } from '../rate-limits/limiter';
import { knownError, problemOf } from '../http/errors';
import type { HttpMetrics } from '../http/metrics';
import { logAccess, requestIdFor } from '../http/request-context';
import { validationJson } from './validation-json';
import { hstsValue, httpsRequired, type TransportSettings } from '../http/transport';
import { licenseValidateQuery } from '../request-shapes/operations';

const PATHS = ['/api/v1/licenses/validate?', '/v1/licenses/validate?'];
const ROUTE = '/api/v1/licenses/validate';
const BEARER = /^Bearer ([^\s]+)$/;
const PLAIN_VALUE = /^[A-Za-z0-9._~-]*$/;
const JSON_TYPE = 'application/json; charset=utf-8';
// The route's own query shape (which the OpenAPI document shows): a value past it is left to Express to refuse.
const KEY_LIMIT = licenseValidateQuery.license_key.max;
const FINGERPRINT_LIMIT = licenseValidateQuery.fingerprint.max;
const toJson = (answer: ValidationAnswer) => JSON.stringify(validationJson(answer));

export interface FastPathDeps {
  /** HTTPS in production and HSTS, as the Express app applies them (http/transport.ts). */
  transport: Pick<TransportSettings, 'NODE_ENV' | 'HSTS_MAX_AGE_S'>;
  authCache: AuthCache;
  limits: RateLimits;
  validator: LicenseValidator;
  http: HttpMetrics;
  log: Logger;
  /** express's compiled `trust proxy` function: is this hop a trusted proxy? */
  trustProxy: (address: string, hop: number) => boolean;
}

/**
 * The hot path without Express: `GET /api/v1/licenses/validate` (and /v1/…)
 * when the API key is in the auth cache and the rate limits can be decided
 * without Redis. A licence in the validation cache (or a malformed key) is
 * answered at once; an unknown one by one call to the licence service. It
 * answers with the same rules, body, headers, metrics, access log and problem
 * answers as the Express route. Anything else (an unknown API key, a query that
 * needs checking or decoding, a header sent twice, clear text where HTTPS is
 * required, a limit near its end) returns false before it has counted or
 * written anything, and the Express app answers.
 */
export function fastValidation({
  transport,
  authCache,
  limits,
  validator,
  http,
  log,
  trustProxy: trust,
}: FastPathDeps) {
  // Whether an address is a trusted proxy never changes: remember the answer per address (bounded).
  const trusted = new Map<string, boolean>();
  const trustProxy = (address: string) => {
    let yes = trusted.get(address);
    if (yes === undefined) {
      if (trusted.size >= 1024) trusted.clear();
      yes = trust(address, 0);
      trusted.set(address, yes);
    }
    return yes;
  };
  const hsts = hstsValue(transport);
  const production = httpsRequired(transport);
  const answered = http.of('GET', ROUTE, 200);
  return (req: IncomingMessage, res: ServerResponse): boolean => {
    const url = req.url!;
    if (req.method !== 'GET' || !(url.startsWith(PATHS[0]) || url.startsWith(PATHS[1]))) return false;
    const query = readQuery(url.slice(url.indexOf('?') + 1));
    if (!query) return false;
    const headers = readHeaders(req.rawHeaders);
    if (!headers) return false;
    const secure = isSecure(req, headers.forwardedProto, trustProxy);
    if (production && !secure) return false;
    const token = headers.authorization && BEARER.exec(headers.authorization)?.[1];
    if (!token || token.length > 200) return false;
    const principal = authCache.get(tokenDigest(req.socket, token), token);
    if (!principal) return false;
    const input = { key: query.license_key, productId: '', fingerprint: query.fingerprint };
    const local = validator.local(principal, input);
    const verdict = limits.settings.enabled ? limits.checkLocally(principal) : null;
    if (verdict === undefined) return false;

    const started = process.hrtime.bigint();
    const requestId = requestIdFor(headers.requestId);
    // A flat [name, value, …] list: no header object to build and walk.
    const out: string[] = ['X-Request-Id', requestId];
    if (verdict) pushRateLimitHeaders(out, verdict.budgets, Math.floor(Date.now() / 1000), verdict.policy);
    if (secure) out.push('Strict-Transport-Security', hsts);
    const send = (status: number, contentType: string, body: string, length = Buffer.byteLength(body)) => {
      out.push('Content-Type', contentType, 'Content-Length', String(length));
      res.writeHead(status, out);
      res.end(body);
    };
    if (local) {
      const sent = validator.answerSent(principal, local, toJson);
      send(200, JSON_TYPE, sent.body, sent.length);
      answered.observe(started);
      logAccess(log, requestId, 'GET', url, 200, started, ROUTE);
      return true;
    }
    // A key this gateway does not know: the licence service answers (in the request id's scope, so the
    // call carries it), still without Express: its routing and middleware cost more than the call itself.
    const reply = (status: number, contentType: string, body: string) => {
      send(status, contentType, body);
      http.observe('GET', ROUTE, status, started);
      logAccess(log, requestId, 'GET', url, status, started, ROUTE);
    };
    withRequestId(requestId, () => validator.remote(principal, input)).then(
      (answer) => reply(200, JSON_TYPE, toJson(answer)),
      (err: unknown) => {
        const problem = problemOf(knownError(err, log, ROUTE), requestId);
        for (const [name, value] of Object.entries(problem.headers)) if (name !== 'Content-Type') out.push(name, value);
        reply(problem.status, problem.headers['Content-Type'], problem.body);
      },
    );
    return true;
  };
}

const LAST_TOKEN = Symbol('last API key on this connection');
type WithLastToken = { [LAST_TOKEN]?: { token: string; digest: string } };

/**
 * The auth cache's digest of an API key, remembered per connection: a client on a kept-alive connection
 * sends the same key every time, and hashing it cost a few per cent of a cached validation. The
 * comparison is with the key this same connection sent before, so its timing tells the client nothing.
 */
function tokenDigest(socket: object, token: string): string {
  const last = (socket as WithLastToken)[LAST_TOKEN];
  if (last?.token === token) return last.digest;
  const digest = sha256(token, 'hex');
  (socket as WithLastToken)[LAST_TOKEN] = { token, digest };
  return digest;
}

interface ReadHeaders {
  authorization?: string;
  forwardedProto?: string;
  requestId?: string;
}

/**
 * The three headers the fast path reads, from the raw list (req.headers would build an object of
 * every header, lower-casing each name, which cost more than the rest of a cached answer's reading).
 * Any of them sent twice: null, and Express judges the request as node:http merges it.
 */
function readHeaders(raw: string[]): ReadHeaders | null {
  const found: ReadHeaders = {};
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i];
    let field: keyof ReadHeaders;
    if (name.length === 13 && name.toLowerCase() === 'authorization') field = 'authorization';
    else if (name.length === 17 && name.toLowerCase() === 'x-forwarded-proto') field = 'forwardedProto';
    else if (name.length === 12 && name.toLowerCase() === 'x-request-id') field = 'requestId';
    else continue;
    if (found[field] !== undefined) return null;
    found[field] = raw[i + 1];
  }
  return found;
}

/** license_key (required, once) and fingerprint (optional, once), with nothing to decode; null = let Express judge it. */
function readQuery(qs: string): { license_key: string; fingerprint: string } | null {
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
  return key === undefined ? null : { license_key: key, fingerprint: fingerprint ?? '' };
}

/** As express's req.secure: TLS here, or X-Forwarded-Proto: https from a trusted proxy. */
function isSecure(req: IncomingMessage, proto: string | undefined, trustProxy: (address: string) => boolean): boolean {
  if ((req.socket as { encrypted?: boolean }).encrypted) return true;
  if (proto === undefined || !trustProxy(req.socket.remoteAddress ?? '')) return false;
  const comma = proto.indexOf(',');
  return (comma < 0 ? proto : proto.slice(0, comma)).trim() === 'https';
}
