import pino, { type Logger } from 'pino';

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

export function createLogger(service: string, level: string = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({ name: service, level, redact, base: { service }, timestamp: pino.stdTimeFunctions.isoTime });
}
