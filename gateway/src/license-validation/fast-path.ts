import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import {
  AppError,
  addressKey,
  hstsValue,
  httpsRequired,
  sha256,
  withRequestId,
  type Logger,
  type StartedSpan,
  type Tracing,
} from '@licensing/runtime';
import { parseLicenseKey, weakForeignCredential, type ParsedKey } from '@licensing/proto';
import { sameCanonicalKey } from '../auth/app-routes';
import type { AuthCache } from '../auth/auth-cache';
import { licenseDigest, namedLicenseDigest, type LicenseCredentials } from '../auth/license-credentials';
import type { Principal } from '../auth/principal';
import { knownError, problemOf } from '../http/errors';
import { requestIdFor } from '../http/request-context';
import { endRequestSpan, startRequestSpan, traceIdOf } from '../http/tracing';
import type { TransportSettings } from '../http/transport';
import { pushRateLimitHeaders } from '@licensing/runtime';
import { namesNothing, rejectionDetail } from '@licensing/runtime';
import type { AccessLog, AppRequest, HttpMetrics, RateLimits, RateVerdict, RouteSeries } from '@licensing/runtime';
import { clientAddress, isSecure, readFastRequest, type FastRequest } from './fast-path-request';
import { validationJson } from './validation-json';
import type { LicenseValidator, ValidationAnswer, ValidationInput } from './validator';

// The first step of a validation's flow through license-validation/, drawn in validator.ts's header.

const ROUTE = '/api/v1/licenses/validate';
const JSON_TYPE = 'application/json; charset=utf-8';
const toJson = (answer: ValidationAnswer) => JSON.stringify(validationJson(answer));

export interface FastPathDeps {
  /** HTTPS in production and HSTS, as the Express app applies them (http/transport.ts). */
  transport: Pick<TransportSettings, 'NODE_ENV' | 'HSTS_MAX_AGE_S'>;
  authCache: AuthCache;
  /** The licence credentials ("License <key>") this gateway remembers. */
  licenseCredentials: Pick<LicenseCredentials, 'get'>;
  limits: RateLimits;
  validator: LicenseValidator;
  http: HttpMetrics;
  log: Logger;
  access: AccessLog;
  /** express's compiled `trust proxy` function: is this hop a trusted proxy? */
  trustProxy: (address: string, hop: number) => boolean;
  /** OpenTelemetry, when on: each request answered here gets its span, as on the Express path. */
  tracing?: Tracing;
  /** True once shutdown has begun: answers carry Connection: close, as http/drain.ts gives Express's. */
  draining?: { readonly now: boolean };
}

/**
 * The hot path without Express: `GET /api/v1/licenses/validate` (and /v1/…)
 * when the API key is in the auth cache (or the licence credential, active and
 * validating itself, in LicenseCredentials) and the rate limits can be decided
 * without Redis, or the request spends a licence's minute (too small a limit to
 * count in memory: Redis counts it, and this answers, 429 included). A licence
 * in the validation cache (or a malformed key) is answered at once; an unknown
 * one by one call to the licence service. It answers with the same rules, body,
 * headers, metrics, access log and problem answers as the Express route. Anything
 * else (what fast-path-request.ts declines, an unknown credential, clear text
 * where HTTPS is required, another budget near its end) returns false before it
 * has counted or written anything, and the Express app answers.
 */
export function fastValidation(deps: FastPathDeps) {
  const fp: FastPath = {
    ...deps,
    trustedHop: rememberedTrust(deps.trustProxy),
    hsts: hstsValue(deps.transport),
    production: httpsRequired(deps.transport),
    answered: deps.http.of('GET', ROUTE, 200),
  };
  return (req: IncomingMessage, res: ServerResponse): boolean => validate(fp, req, res);
}

/**
 * What every request's answer reads, made once per gateway. The steps below are module functions
 * given this and the request's own values as arguments, so splitting the path into steps creates no
 * closure, object or promise per request.
 */
interface FastPath extends FastPathDeps {
  /** trustProxy for the first hop, remembered per address. */
  trustedHop: (address: string) => boolean;
  hsts: string;
  production: boolean;
  /** The series of a 200 of this route, looked up once. */
  answered: RouteSeries;
}

/** A licence credential validating itself: the key it asks about, parsed, with its digest (the credential's). */
type Known = { parsed: ParsedKey; digest: string };

/** Whether an address is a trusted proxy never changes: the answer remembered per address (bounded). */
function rememberedTrust(trust: FastPathDeps['trustProxy']) {
  const trusted = new Map<string, boolean>();
  return (address: string) => {
    let yes = trusted.get(address);
    if (yes === undefined) {
      if (trusted.size >= 1024) trusted.clear();
      yes = trust(address, 0);
      trusted.set(address, yes);
    }
    return yes;
  };
}

