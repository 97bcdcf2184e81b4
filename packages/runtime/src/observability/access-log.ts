import { bufferedLineSink, scrubSecrets, type LineSink } from './logger';

// The access log: one JSON line per request, written by hand and buffered. A general logger (pino with
// redaction paths, a mixin and a secret-scrubbing pass over every finished line, then one write(2) per
// line) cost as much per request as the rest of a cached validation; this costs a string and, every
// few milliseconds, one write. The lines are the same JSON as the other loggers' (level, time, service,
// name, msg), so one log pipeline reads them all.

/** Query parameters that may be secrets or personal data (licence keys, the dashboard search, e-mails, tokens). */
const SECRET_PARAMS = new Set(['license_key', 'key', 'q', 'customer_email', 'email', 'token', 'secret', 'password']);

/**
 * The URL with the values of secret-shaped query parameters replaced (the path is left as it is).
 * A scan, not a regex: it runs for every validation sent with its key in the query. Every `?` or `&`
 * after the first `?` starts a parameter (a stray `?` inside the query too), and a value ends at the
 * next `&` or `#`.
 */
export function redactUrl(url: string): string {
  let start = url.indexOf('?');
  if (start < 0) return url;
  let out = url.slice(0, start);
  while (start < url.length) {
    let end = start + 1;
    while (end < url.length && url[end] !== '&' && url[end] !== '?') end++;
    const param = url.slice(start, end); // with its leading ? or &
    const eq = param.indexOf('=');
    if (eq > 1 && SECRET_PARAMS.has(param.slice(1, eq).toLowerCase())) {
      const hash = param.indexOf('#', eq);
      out += `${param.slice(0, eq + 1)}[redacted]${hash < 0 ? '' : param.slice(hash)}`;
    } else out += param;
    start = end;
  }
  return out;
}

/**
 * The segment after every `/licenses/` of a path (the API's, the dashboard's, the customer portal's), but
 * the fixed routes that share that place: a licence key, native or imported in any shape, is never
 * written, whichever surface's path it came through.
 */
const LICENSE_KEY_SEGMENT = /(\/licenses\/)(?!(?:validate|batch)(?:[/?#]|$))[^/?#]+/gi;

/**
 * What the access log names a request by. A routed request: its route template
 * (`/api/v1/licenses/:key/activations`), never the path, so the licence key in it
 * is never written; the ids that are not secrets go in their own field. An
 * unrouted one (404, 400 before routing, every dashboard page): its path with
 * every licence-key segment (LICENSE_KEY_SEGMENT) and anything secret-shaped
 * replaced (free text: the last line of defence applies), at most 200
 * characters. The query string in both cases with its secrets redacted.
 */
export function loggedUrl(url: string, route: string | undefined): string {
  const q = url.indexOf('?');
  const query = q < 0 ? '' : redactUrl(url.slice(q)).slice(0, 300);
  if (route) return route + query;
  const path = (q < 0 ? url : url.slice(0, q)).replace(LICENSE_KEY_SEGMENT, '$1[redacted]').slice(0, 200);
  return scrubSecrets(path) + query;
}

/** Who made a request, when it authenticated: what an operator filters the log by. */
export interface AccessCaller {
  accountId: string;
  keyId: string;
}

/** One finished request, as the access log records it. */
export interface AccessEntry {
  requestId: string;
  method: string;
  url: string;
  status: number;
  startedNs: bigint;
  /** The route template, when a route matched. */
  route?: string;
  /** Path ids that are not secrets (the gateway's routes/route.ts). */
  ids?: Record<string, string>;
  caller?: AccessCaller;
  /** The request's trace (OpenTelemetry on): 32 hex digits. */
  traceId?: string;
}

let lastMs = 0;
let lastIso = '';
/** The ISO time of now, built once per millisecond (a busy process logs many lines in one). */
function isoNow(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}

/**
 * The line of one request: the keys and order pino would give it, without pino. Only the URL can hold
 * any character and is escaped; the rest are known shapes written as they are: request ids are 1–64 of
 * A-Z a-z 0-9 . _ : - (saneRequestId), methods are HTTP tokens Node's parser accepted, path ids match
 * [A-Za-z0-9_] (the gateway's routes/route.ts), account and key ids are ours, trace ids are hex.
 */
export function accessLine(e: AccessEntry, service: string, time: string, nowNs: bigint): string {
  let ids = '';
  if (e.ids) for (const name in e.ids) ids += `${ids ? ',' : ''}"${name}":"${e.ids[name]}"`;
  const ms = Math.round(Number(nowNs - e.startedNs) / 1e3) / 1e3;
  return (
    `{"level":30,"time":"${time}","service":"${service}","name":"${service}","request_id":"${e.requestId}",` +
    (e.traceId ? `"trace_id":"${e.traceId}",` : '') +
    `"method":"${e.method}","url":${JSON.stringify(loggedUrl(e.url, e.route))}` +
    (ids ? `,"ids":{${ids}}` : '') +
    (e.caller?.accountId ? `,"account_id":"${e.caller.accountId}","key_id":"${e.caller.keyId}"` : '') +
    `,"status":${e.status},"ms":${ms},"msg":"request"}\n`
  );
}

/** The access log of an HTTP component, the gateway's and the web component's (info level: LOG_LEVEL above info writes none of it). */
export class AccessLog {
  private readonly sink: LineSink | undefined;

  constructor(
    private readonly service: string,
    level: string,
    sink?: LineSink,
  ) {
    const on = ['trace', 'debug', 'info'].includes(level);
    this.sink = on ? (sink ?? bufferedLineSink()) : undefined;
  }

  get enabled(): boolean {
    return this.sink !== undefined;
  }

  record(e: AccessEntry): void {
    this.sink?.write(accessLine(e, this.service, isoNow(), process.hrtime.bigint()));
  }

  /** Writes out what is buffered (a graceful stop). */
  flush(): void {
    this.sink?.flushSync();
  }
}
