import type { NextFunction, Request, Response } from 'express';
import { AppError, errorSummary, type ErrorCode, type Logger } from '@licensing/runtime';

// The one place errors become HTTP: RFC 9457 problem details with a stable code.
export const httpStatus: Record<ErrorCode, number> = {
  invalid_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  gone: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  idempotency_key_reused: 422,
  https_required: 426,
  rate_limited: 429,
  internal: 500,
  service_unavailable: 503,
};

const titles: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  410: 'Gone',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  426: 'Upgrade Required',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** A problem answer, ready to write with node:http or Express. */
export interface Problem {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * The problem-details answer of an AppError (RFC 9457), with the headers its status calls for.
 * `extensions`: members RFC 9457 lets a problem type add (e.g. next_action), after the standard ones.
 */
export function problemOf(err: AppError, requestId: string | undefined, extensions?: Record<string, unknown>): Problem {
  const status = httpStatus[err.code];
  const headers: Record<string, string> = { 'Content-Type': 'application/problem+json; charset=utf-8' };
  if (status === 401) headers['WWW-Authenticate'] = 'Bearer realm="api"';
  if (status === 503) headers['Retry-After'] = '5';
  if (err.retryAfterS !== undefined) headers['Retry-After'] = String(err.retryAfterS);
  if (status === 426) headers.Upgrade = 'TLS/1.3, HTTP/1.1';
  const body = JSON.stringify({
    type: `/docs#error-${err.code}`,
    title: titles[status],
    status,
    detail: err.message,
    code: err.code,
    request_id: requestId,
    ...(err.fieldErrors.length ? { errors: err.fieldErrors } : {}),
    ...extensions,
  });
  return { status, headers, body };
}

export function sendProblem(res: Response, err: AppError, extensions?: Record<string, unknown>): void {
  const { status, headers, body } = problemOf(err, res.locals.requestId, extensions);
  res.status(status).set(headers).send(body);
}

/** What a failed request answers: its AppError, else `internal` (logged, never the error's own text). */
export function knownError(err: unknown, log: Logger, route: string | undefined, bodyLimit = 0): AppError {
  const known =
    err instanceof AppError
      ? err
      : typeof err === 'object' && err !== null
        ? fromBodyParser(err as { type?: string }, bodyLimit)
        : undefined;
  if (known) {
    if (known.code === 'internal') log.error({}, 'a service reported an internal error');
    return known;
  }
  log.error({ err: errorSummary(err), route }, 'unhandled error');
  return new AppError('internal', 'internal error');
}

/** Errors raised by express's body parser, by their `type`. */
function fromBodyParser(err: { type?: string; status?: number }, limit: number): AppError | undefined {
  switch (err.type) {
    case 'entity.parse.failed':
      return new AppError('invalid_request', 'the request body is not valid JSON');
    case 'entity.too.large':
      return new AppError('payload_too_large', `the request body is larger than ${limit} bytes`);
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new AppError('unsupported_media_type', 'the request body must be UTF-8 JSON');
    case 'request.aborted':
    case 'request.size.invalid':
    case 'stream.encoding.set':
      return new AppError('invalid_request', 'the request body could not be read');
    default:
      break;
  }
  // The router's URIError (a path segment that is not percent-encoded UTF-8) and
  // any other client error raised by express or its parsers (e.g. a body whose
  // Content-Encoding does not decode) carry a 4xx status: they are the client's.
  if (err instanceof URIError) return malformedUrl();
  const status = err.status;
  if (status === 413) return new AppError('payload_too_large', `the request body is larger than ${limit} bytes`);
  if (status === 415) return new AppError('unsupported_media_type', 'the request body must be UTF-8 JSON');
  if (typeof status === 'number' && status >= 400 && status < 500)
    return new AppError('invalid_request', 'the request could not be read');
  return undefined;
}

export const malformedUrl = () => new AppError('invalid_request', 'the URL is not validly percent-encoded UTF-8');

/** Whether every percent-escape of a path decodes to UTF-8 (what the router will need). */
export function decodablePath(path: string): boolean {
  if (!path.includes('%')) return true;
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Malformed percent-encoding in an API path is the client's mistake (400
 * invalid_request), found before any route tries to decode its parameters.
 * The HTML surfaces (/checkout, /dashboard, /portal) answer with pages of their own.
 */
export function wellFormedPath(req: Request, _res: Response, next: NextFunction): void {
  if (!decodablePath(req.path) && !/^\/(checkout|dashboard|portal)\//.test(req.path)) throw malformedUrl();
  next();
}

export function errorHandler(log: Logger, bodyLimit: number) {
  return (err: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    sendProblem(res, knownError(err, log, res.locals.route, bodyLimit));
  };
}

export function notFound(req: Request, res: Response): void {
  sendProblem(res, new AppError('not_found', `no such endpoint: ${req.method} ${req.path}`));
}