/** One request: true when this path answers it (now or once its budgets are counted), false for Express. */
function validate(fp: FastPath, req: IncomingMessage, res: ServerResponse): boolean {
  const url = req.url!;
  const request = readFastRequest(req.method, url, req.rawHeaders);
  if (typeof request === 'string') return false;
  const socket = req.socket as Socket & { encrypted?: boolean };
  const secure = isSecure(!!socket.encrypted, socket.remoteAddress ?? '', request.forwardedProto, fp.trustedHop);
  if (fp.production && !secure) return false;
  let principal: Principal | undefined;
  let known: Known | undefined;
  if (request.license !== undefined) {
    // A licence credential: remembered, active, and validating itself; anything else Express answers.
    const digest = licenseDigestOf(socket, request.license);
    if (digest === undefined) return false;
    principal = fp.licenseCredentials.get(digest);
    if (principal?.license?.status !== 'active') return false;
    known = selfValidation(principal.license.key, request, digest);
    if (!known) return false;
  } else {
    principal = fp.authCache.get(tokenDigest(socket, request.apiKey), request.apiKey);
    if (!principal) return false;
  }
  const app = appRequest(fp, principal, socket, request);
  const input = { key: request.licenseKey, productId: '', fingerprint: request.fingerprint };
  const started = process.hrtime.bigint();
  // Only with tracing on are the headers parsed into an object (req.headers is built on first use).
  const traced = fp.tracing && startRequestSpan(fp.tracing, 'GET', req.headers);
  const answer = (verdict: RateVerdict | null) =>
    respond(fp, res, url, request.requestId, secure, principal, input, known, verdict, started, traced, app);
  const { limits } = fp;
  if (!limits.settings.enabled) answer(null);
  else {
    const verdict = limits.checkLocally(principal, app);
    if (verdict) answer(verdict);
    // App traffic's minutes (a licence's 60 by default) are too small to count in memory: Redis
    // counts them, and this answers when it has (429 too), as Express would; a vendor key's budget
    // near its end is Express's.
    else if (!app) return false;
    else {
      const counted = limits.check(principal, app);
      if (counted instanceof Promise)
        counted.then(answer, (err: unknown) => fail(fp, res, url, request.requestId, secure, err, started, traced));
      else answer(counted);
    }
  }
  return true;
}

/**
 * The key a licence credential asks about, as the credential sent it (an app sends one string twice):
 * it is that licence, already parsed; compared as the caller's own two inputs, which tells nothing of
 * any other key. Undefined when it asks about another key (Express answers).
 */
function selfValidation(ownKey: string, request: FastRequest, digest: string): Known | undefined {
  const asked: ParsedKey =
    request.licenseKey === request.license ? { ok: true, key: ownKey } : parseLicenseKey(request.licenseKey);
  if (!asked.ok || !sameCanonicalKey(ownKey, asked.key)) return undefined;
  return { parsed: asked, digest };
}

/** App traffic: what its budgets need to know (rate-limits/budgets.ts); undefined for a vendor's key or limits off. */
function appRequest(fp: FastPath, principal: Principal, socket: Socket, request: FastRequest): AppRequest | undefined {
  if (principal.scope !== 'validate' || !fp.limits.settings.enabled) return undefined;
  const ip = clientAddress(socket.remoteAddress ?? '', request.forwardedFor, fp.trustProxy);
  const app: AppRequest = { address: addressKey(ip) };
  // A validate-scope key spends the minute of the licence it names; a licence credential its own.
  if (!principal.license) app.licenseDigest = namedLicenseDigest(request.licenseKey);
  return app;
}

/** Writes the answer to a request whose budgets are counted (`verdict`; null: limits off). */
function respond(
  fp: FastPath,
  res: ServerResponse,
  url: string,
  sentRequestId: string | undefined,
  secure: boolean,
  principal: Principal,
  input: ValidationInput,
  known: Known | undefined,
  verdict: RateVerdict | null,
  started: bigint,
  traced: StartedSpan | undefined,
  app: AppRequest | undefined,
): void {
  const requestId = requestIdFor(sentRequestId);
  const traceId = traceIdOf(traced);
  // A flat [name, value, …] list: no header object to build and walk.
  const out: string[] = ['X-Request-Id', requestId];
  if (fp.draining?.now) out.push('Connection', 'close');
  if (verdict) pushRateLimitHeaders(out, verdict.budgets, Math.floor(Date.now() / 1000), verdict.policy);
  if (secure) out.push('Strict-Transport-Security', fp.hsts);
  const spent = verdict?.rejectedBy;
  if (spent) {
    out.push('Retry-After', String(spent.resetS));
    const err = new AppError('rate_limited', rejectionDetail(spent, principal.plan));
    refuse(fp, res, out, err, spent.name, url, requestId, principal, started, traceId, traced);
    return;
  }
  const local = fp.validator.local(principal, input, known);
  if (local) {
    const sent = fp.validator.answerSent(principal, local, toJson);
    send(res, out, 200, JSON_TYPE, sent.body, sent.length);
    if (app && namesNothing(sent.counts.code)) fp.limits.namedNothing(principal, app);
    fp.answered.observe(started);
    record(fp, url, 200, requestId, principal, started, traceId, traced);
    return;
  }
  // A key this gateway does not know: the licence service answers (in the request id's scope, so the
  // call carries it), still without Express: its routing and middleware cost more than the call itself.
  withRequestId(requestId, () => fp.validator.remote(principal, input), traced?.context).then(
    (answer) => {
      send(res, out, 200, JSON_TYPE, toJson(answer));
      fp.http.observe('GET', ROUTE, 200, started);
      record(fp, url, 200, requestId, principal, started, traceId, traced);
      if (app && namesNothing(answer.code)) fp.limits.namedNothing(principal, app);
    },
    (err: unknown) =>
      refuse(
        fp,
        res,
        out,
        knownError(err, fp.log, ROUTE),
        undefined,
        url,
        requestId,
        principal,
        started,
        traceId,
        traced,
      ),
  );
}

