import { AppError } from '../core/errors';

/**
 * Whether an error means the store is away for now (retry later: 503 with
 * Retry-After), rather than a bug (500). The one place that knows how each
 * store says so; the gRPC server (and the checkout page) map it:
 *
 * - MongoDB and its driver: network errors, server selection that found no
 *   server, a client not (or no longer) connected, a cleared or exhausted pool,
 *   and the server codes of a failover or shutdown (the driver's own
 *   "retryable" set: NotWritablePrimary, PrimarySteppedDown, ShutdownInProgress, ...),
 *   or any error the driver labels RetryableWriteError.
 * - FerretDB 1.x reports its lost backend as a generic server error (code 1,
 *   InternalError) whose message is PostgreSQL's driver's (measured against 1.24
 *   with the PostgreSQL connection cut: "failed to connect to `user=… database=…`:
 *   … connection refused", "… connection reset by peer", "unexpected EOF"); only
 *   those messages make it unavailability, any other code-1 error stays a bug.
 * - node-postgres (the page queries of runtime/postgres): socket errors, the
 *   connection classes of SQLSTATE (08…, 57P01–57P03 shutdown, 53300 too many
 *   connections) and a terminated connection.
 */
export function isStoreUnavailable(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const e = err as StoreError;
  if (UNAVAILABLE_ERRORS.has(e.name ?? '')) return true;
  if (hasLabel(e, 'RetryableWriteError')) return true;
  const code = typeof e.code === 'number' ? e.code : Number.NaN;
  if (MONGO_UNAVAILABLE_CODES.has(code) || MONGO_UNAVAILABLE_CODES.has(e.result?.writeConcernError?.code ?? Number.NaN))
    return true;
  if (code === FERRETDB_INTERNAL_ERROR && e.name === 'MongoServerError') return BACKEND_LOST.test(e.message ?? '');
  if (typeof e.code === 'string') return SOCKET_CODES.has(e.code) || PG_UNAVAILABLE_STATE.test(e.code);
  return e.name === 'Error' && PG_TERMINATED.test(e.message ?? '');
}

/** The public error of a store that is away: 503 with Retry-After at the gateway. */
export function storeUnavailable(): AppError {
  return new AppError('service_unavailable', 'the store is unavailable; retry later');
}

interface StoreError {
  name?: string;
  message?: string;
  code?: number | string;
  errorLabels?: string[];
  hasErrorLabel?: (label: string) => boolean;
  result?: { writeConcernError?: { code?: number } };
}

const UNAVAILABLE_ERRORS = new Set([
  'MongoNetworkError',
  'MongoNetworkTimeoutError',
  'MongoServerSelectionError',
  'MongooseServerSelectionError',
  'MongoNotConnectedError',
  'MongoTopologyClosedError',
  'MongoServerClosedError',
  'MongoClientClosedError',
  'MongoOperationTimeoutError',
  'MongoPoolClearedError',
  'MongoPoolClosedError',
  'MongoWaitQueueTimeoutError',
]);

// The driver's retryable-read/-write codes (mongodb/src/error.ts), with LegacyNotPrimary and the
// read-preference and majority-read codes a failover brings.
const MONGO_UNAVAILABLE_CODES = new Set([
  6, // HostUnreachable
  7, // HostNotFound
  89, // NetworkTimeout
  91, // ShutdownInProgress
  133, // FailedToSatisfyReadPreference
  134, // ReadConcernMajorityNotAvailableYet
  189, // PrimarySteppedDown
  262, // ExceededTimeLimit
  9001, // SocketException
  10058, // LegacyNotPrimary
  10107, // NotWritablePrimary
  11600, // InterruptedAtShutdown
  11602, // InterruptedDueToReplStateChange
  13435, // NotPrimaryNoSecondaryOk
  13436, // NotPrimaryOrSecondary
]);

const FERRETDB_INTERNAL_ERROR = 1;
const BACKEND_LOST =
  /failed to connect to|connection refused|connection reset by peer|broken pipe|unexpected EOF|conn closed|closed pool|i\/o timeout|no such host|network is unreachable|server closed the connection|the database system is (starting up|shutting down|in recovery)|SQLSTATE (08[0-9A-Z]{3}|57P0[123]|53300)/;

const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
const PG_UNAVAILABLE_STATE = /^(08[0-9A-Z]{3}|57P0[123]|53300)$/;
const PG_TERMINATED =
  /^Connection terminated|^timeout exceeded when trying to connect|connection error and is not queryable/;

function hasLabel(e: StoreError, label: string): boolean {
  try {
    if (typeof e.hasErrorLabel === 'function') return e.hasErrorLabel(label);
  } catch {
    return false;
  }
  return Array.isArray(e.errorLabels) && e.errorLabels.includes(label);
}
