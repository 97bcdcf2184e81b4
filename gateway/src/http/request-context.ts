import { randomBytes } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import {
  holdScope,
  saneRequestId,
  withRequestId,
  type AccessCaller,
  type AccessLog,
  type Tracing,
} from '@licensing/runtime';

import { endRequestSpan, startRequestSpan, traceIdOf } from './tracing';

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

/**
 * Request id (echoed if sane, else generated), one access-log line per request (access-log.ts) and,
 * with tracing on, the request's span (tracing.ts). The rest of the request runs in the id's (and
 * span's) scope, so every gRPC call made for it carries them to the services (and their logs and events).
 */
export function requestContext(access: AccessLog, tracing?: Tracing) {
  return (req: Request, res: Response, next: NextFunction) => {
    const requestId = requestIdFor(req.headers['x-request-id']);
    res.locals.requestId = requestId;
    res.setHeader('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    const traced = tracing && startRequestSpan(tracing, req.method, req.headers);
    // 'close' comes after 'finish', and also when the client went away before the answer was sent.
    if (traced)
      res.once('close', () =>
        endRequestSpan(traced, req.method, res.locals.route as string | undefined, res.statusCode),
      );
    if (access.enabled)
      res.on('finish', () => {
        // authenticate() put the principal there (auth/principal.ts); its account and key id name the caller.
        const principal = res.locals.principal as AccessCaller | undefined;
        access.record({
          requestId,
          method: req.method,
          url: req.originalUrl,
          status: res.statusCode,
          startedNs: started,
          route: res.locals.route as string | undefined,
          ids: res.locals.ids as Record<string, string> | undefined,
          caller: principal,
          traceId: traceIdOf(traced),
        });
      });
    // The scope lasts as long as the request, not only its first next() (runtime's request-scope.ts).
    res.once('close', holdScope());
    withRequestId(requestId, next, traced?.context);
  };
}

/** `/v1/...` is served exactly like `/api/v1/...` (the short form, as in `/v1/keys/validate`; docs/api.md). */
export function versionAlias(req: Request, _res: Response, next: NextFunction) {
  if (req.url === '/v1' || req.url.startsWith('/v1/') || req.url.startsWith('/v1?')) req.url = `/api${req.url}`;
  next();
}
