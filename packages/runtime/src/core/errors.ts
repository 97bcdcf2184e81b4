import { Metadata, status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import { ErrorDetail, isOneOf, validationCodes, type ValidationCode } from '@licensing/proto';
import { readPreviousTrailers, writePreviousTrailers } from './previous-error-trailers';

// The stable machine words of the public error format (see docs/api.md). Domain
// code throws AppError with one of these; the gRPC layer carries it across the
// service boundary as a typed ErrorDetail (common.proto) in trailing metadata; the gateway turns it into
// problem+json.
export const errorCodes = [
  'invalid_request',
  'unauthorized',
  'forbidden',
  'not_found',
  'conflict',
  'gone',
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
    /**
     * The validation code that names this refusal (activation_limit_reached: every seat is taken), for a
     * caller to act on: it crosses the gRPC boundary as a typed field, so no caller reads it off the message.
     */
    readonly validationCode?: ValidationCode,
  ) {
    super(message);
    this.name = 'AppError';
  }

  /** A refusal until a later time: 429 with Retry-After (whole seconds, at least 1). */
  static rateLimited(message: string, retryAfterS: number): AppError {
    return new AppError('rate_limited', message, [], Math.max(1, Math.ceil(retryAfterS)));
  }

  /** A refusal a validation code names; the message is what a person reads (it starts with the code). */
  static refusedAs(code: ErrorCode, validationCode: ValidationCode, message: string): AppError {
    return new AppError(code, message, [], undefined, validationCode);
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
  gone: GrpcStatus.FAILED_PRECONDITION,
  idempotency_key_reused: GrpcStatus.FAILED_PRECONDITION,
  payload_too_large: GrpcStatus.INVALID_ARGUMENT,
  unsupported_media_type: GrpcStatus.INVALID_ARGUMENT,
  method_not_allowed: GrpcStatus.UNIMPLEMENTED,
  https_required: GrpcStatus.FAILED_PRECONDITION,
  rate_limited: GrpcStatus.RESOURCE_EXHAUSTED,
  service_unavailable: GrpcStatus.UNAVAILABLE,
  internal: GrpcStatus.INTERNAL,
};

/** The binary trailer holding the ErrorDetail of every refusal a service sends on purpose. */
export const ERROR_DETAIL_KEY = 'licensing-error-bin';

/** Server side: any thrown value becomes a gRPC error; unknown ones become `internal` with no detail. */
export function toServiceError(err: unknown): Partial<ServiceError> {
  const app = err instanceof AppError ? err : new AppError('internal', 'internal error');
  const detail: ErrorDetail = {
    code: app.code,
    field_errors: app.fieldErrors.map((f) => ({ field: f.field, message: f.message })),
    validation_code: app.validationCode ?? '',
    retry_after_s: app.retryAfterS ?? 0,
  };
  const metadata = new Metadata();
  metadata.set(ERROR_DETAIL_KEY, Buffer.from(ErrorDetail.encode(detail).finish()));
  writePreviousTrailers(metadata, detail);
  return { code: toGrpc[app.code], details: app.message, metadata };
}

/** The ErrorDetail a service sent with its error; undefined for one that carries none (a transport failure). */
function errorDetailOf(err: ServiceError): ErrorDetail | undefined {
  const raw = err.metadata?.get(ERROR_DETAIL_KEY)[0];
  if (!Buffer.isBuffer(raw)) return readPreviousTrailers(err);
  try {
    return ErrorDetail.decode(raw);
  } catch {
    return undefined;
  }
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

/** Client side: a gRPC error back into an AppError, keeping the typed detail the server sent. */
export function fromServiceError(err: ServiceError): AppError {
  const detail = errorDetailOf(err);
  const sent = detail && isOneOf(errorCodes, detail.code) ? detail.code : undefined;
  const code = sent ?? fromGrpc[err.code] ?? 'internal';
  // A transport failure says nothing of the service behind it; a refusal the service made on purpose
  // (its AppError, its detail sent: "payments are not configured…") keeps its own words.
  const message =
    code === 'internal'
      ? 'internal error'
      : code === 'service_unavailable' && sent !== 'service_unavailable'
        ? 'a backing service is unavailable'
        : err.details;
  if (!sent) return new AppError(code, message);
  const validationCode = isOneOf(validationCodes, detail!.validation_code) ? detail!.validation_code : undefined;
  return new AppError(
    code,
    message,
    detail!.field_errors.map((f) => ({ field: f.field, message: f.message })),
    detail!.retry_after_s > 0 ? detail!.retry_after_s : undefined,
    validationCode,
  );
}