function send(
  res: ServerResponse,
  out: string[],
  status: number,
  contentType: string,
  body: string,
  length = Buffer.byteLength(body),
): void {
  out.push('Content-Type', contentType, 'Content-Length', String(length));
  res.writeHead(status, out);
  res.end(body);
}

/** The one problem answer for `err`, with its metrics, access log line and span. */
function refuse(
  fp: FastPath,
  res: ServerResponse,
  out: string[],
  err: AppError,
  window: string | undefined,
  url: string,
  requestId: string,
  principal: Principal,
  started: bigint,
  traceId: string | undefined,
  traced: StartedSpan | undefined,
): void {
  const problem = problemOf(err, requestId);
  for (const [name, value] of Object.entries(problem.headers)) if (name !== 'Content-Type') out.push(name, value);
  send(res, out, problem.status, problem.headers['Content-Type'], problem.body);
  fp.http.observe('GET', ROUTE, problem.status, started, window);
  record(fp, url, problem.status, requestId, principal, started, traceId, traced);
}

/** The answer's access log line and the end of its span. */
function record(
  fp: FastPath,
  url: string,
  status: number,
  requestId: string,
  principal: Principal,
  started: bigint,
  traceId: string | undefined,
  traced: StartedSpan | undefined,
): void {
  fp.access.record({
    requestId,
    method: 'GET',
    url,
    status,
    startedNs: started,
    route: ROUTE,
    caller: principal,
    traceId,
  });
  if (traced) endRequestSpan(traced, 'GET', ROUTE, status);
}

/** Counting failed (it does not: Redis away is counted here): the one error answer, as Express gives it. */
function fail(
  fp: FastPath,
  res: ServerResponse,
  url: string,
  sentRequestId: string | undefined,
  secure: boolean,
  err: unknown,
  started: bigint,
  traced: StartedSpan | undefined,
) {
  const requestId = requestIdFor(sentRequestId);
  const problem = problemOf(knownError(err, fp.log, ROUTE), requestId);
  const out: string[] = ['X-Request-Id', requestId];
  if (fp.draining?.now) out.push('Connection', 'close');
  if (secure) out.push('Strict-Transport-Security', fp.hsts);
  for (const [name, value] of Object.entries(problem.headers)) out.push(name, value);
  out.push('Content-Length', String(Buffer.byteLength(problem.body)));
  res.writeHead(problem.status, out);
  res.end(problem.body);
  fp.http.observe('GET', ROUTE, problem.status, started);
  fp.access.record({
    requestId,
    method: 'GET',
    url,
    status: problem.status,
    startedNs: started,
    route: ROUTE,
    traceId: traceIdOf(traced),
  });
  if (traced) endRequestSpan(traced, 'GET', ROUTE, problem.status);
}

const LAST_TOKEN = Symbol('last credential on this connection');
type WithLastToken = { [LAST_TOKEN]?: { token: string; license: boolean; digest: string } };

/**
 * The auth caches' digest of a credential as sent, remembered per connection: a client on a
 * kept-alive connection sends the same one every time, and hashing it (and, for a licence key,
 * parsing it) cost a few per cent of a cached validation. The comparison is with what this same
 * connection sent before, so its timing tells the client nothing.
 */
function tokenDigest(socket: object, token: string): string {
  const last = (socket as WithLastToken)[LAST_TOKEN];
  if (last?.token === token && !last.license) return last.digest;
  const digest = sha256(token, 'hex');
  (socket as WithLastToken)[LAST_TOKEN] = { token, license: false, digest };
  return digest;
}

/** The same for a "License <key>" credential: the digest of its canonical key; undefined when it is malformed. */
function licenseDigestOf(socket: object, sent: string): string | undefined {
  const last = (socket as WithLastToken)[LAST_TOKEN];
  if (last?.token === sent && last.license) return last.digest;
  const parsed = parseLicenseKey(sent);
  // A weak imported key is no credential: Express answers its 401 (auth/credential.ts).
  if (!parsed.ok || (parsed.foreign && weakForeignCredential(parsed.key) !== undefined)) return undefined;
  const digest = licenseDigest(parsed.key);
  (socket as WithLastToken)[LAST_TOKEN] = { token: sent, license: true, digest };
  return digest;
}
