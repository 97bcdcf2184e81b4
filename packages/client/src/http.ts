// The one place requests are made: authentication, JSON, per-attempt
// timeouts, retries with back-off, and turning failures into LicensingError.
import { LicensingError, errorFromResponse } from './errors';
import { DEFAULT_BACKOFF, RETRYABLE_STATUSES, parseRetryAfter, retryDelayMs, type BackoffOptions } from './retry';
import type { PreparedUpload } from './upload-body';

export type QueryValue = string | number | boolean | null | undefined;

export interface RequestSpec {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path below the base URL, segments already encoded, e.g. /api/v1/products/prod_1. */
  path: string;
  query?: Record<string, QueryValue>;
  body?: unknown;
  /** Raw bytes sent as they are (a release's file) instead of a JSON body. A streamed one is never retried. */
  upload?: PreparedUpload & { contentType: string };
  /** Further request headers, already checked by the caller. */
  headers?: Record<string, string>;
  /** This call's limit of each attempt instead of the transport's (an upload of a large file takes longer). */
  timeoutMs?: number;
  /**
   * True when doing it twice is harmless (reads, validation, PATCH, DELETE).
   * Only such requests, or ones carrying an Idempotency-Key, are retried after
   * a network error, a timeout or a 503, where the first try may have landed.
   */
  idempotent: boolean;
  idempotencyKey?: string;
}

/**
 * Who the requests speak for: a vendor's API key (`Authorization: Bearer …`),
 * or one licence (`Authorization: License …`), which an app uses to act on its
 * own licence without shipping any API key. Exactly one is given.
 */
export interface Credential {
  apiKey?: string;
  licenseKey?: string;
}

export interface TransportOptions extends Credential {
  baseUrl: string;
  fetch: typeof fetch;
  timeoutMs: number;
  maxRetries: number;
  /** A Retry-After longer than this is not waited for: the error is thrown at once. */
  maxRetryDelayMs: number;
  backoff?: BackoffOptions;
  /** Injected by unit tests to record waits instead of waiting. */
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

/** The Authorization header value of a credential; a secret with spaces or controls would forge another header. */
export function authorizationOf(credential: Credential): string {
  if ((credential.apiKey === undefined) === (credential.licenseKey === undefined))
    throw new TypeError('give exactly one credential: an apiKey or a licenseKey');
  const [scheme, secret] =
    credential.licenseKey !== undefined ? ['License', credential.licenseKey] : ['Bearer', credential.apiKey];
  if (typeof secret !== 'string' || !/^[\x21-\x7e]+$/.test(secret.trim()))
    throw new TypeError(
      `the ${scheme === 'License' ? 'licence key' : 'API key'} must be printable ASCII without spaces`,
    );
  return `${scheme} ${secret.trim()}`;
}

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** An answer: its status, headers and parsed body, and the URL that gave it. */
interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
  url: string;
}

/** What one attempt produced: an answer, or no answer and why. */
type Attempt = ({ ok: true } & Answer) | { ok: false; error: LicensingError };

export class Transport {
  private readonly base: string;
  private readonly authorization: string;

  constructor(private readonly options: TransportOptions) {
    this.base = options.baseUrl.replace(/\/+$/, '');
    this.authorization = authorizationOf(options);
  }

  /** Sends the request, retrying what may be retried; resolves with the parsed 2xx body. */
  async request<T>(spec: RequestSpec): Promise<T> {
    return (await this.send(spec, false)).body as T;
  }

  /**
   * Sends a request that answers a redirect (303 to a file) without following it, and resolves with
   * its Location, made absolute. The file itself is not fetched: the link is for whoever downloads it.
   */
  async location(spec: RequestSpec): Promise<string> {
    const answer = await this.send(spec, true);
    const location = answer.status >= 300 ? answer.headers.get('location') : null;
    if (!location)
      throw new LicensingError({
        status: answer.status,
        code: 'invalid_response',
        detail: `expected a redirect to the file with a Location header, got HTTP ${answer.status}`,
        requestId: answer.headers.get('x-request-id'),
      });
    return new URL(location, answer.url).toString();
  }

  /**
   * The path of an absolute URL below the base URL (its query kept), or null for a URL anywhere else:
   * the credential is sent to the base URL's server only, whatever URL an answer names.
   */
  pathBelowBase(absolute: string): string | null {
    let url: URL;
    try {
      url = new URL(absolute);
    } catch {
      return null;
    }
    const base = new URL(this.base);
    const prefix = base.pathname.replace(/\/+$/, '');
    if (url.origin !== base.origin || (prefix && !url.pathname.startsWith(`${prefix}/`))) return null;
    return `${url.pathname.slice(prefix.length)}${url.search}`;
  }

