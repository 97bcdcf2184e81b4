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
import type { AccessLog, AppRequest, HttpMetrics, RateLimits, RateVerdict } from '@licensing/runtime';
import { clientAddress, isSecure, readFastRequest } from './fast-path-request';
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
export function fastValidation({
  transport,
  authCache,
  licenseCredentials,
  limits,
  validator,
  http,
  log,
  access,
  trustProxy: trust,
  tracing,
  draining,
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
    const request = readFastRequest(req.method, url, req.rawHeaders);
    if (typeof request === 'string') return false;
    const socket = req.socket as Socket & { encrypted?: boolean };
    const secure = isSecure(!!socket.encrypted, socket.remoteAddress ?? '', request.forwardedProto, trustProxy);
    if (production && !secure) return false;
    let principal: Principal | undefined;
    /** App traffic: what its budgets need to know (rate-limits/budgets.ts). */
    let app: AppRequest | undefined;
    /** A licence credential validating itself: the key it asks about, parsed, with its digest (the credential's). */
    let known: { parsed: ParsedKey; digest: string } | undefined;
    if (request.license !== undefined) {
      // A licence credential: remembered, active, and validating itself; anything else Express answers.
      const digest = licenseDigestOf(socket, request.license);
      if (digest === undefined) return false;
      principal = licenseCredentials.get(digest);
      if (principal?.license?.status !== 'active') return false;
      // The key asked about as the credential sent it (an app sends one string twice): it is that licence,
      // already parsed; compared as the caller's own two inputs, which tells nothing of any other key.
      const asked: ParsedKey =
        request.licenseKey === request.license
          ? { ok: true, key: principal.license.key }
          : parseLicenseKey(request.licenseKey);
      if (!asked.ok || !sameCanonicalKey(principal.license.key, asked.key)) return false;
      known = { parsed: asked, digest };
    } else {
      principal = authCache.get(tokenDigest(socket, request.apiKey), request.apiKey);
      if (!principal) return false;
    }
    if (principal.scope === 'validate' && limits.settings.enabled) {
      const ip = clientAddress(socket.remoteAddress ?? '', request.forwardedFor, trust);
      app = { address: addressKey(ip) };
      // A validate-scope key spends the minute of the licence it names; a licence credential its own.
      if (!principal.license) app.licenseDigest = namedLicenseDigest(request.licenseKey);
    }
    const input = { key: request.licenseKey, productId: '', fingerprint: request.fingerprint };
    const started = process.hrtime.bigint();
    // Only with tracing on are the headers parsed into an object (req.headers is built on first use).
    const traced = tracing && startRequestSpan(tracing, 'GET', req.headers);
    const answer = (verdict: RateVerdict | null) =>
      respond(res, url, request.requestId, secure, principal, input, known, verdict, started, traced, app);
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
          counted.then(answer, (err: unknown) => fail(res, url, request.requestId, secure, err, started, traced));
        else answer(counted);
      }
    }
    return true;
  };

  /** Writes the answer to a request whose budgets are counted (`verdict`; null: limits off). */
  function respond(
    res: ServerResponse,
    url: string,
    sentRequestId: string | undefined,
    secure: boolean,
    principal: Principal,
    input: ValidationInput,
    known: { parsed: ParsedKey; digest: string } | undefined,
    verdict: RateVerdict | null,
    started: bigint,
    traced: StartedSpan | undefined,
    app: AppRequest | undefined,
  ): void {
    const requestId = requestIdFor(sentRequestId);
    const traceId = traceIdOf(traced);
    // A flat [name, value, …] list: no header object to build and walk.
    const out: string[] = ['X-Request-Id', requestId];
    if (draining?.now) out.push('Connection', 'close');
    if (verdict) pushRateLimitHeaders(out, verdict.budgets, Math.floor(Date.now() / 1000), verdict.policy);
    if (secure) out.push('Strict-Transport-Security', hsts);
    const send = (status: number, contentType: string, body: string, length = Buffer.byteLength(body)) => {
      out.push('Content-Type', contentType, 'Content-Length', String(length));
      res.writeHead(status, out);
      res.end(body);
    };
    const reply = (status: number, contentType: string, body: string, window?: string) => {
      send(status, contentType, body);
      http.observe('GET', ROUTE, status, started, window);
      access.record({
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
    };
    const refuse = (err: AppError, window?: string) => {
      const problem = problemOf(err, requestId);
      for (const [name, value] of Object.entries(problem.headers)) if (name !== 'Content-Type') out.push(name, value);
      reply(problem.status, problem.headers['Content-Type'], problem.body, window);
    };
    const spent = verdict?.rejectedBy;
    if (spent) {
      out.push('Retry-After', String(spent.resetS));
      refuse(new AppError('rate_limited', rejectionDetail(spent, principal.plan)), spent.name);
      return;
    }
    const local = validator.local(principal, input, known);
    if (local) {
      const sent = validator.answerSent(principal, local, toJson);
      send(200, JSON_TYPE, sent.body, sent.length);
      if (app && namesNothing(sent.counts.code)) limits.namedNothing(principal, app);
      answered.observe(started);
      access.record({
        requestId,
        method: 'GET',
        url,
        status: 200,
        startedNs: started,
        route: ROUTE,
        caller: principal,
        traceId,
      });
      if (traced) endRequestSpan(traced, 'GET', ROUTE, 200);
      return;
    }
    // A key this gateway does not know: the licence service answers (in the request id's scope, so the
    // call carries it), still without Express: its routing and middleware cost more than the call itself.
    withRequestId(requestId, () => validator.remote(principal, input), traced?.context).then(
      (answer) => {
        reply(200, JSON_TYPE, toJson(answer));
        if (app && namesNothing(answer.code)) limits.namedNothing(principal, app);
      },
      (err: unknown) => refuse(knownError(err, log, ROUTE)),
    );
  }

  /** Counting failed (it does not: Redis away is counted here): the one error answer, as Express gives it. */
  function fail(
    res: ServerResponse,
    url: string,
    sentRequestId: string | undefined,
    secure: boolean,
    err: unknown,
    started: bigint,
    traced: StartedSpan | undefined,
  ) {
    const requestId = requestIdFor(sentRequestId);
    const problem = problemOf(knownError(err, log, ROUTE), requestId);
    const out: string[] = ['X-Request-Id', requestId];
    if (draining?.now) out.push('Connection', 'close');
    if (secure) out.push('Strict-Transport-Security', hsts);
    for (const [name, value] of Object.entries(problem.headers)) out.push(name, value);
    out.push('Content-Length', String(Buffer.byteLength(problem.body)));
    res.writeHead(problem.status, out);
    res.end(problem.body);
    http.observe('GET', ROUTE, problem.status, started);
    access.record({
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
