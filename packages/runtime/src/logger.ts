import pino, { type DestinationStream, type Logger } from 'pino';
import { currentRequestId } from './request-scope';

export type { Logger };

// Paths that may carry secrets anywhere we log objects. Redaction is a second
// line of defence: code should not log these in the first place.
const redact = {
  paths: [
    'secret', '*.secret', 'api_key', '*.api_key', 'password', '*.password',
    'authorization', '*.authorization', 'headers.authorization', 'req.headers.authorization',
    'license_key', '*.license_key', 'key', '*.key', 'internal_token', '*.internal_token',
  ],
  censor: '[redacted]',
};

let destination: DestinationStream | undefined;

/** Where new loggers write (default stdout). Tests use it to read a whole run's log output. */
export function setLogDestination(stream: DestinationStream | undefined): void {
  destination = stream;
}

/**
 * JSON lines with fixed keys: level, time, service, msg, and request_id
 * whenever the line is written while serving a request (see request-scope).
 */
export function createLogger(service: string, level: string = process.env.LOG_LEVEL ?? 'info'): Logger {
  const options = {
    name: service,
    level,
    redact,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    mixin: (merge: object) => {
      const requestId = currentRequestId();
      return requestId && !('request_id' in merge) ? { request_id: requestId } : {};
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