  /** The retry loop: a 2xx answer (or a 3xx one when `manual`), else the error of the last try. */
  private async send(spec: RequestSpec, manual: boolean): Promise<Answer> {
    const url = this.url(spec);
    const init: RequestInit = { ...this.init(spec), ...(manual ? { redirect: 'manual' } : {}) };
    const repeatable = spec.idempotent || spec.idempotencyKey !== undefined;
    // A stream is spent by its first try: nothing is left to send again.
    const maxRetries = spec.upload?.streamed ? 0 : this.options.maxRetries;
    const timeoutMs = spec.timeoutMs ?? this.options.timeoutMs;
    const sleep = this.options.sleep ?? realSleep;
    for (let attempt = 0; ; attempt++) {
      const result = await this.attempt(url, init, timeoutMs);
      if (result.ok && result.status >= 200 && result.status < (manual ? 400 : 300)) return result;
      const error = result.ok
        ? errorFromResponse(
            result.status,
            result.body,
            result.headers,
            parseRetryAfter(result.headers.get('retry-after'), Date.now()),
          )
        : result.error;
      // 429 is refused before any work, so anything may be repeated; the rest only when repeating is safe.
      const noAnswer = error.status === 0 && error.code !== 'invalid_response';
      const retryable = noAnswer || RETRYABLE_STATUSES.has(error.status);
      if (!retryable || attempt >= maxRetries || (error.status !== 429 && !repeatable)) throw error;
      const wait = retryDelayMs(
        attempt,
        error.retryAfterS,
        this.options.backoff ?? DEFAULT_BACKOFF,
        this.options.random,
      );
      if (wait > this.options.maxRetryDelayMs) throw error;
      await sleep(wait);
    }
  }

  private url(spec: RequestSpec): string {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(spec.query ?? {})) {
      if (value !== undefined && value !== null) params.set(name, String(value));
    }
    const qs = params.toString();
    return `${this.base}${spec.path}${qs ? `?${qs}` : ''}`;
  }

  private init(spec: RequestSpec): RequestInit {
    const headers: Record<string, string> = {
      authorization: this.authorization,
      accept: 'application/json',
    };
    if (spec.idempotencyKey !== undefined) headers['idempotency-key'] = spec.idempotencyKey;
    Object.assign(headers, spec.headers);
    if (spec.upload) {
      headers['content-type'] = spec.upload.contentType;
      const init: RequestInit = { method: spec.method, headers, body: spec.upload.body };
      // fetch sends a stream only with duplex 'half' (the request body goes out before the answer comes).
      return spec.upload.streamed ? ({ ...init, duplex: 'half' } as RequestInit) : init;
    }
    if (spec.body === undefined) return { method: spec.method, headers };
    headers['content-type'] = 'application/json';
    return { method: spec.method, headers, body: JSON.stringify(spec.body) };
  }

  /**
   * One try under its own timeout; the body is read before the timer stops. Under `redirect: 'manual'`
   * only an error's body is read: a redirect's is dropped, and a file answered directly is never loaded.
   */
  private async attempt(url: string, init: RequestInit, timeoutMs: number): Promise<Attempt> {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    try {
      const res = await this.options.fetch(url, { ...init, signal: controller.signal });
      if (res.type === 'opaqueredirect')
        throw new LicensingError({
          status: 0,
          code: 'invalid_response',
          detail:
            "this platform's fetch hides where a redirect goes (a browser page): the download link cannot be read here",
        });
      const skip = res.status === 204 || (init.redirect === 'manual' && res.status < 400);
      if (skip) await res.body?.cancel().catch(() => undefined);
      const text = skip ? '' : await res.text();
      return {
        ok: true,
        status: res.status,
        headers: res.headers,
        body: parseBody(text, res.headers.get('content-type'), res.status),
        url: res.url || url,
      };
    } catch (cause) {
      if (cause instanceof LicensingError) return { ok: false, error: cause };
      const error = timedOut
        ? new LicensingError({
            status: 0,
            code: 'timeout',
            detail: `no answer within ${timeoutMs} ms`,
            cause,
          })
        : new LicensingError({
            status: 0,
            code: 'network_error',
            detail: cause instanceof Error ? cause.message : String(cause),
            cause,
          });
      return { ok: false, error };
    } finally {
      clearTimeout(timer);
    }
  }
}

function parseBody(text: string, contentType: string | null, status: number): unknown {
  if (!text) return undefined;
  if (!/\bjson\b/i.test(contentType ?? '')) {
    if (status >= 200 && status < 300)
      throw new LicensingError({
        status,
        code: 'invalid_response',
        detail: `expected JSON, got ${contentType ?? 'no content type'}`,
      });
    return text;
  }
  try {
    return JSON.parse(text);
  } catch (cause) {
    if (status >= 200 && status < 300)
      throw new LicensingError({ status, code: 'invalid_response', detail: 'the answer is not valid JSON', cause });
    return text;
  }
}
