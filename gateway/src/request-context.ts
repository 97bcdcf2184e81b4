import { randomBytes } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '@licensing/runtime';

const SANE_ID = /^[A-Za-z0-9._:-]{1,64}$/;

// Licence keys in query strings would otherwise land in access logs.
export function redactUrl(url: string): string {
  return url.replace(/([?&](?:license_key|key)=)[^&#]*/gi, '$1[redacted]');
}

/** Request id (echoed if sane, else generated) and one access-log line per request. */
export function requestContext(log: Logger) {
  return (req: Request, res: Response, next: NextFunction) => {
    const given = req.get('x-request-id');
    const requestId = given && SANE_ID.test(given) ? given : `req_${randomBytes(12).toString('hex')}`;
    res.locals.requestId = requestId;
    res.setHeader('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      if (!log.isLevelEnabled('info')) return;
      log.info({ request_id: requestId, method: req.method, url: redactUrl(req.originalUrl), status: res.statusCode, ms: Number(process.hrtime.bigint() - started) / 1e6 }, 'request');
    });
    next();
  };
}

/** `/v1/...` is served exactly like `/api/v1/...` (the spec's example uses the short form). */
export function versionAlias(req: Request, _res: Response, next: NextFunction) {
  if (req.url === '/v1' || req.url.startsWith('/v1/') || req.url.startsWith('/v1?')) req.url = `/api${req.url}`;
  next();
}
