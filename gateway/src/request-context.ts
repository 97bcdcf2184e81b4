import { randomBytes } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { saneRequestId, withRequestId, type Logger } from '@licensing/runtime';

// Query values that may be secrets or personal data (licence keys in the
// validate URL and the dashboard search, e-mails in list filters) would
// otherwise land in access logs.
export function redactUrl(url: string): string {
  return url.replace(/([?&](?:license_key|key|q|customer_email|email|token|secret|password)=)[^&#]*/gi, '$1[redacted]');
}

/**
 * Request id (echoed if sane, else generated) and one access-log line per
 * request. The rest of the request runs in the id's scope, so every gRPC call
 * made for it carries the id to the services (and their logs and events).
 */
export function requestContext(log: Logger) {
  return (req: Request, res: Response, next: NextFunction) => {
    const requestId = saneRequestId(req.get('x-request-id')) ?? `req_${randomBytes(12).toString('hex')}`;
    res.locals.requestId = requestId;
    res.setHeader('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      if (!log.isLevelEnabled('info')) return;
      log.info({ request_id: requestId, method: req.method, url: redactUrl(req.originalUrl), status: res.statusCode, ms: Number(process.hrtime.bigint() - started) / 1e6 }, 'request');
    });
    withRequestId(requestId, next);
  };
}

/** `/v1/...` is served exactly like `/api/v1/...` (the spec's example uses the short form). */
export function versionAlias(req: Request, _res: Response, next: NextFunction) {
  if (req.url === '/v1' || req.url.startsWith('/v1/') || req.url.startsWith('/v1?')) req.url = `/api${req.url}`;
  next();
}
