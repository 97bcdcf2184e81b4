import { Metadata, status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';

// The stable machine words of the public error format (see docs/api.md). Domain
// code throws AppError with one of these; the gRPC layer carries it across the
// service boundary in trailing metadata; the gateway turns it into problem+json.
export const errorCodes = [
  'invalid_request',
  'unauthorized',
  'forbidden',
  'not_found',
  'conflict',
  'idempotency_key_reused',
  'payload_too_large',
  'unsupported_media_type',
  'method_not_allowed',
  'https_required',
  'rate_limited',
  'service_unavailable',
  'internal',
] as const;
export type ErrorCode = (typeof errorCodes)[number];

export interface FieldError {
  field: string;
  message: string;
}

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly fieldErrors: FieldError[] = [],
    /** For rate_limited: seconds until a retry can succeed (the gateway's Retry-After). */
    readonly retryAfterS?: number,
  ) {
    super(message);
    this.name = 'AppError';
  }

  /** A refusal until a later time: 429 with Retry-After (whole seconds, at least 1). */
  static rateLimited(message: string, retryAfterS: number): AppError {
    return new AppError('rate_limited', message, [], Math.max(1, Math.ceil(retryAfterS)));
  }

  static invalid(field: string, message: string): AppError {
    return new AppError('invalid_request', message, [{ field, message }]);
  }

  static notFound(what: string): AppError {
    return new AppError('not_found', `${what} not found`);
  }
}

const toGrpc: Record<ErrorCode, GrpcStatus> = {
  invalid_request: GrpcStatus.INVALID_ARGUMENT,
  unauthorized: GrpcStatus.UNAUTHENTICATED,
  forbidden: GrpcStatus.PERMISSION_DENIED,
  not_found: GrpcStatus.NOT_FOUND,
  conflict: GrpcStatus.FAILED_PRECONDITION,
  idempotency_key_reused: GrpcStatus.FAILED_PRECONDITION,
  payload_too_large: GrpcStatus.INVALID_ARGUMENT,
  unsupported_media_type: GrpcStatus.INVALID_ARGUMENT,
  method_not_allowed: GrpcStatus.UNIMPLEMENTED,
  https_required: GrpcStatus.FAILED_PRECONDITION,
  rate_limited: GrpcStatus.RESOURCE_EXHAUSTED,
  service_unavailable: GrpcStatus.UNAVAILABLE,
  internal: GrpcStatus.INTERNAL,
};

const CODE_KEY = 'lk-error-code';
// Binary metadata: field messages may hold any UTF-8, which text metadata refuses.
const FIELDS_KEY = 'lk-field-errors-bin';
const RETRY_AFTER_KEY = 'lk-retry-after';

/** Server side: any thrown value becomes a gRPC error; unknown ones become `internal` with no detail. */
export function toServiceError(err: unknown): Partial<ServiceError> {
  const app = err instanceof AppError ? err : new AppError('internal', 'internal error');
  const metadata = new Metadata();
  metadata.set(CODE_KEY, app.code);
  if (app.fieldErrors.length) metadata.set(FIELDS_KEY, Buffer.from(JSON.stringify(app.fieldErrors), 'utf8'));
  if (app.retryAfterS !== undefined) metadata.set(RETRY_AFTER_KEY, String(app.retryAfterS));
  return { code: toGrpc[app.code], details: app.message, metadata };
}

const fromGrpc: Partial<Record<GrpcStatus, ErrorCode>> = {
  [GrpcStatus.INVALID_ARGUMENT]: 'invalid_request',
  [GrpcStatus.UNAUTHENTICATED]: 'unauthorized',
  [GrpcStatus.PERMISSION_DENIED]: 'forbidden',
  [GrpcStatus.NOT_FOUND]: 'not_found',
  [GrpcStatus.ALREADY_EXISTS]: 'conflict',
  [GrpcStatus.FAILED_PRECONDITION]: 'conflict',
  [GrpcStatus.ABORTED]: 'conflict',
  [GrpcStatus.RESOURCE_EXHAUSTED]: 'rate_limited',
  [GrpcStatus.UNAVAILABLE]: 'service_unavailable',
  [GrpcStatus.DEADLINE_EXCEEDED]: 'service_unavailable',
  // A replica that does not know the method (yet): one still starting (its port is bound
  // before its handlers), or an older one during a rolling deploy. Our own 405s carry
  // their code in metadata and never get here.
  [GrpcStatus.UNIMPLEMENTED]: 'service_unavailable',
};

/** Client side: a gRPC error back into an AppError, keeping the code and field errors the server sent. */
export function fromServiceError(err: ServiceError): AppError {
  const sent = err.metadata?.get(CODE_KEY)[0];
  const code =
    typeof sent === 'string' && (errorCodes as readonly string[]).includes(sent)
      ? (sent as ErrorCode)
      : (fromGrpc[err.code] ?? 'internal');
  let fields: FieldError[] = [];
  const rawFields = err.metadata?.get(FIELDS_KEY)[0];
  if (Buffer.isBuffer(rawFields)) {
    try {
      fields = JSON.parse(rawFields.toString('utf8')) as FieldError[];
    } catch {
      fields = [];
    }
  }
  // A transport failure says nothing of the service behind it; a refusal the service made on purpose
  // (its AppError, code sent in metadata: "payments are not configured…") keeps its own words.
  const message =
    code === 'internal'
      ? 'internal error'
      : code === 'service_unavailable' && sent !== 'service_unavailable'
        ? 'a backing service is unavailable'
        : err.details;
  const retry = Number(err.metadata?.get(RETRY_AFTER_KEY)[0]);
  return new AppError(code, message, fields, Number.isFinite(retry) && retry > 0 ? retry : undefined);
}
