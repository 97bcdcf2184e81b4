import { randomBytes } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { saneRequestId, scrubSecrets, withRequestId, type Logger } from '@licensing/runtime';

// Query values that may be secrets or personal data (licence keys in the
// validate URL and the dashboard search, e-mails in list filters) would
// otherwise land in access logs.
export function redactUrl(url: string): string {
  return url.replace(/([?&](?:license_key|key|q|customer_email|email|token|secret|password)=)[^&#]*/gi, '$1[redacted]');
}

/**
 * What the access log names a request by. A routed request: its route
 * template (`/api/v1/licenses/:key/activations`), never the path, so the
 * licence key in it is never written; the ids that are not secrets go in
 * their own field. An unrouted one (404, 400 before routing): its path with
 * the licence-key segment and anything secret-shaped replaced, and at most
 * 200 characters. The query string in both cases with its secrets redacted.
 */
export function loggedUrl(url: string, route: string | undefined): string {
  const q = url.indexOf('?');
  const query = q < 0 ? '' : redactUrl(url.slice(q)).slice(0, 300);
  if (route) return route + query;
  const path = (q < 0 ? url : url.slice(0, q))
    .replace(/^((?:\/api)?\/v1\/licenses\/)(?!validate(?:\/|$))[^/]+/i, '$1[redacted]')
    .slice(0, 200);
  return scrubSecrets(path) + query;
}

// Request ids: a random prefix per process and a counter, unique without a
// CSPRNG call per request (they identify, they do not authorise).
const ID_PREFIX = `req_${randomBytes(8).toString('hex')}`;
let idCounter = 0;

/** The caller's X-Request-Id if sane, else a new one. */
export function requestIdFor(given: string | string[] | undefined): string {
  const sane = saneRequestId(typeof given === 'string' ? given : undefined);
  if (sane) return sane;
  idCounter = (idCounter + 1) >>> 0;
  return `${ID_PREFIX}${idCounter.toString(16).padStart(8, '0')}`;
}

/** The access-log line of one request (info level): the route template and ids, never a secret (see loggedUrl). */
export function logAccess(
  log: Logger,
  requestId: string,
  method: string,
  url: string,
  status: number,
  startedNs: bigint,
  route?: string,
  ids?: Record<string, string>,
): void {
  if (!log.isLevelEnabled('info')) return;
  log.info(
    {
      request_id: requestId,
      method,
      url: loggedUrl(url, route),
      ...(ids ? { ids } : {}),
      status,
      ms: Number(process.hrtime.bigint() - startedNs) / 1e6,
    },
    'request',
  );
}

/**
 * Request id (echoed if sane, else generated) and one access-log line per
 * request. The rest of the request runs in the id's scope, so every gRPC call
 * made for it carries the id to the services (and their logs and events).
 */
export function requestContext(log: Logger) {
  return (req: Request, res: Response, next: NextFunction) => {
    const requestId = requestIdFor(req.headers['x-request-id']);
    res.locals.requestId = requestId;
    res.setHeader('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    res.on('finish', () =>
      logAccess(
        log,
        requestId,
        req.method,
        req.originalUrl,
        res.statusCode,
        started,
        res.locals.route as string | undefined,
        res.locals.ids as Record<string, string> | undefined,
      ),
    );
    withRequestId(requestId, next);
  };
}

/** `/v1/...` is served exactly like `/api/v1/...` (the short form, as in `/v1/keys/validate`; docs/api.md). */
export function versionAlias(req: Request, _res: Response, next: NextFunction) {
  if (req.url === '/v1' || req.url.startsWith('/v1/') || req.url.startsWith('/v1?')) req.url = `/api${req.url}`;
  next();
}
