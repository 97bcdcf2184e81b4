// One error class for everything a call can fail with: an answer from the API
// (built from its RFC 9457 problem details), or no answer at all (network
// failure or timeout, status 0). `code` is the API's stable machine word, so
// callers branch on it rather than on messages.

/** One invalid field of a 400 answer. */
export interface FieldError {
  field: string;
  message: string;
}

/** Codes the SDK itself uses when there was no usable answer from the API. */
export type ClientErrorCode = 'network_error' | 'timeout' | 'invalid_response';

export interface LicensingErrorInit {
  status: number;
  code: string;
  detail: string;
  requestId?: string | null;
  errors?: FieldError[];
  type?: string;
  title?: string;
  retryAfterS?: number | null;
  nextAction?: string | null;
  validationCode?: string | null;
  cause?: unknown;
}

export class LicensingError extends Error {
  /** HTTP status, or 0 when no answer arrived (network failure, timeout). */
  readonly status: number;
  /** The API's `code` (e.g. `not_found`, `rate_limited`), or a ClientErrorCode. */
  readonly code: string;
  /** What went wrong, for a person. */
  readonly detail: string;
  /** The X-Request-Id of the failed request: quote it to support. */
  readonly requestId: string | null;
  /** One entry per invalid field (400 answers); empty otherwise. */
  readonly errors: FieldError[];
  /** The problem's `type` URI reference, e.g. `/docs#error-not_found`. */
  readonly type: string | null;
  readonly title: string | null;
  /** Seconds the server asked to wait (Retry-After), when it said. */
  readonly retryAfterS: number | null;
  /**
   * What the user can do about it, when the problem says (its `next_action` extension member):
   * `free_a_seat` on an activation refused because every seat is taken (see LicensedApp.requestSeatRescue()),
   * `renew` or `contact_vendor` on an update check refused for the licence (see LicensedApp.checkForUpdate()).
   */
  readonly nextAction: string | null;
  /**
   * The licence's validation code behind a refusal, when the problem says (its `validation_code` extension
   * member): e.g. `expired` or `entitlements_missing` on an update check or a download the licence may not have.
   */
  readonly validationCode: string | null;

  constructor(init: LicensingErrorInit) {
    super(
      init.status ? `${init.status} ${init.code}: ${init.detail}` : `${init.code}: ${init.detail}`,
      init.cause === undefined ? undefined : { cause: init.cause },
    );
    this.name = 'LicensingError';
    this.status = init.status;
    this.code = init.code;
    this.detail = init.detail;
    this.requestId = init.requestId ?? null;
    this.errors = init.errors ?? [];
    this.type = init.type ?? null;
    this.title = init.title ?? null;
    this.retryAfterS = init.retryAfterS ?? null;
    this.nextAction = init.nextAction ?? null;
    this.validationCode = init.validationCode ?? null;
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** The error for a non-2xx answer: its problem+json body if it has one, else what the status says. */
export function errorFromResponse(
  status: number,
  body: unknown,
  headers: Headers,
  retryAfterS: number | null,
): LicensingError {
  const requestId = headers.get('x-request-id');
  if (isRecord(body) && typeof body.code === 'string') {
    const errors = Array.isArray(body.errors)
      ? body.errors.filter(isRecord).map((e) => ({ field: String(e.field ?? ''), message: String(e.message ?? '') }))
      : [];
    return new LicensingError({
      status,
      code: body.code,
      detail: text(body.detail) ?? text(body.title) ?? `HTTP ${status}`,
      requestId: text(body.request_id) ?? requestId,
      errors,
      type: text(body.type),
      title: text(body.title),
      retryAfterS,
      nextAction: text(body.next_action) ?? null,
      validationCode: text(body.validation_code) ?? null,
    });
  }
  // Not problem+json: a proxy or load balancer answered. Keep what can be known.
  const detail =
    typeof body === 'string' && body.trim() ? body.trim().slice(0, 200) : `HTTP ${status} without problem details`;
  return new LicensingError({ status, code: fallbackCode(status), detail, requestId, retryAfterS });
}

function fallbackCode(status: number): string {
  if (status === 429) return 'rate_limited';
  if (status === 503 || status === 502 || status === 504) return 'service_unavailable';
  if (status === 401) return 'unauthorized';
  if (status === 403) return 'forbidden';
  if (status === 404) return 'not_found';
  return status >= 500 ? 'internal' : 'invalid_request';
}
