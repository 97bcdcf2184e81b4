// Typed settings read from environment variables, checked once at start-up.
// Each service declares a schema; a bad or missing value stops the process with
// one message naming every problem, instead of failing later in a handler.
// A secret may instead be given as a file: NAME_FILE=/run/secrets/name (Docker
// and Kubernetes secrets), so it never sits in the environment of a manifest.
import { readFileSync } from 'node:fs';

export interface Setting<T> {
  kind: 'string' | 'int' | 'bool' | 'enum';
  description: string;
  default?: T;
  /** Secrets are never echoed back in errors or docs. */
  secret?: boolean;
  values?: readonly string[];
  min?: number;
  max?: number;
}

export const str = (description: string, opts: { default?: string; secret?: boolean } = {}): Setting<string> => ({
  kind: 'string',
  description,
  ...opts,
});
export const int = (
  description: string,
  opts: { default?: number; min?: number; max?: number } = {},
): Setting<number> => ({ kind: 'int', description, ...opts });
export const bool = (description: string, opts: { default?: boolean } = {}): Setting<boolean> => ({
  kind: 'bool',
  description,
  ...opts,
});
export const oneOf = <V extends string>(
  values: readonly V[],
  description: string,
  opts: { default?: V } = {},
): Setting<V> => ({ kind: 'enum', description, values, ...opts });

export type Schema = Record<string, Setting<unknown>>;
export type ConfigOf<S extends Schema> = { [K in keyof S]: S[K] extends Setting<infer T> ? T : never };

export class ConfigError extends Error {}

export function loadConfig<S extends Schema>(
  schema: S,
  env: Record<string, string | undefined> = process.env,
  overrides: Partial<ConfigOf<S>> = {},
): ConfigOf<S> {
  const out: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [name, setting] of Object.entries(schema)) {
    if (name in overrides && (overrides as Record<string, unknown>)[name] !== undefined) {
      out[name] = (overrides as Record<string, unknown>)[name];
      continue;
    }
    let raw = env[name];
    const file = setting.secret ? env[`${name}_FILE`] : undefined;
    if ((raw === undefined || raw === '') && file) {
      try {
        raw = readFileSync(file, 'utf8').trim();
      } catch (err) {
        problems.push(`${name}_FILE cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'}: ${file})`);
        continue;
      }
    }
    if (raw === undefined || raw === '') {
      if (setting.default === undefined)
        problems.push(`${name} is required (${setting.description})${setting.secret ? `; or give ${name}_FILE` : ''}`);
      else out[name] = setting.default;
      continue;
    }
    switch (setting.kind) {
      case 'string':
        out[name] = raw;
        break;
      case 'int': {
        const n = Number(raw);
        if (
          !Number.isInteger(n) ||
          (setting.min !== undefined && n < setting.min) ||
          (setting.max !== undefined && n > setting.max)
        ) {
          problems.push(
            `${name} must be an integer${setting.min !== undefined ? ` >= ${setting.min}` : ''}${setting.max !== undefined ? ` <= ${setting.max}` : ''}, got "${raw}"`,
          );
        } else out[name] = n;
        break;
      }
      case 'bool':
        if (!['true', 'false', '1', '0'].includes(raw)) problems.push(`${name} must be true or false, got "${raw}"`);
        else out[name] = raw === 'true' || raw === '1';
        break;
      case 'enum':
        if (!setting.values!.includes(raw))
          problems.push(`${name} must be one of ${setting.values!.join(', ')}, got "${raw}"`);
        else out[name] = raw;
        break;
    }
  }
  if (problems.length) throw new ConfigError(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
  return out as ConfigOf<S>;
}

/** Settings every service shares: where its store and bus are, and how it logs. */
export const commonSchema = {
  NODE_ENV: oneOf(
    ['development', 'test', 'production'] as const,
    'Run mode; production refuses development shortcuts',
    { default: 'development' },
  ),
  LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'pino log level', {
    default: 'info',
  }),
  MONGO_URL: str(
    "MongoDB (or FerretDB) connection string; in production with this service's own user, limited to its own database (mongodb://account:<password>@mongodb:27017/licensing_account), so give it as MONGO_URL_FILE",
    { default: 'mongodb://127.0.0.1:27017', secret: true },
  ),
  NATS_URL: str(
    'NATS server with JetStream (no credentials in it: see NATS_USER); for a cluster, several of its nodes separated by commas (nats://nats-0:4222,nats://nats-1:4222,nats://nats-2:4222): the client connects to one and moves to another when it is lost',
    {
      default: 'nats://127.0.0.1:4222',
    },
  ),
  NATS_USER: str(
    "This component's own NATS user (account, product, license, checkout, webhook, gateway), allowed only its own subjects and never to create or change the event stream; empty: connect without authentication (development)",
    { default: '' },
  ),
  NATS_PASSWORD: str('Password of NATS_USER', { default: '', secret: true }),
  NATS_TLS_CA_FILE: str("PEM CA that signs the NATS server's certificate: connect over TLS (empty: plaintext)", {
    default: '',
  }),
  EVENTS_RETENTION_HOURS: int(
    'How long the event stream keeps events (they carry licence keys and e-mail addresses: docs/architecture.md); the set-up step (events-setup) makes or changes the stream to this, a component only logs a stream that keeps them otherwise',
    { default: 168, min: 1, max: 8760 },
  ),
  EVENTS_SUBJECT_PREFIX: str('Subject prefix for domain events', { default: 'licensing.events' }),
  EVENTS_STREAM: str('JetStream stream that stores domain events', { default: 'LICENSING_EVENTS' }),
  INTERNAL_TOKEN: str(
    "This component's own credential for the gRPC calls it makes (each caller has its own; the services it calls know only its SHA-256 digest). Required by the components that call others: gateway, license, checkout, product",
    { default: '', secret: true },
  ),
  GRPC_TLS_CA_FILE: str(
    'mTLS between components: PEM CA that signs every internal certificate (with GRPC_TLS_CERT_FILE and GRPC_TLS_KEY_FILE; empty: plaintext gRPC)',
    { default: '' },
  ),
  GRPC_TLS_CERT_FILE: str(
    "mTLS: this component's PEM certificate, common name = its name (gateway, account, ...; deploy/make-secrets.sh makes them)",
    { default: '' },
  ),
  GRPC_TLS_KEY_FILE: str('mTLS: the PEM private key of GRPC_TLS_CERT_FILE', { default: '' }),
  SHUTDOWN_TIMEOUT_MS: int('Hard limit for a graceful shutdown', { default: 10000, min: 100 }),
} satisfies Schema;
