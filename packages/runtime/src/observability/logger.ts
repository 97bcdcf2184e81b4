import pino, { type DestinationStream, type Logger } from 'pino';
import { currentRequestId } from '../core/request-scope';

export type { Logger };

// Paths that may carry secrets anywhere we log objects. Redaction is a second
// line of defence: code should not log these in the first place.
const redact = {
  paths: [
    'secret',
    '*.secret',
    'api_key',
    '*.api_key',
    'password',
    '*.password',
    'authorization',
    '*.authorization',
    'headers.authorization',
    'req.headers.authorization',
    'license_key',
    '*.license_key',
    'key',
    '*.key',
    'internal_token',
    '*.internal_token',
  ],
  censor: '[redacted]',
};

// Shapes of secrets, wherever they hide in a line (an error message quoting a
// URL, a value under an unexpected name): API keys (lk_full_…, lk_val_…),
// webhook secrets (whsec_…) and licence keys (groups of five base32
// characters joined by hyphens, in any case, raw or percent-encoded).
const SECRET_SHAPES =
  /\b(?:lk_(?:full|val)_[A-Za-z0-9]+|whsec_[A-Za-z0-9+/=_-]+|[0-9A-Za-z]{5}(?:(?:-|%2D)[0-9A-Za-z]{5}){3,})/g;
// The password of a connection URL (mongodb://user:password@host, redis://…).
const URL_PASSWORD = /(\b[a-z][a-z0-9+.-]*:\/\/[^:@/\s]*:)[^@/\s]+@/gi;

/** The text with every secret-shaped token, and every password in a URL, replaced by [redacted]. */
export function scrubSecrets(text: string): string {
  return text.replace(SECRET_SHAPES, '[redacted]').replace(URL_PASSWORD, '$1[redacted]@');
}

/** What an unexpected error may say in a log line: its kind and a scrubbed message and stack. */
export function errorSummary(err: unknown): { type: string; message: string; stack?: string } {
  if (!(err instanceof Error)) return { type: typeof err, message: scrubSecrets(String(err)).slice(0, 500) };
  return {
    type: err.name,
    message: scrubSecrets(err.message).slice(0, 500),
    stack: err.stack && scrubSecrets(err.stack),
  };
}

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
    // The last line of defence: no line leaves with a secret-shaped token in it.
    hooks: { streamWrite: scrubSecrets },
    mixin: (merge: object) => {
      const requestId = currentRequestId();
      return requestId && !('request_id' in merge) ? { request_id: requestId } : {};
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
