import { paymentsStates, plans } from '@licensing/proto';
import { int, obj, orNull, ref, type Schema, str, time } from './schema-primitives';

// The operational answers' schemas: GET /api/v1/status, /readyz and /healthz.

/** The status endpoint's words for a piece and for the whole (routes/status.ts). */
const health: Schema = { enum: ['ok', 'degraded', 'down'] };
const probe = obj({ status: health, latency_ms: orNull({ type: 'number', minimum: 0 }) });

export const statusSchemas: Record<string, Schema> = {
  Probe: probe,
  Status: obj({
    status: health,
    version: str(),
    time: time(),
    services: obj({
      account: ref('Probe'),
      product: ref('Probe'),
      license: ref('Probe'),
      checkout: ref('Probe'),
      webhook: ref('Probe'),
      notification: ref('Probe'),
    }),
    dependencies: obj({ mongodb: ref('Probe'), nats: ref('Probe'), redis: ref('Probe') }),
    payments: {
      enum: [...paymentsStates],
      description:
        'Whether checkout can take payments: "not configured" while Stripe is chosen and its keys are not given yet (new checkout sessions are refused with 503); "unknown" when the checkout service does not answer',
    },
    rate_limits: obj(
      {
        plan: { enum: [...plans], description: "The account's plan" },
        hourly_quota: int('Requests per hour for the account with full-scope keys and the dashboard', {
          minimum: 1,
        }),
        hourly_app_allowance: int(
          'Requests per hour for the account with validate-scope keys and licence credentials (app traffic); never spends hourly_quota',
          { minimum: 1 },
        ),
        per_key_per_minute: int('Requests per minute for each API key', { minimum: 1 }),
        per_license_per_minute: int(
          'Requests per minute for each licence: app traffic naming it (its License credential, or a validate-scope key), budget "license_minute"',
          { minimum: 1 },
        ),
        mail_per_hour: int(
          'Customer mails the account may send per clock hour (UTC), by plan; mail past it is stored with status deferred and sent when the quota allows',
          { minimum: 1 },
        ),
        mail_per_day: int(
          'Customer mails the account may send per day (UTC), by plan; mail past it is stored with status deferred and sent when the quota allows',
          { minimum: 1 },
        ),
        per_validate_key_per_minute: int(
          'Requests per minute for each validate-scope key, whatever licence they name (budget "app_minute"): the larger of per_key_per_minute and hourly_app_allowance / 20; a License credential\'s own "app_minute" is per_license_per_minute',
          { minimum: 1 },
        ),
        heartbeats_per_activation_per_minute: int(
          'Heartbeats per minute for each activation (budget "heartbeat"), instead of the minutes of the credential and the licence',
          { minimum: 1 },
        ),
        unknown_per_credential_address_per_minute: int(
          'Requests per minute for each app credential and client address naming a licence no licence has, a revoked licence or an activation that does not exist (budget "unknown_minute"); they never spend hourly_app_allowance',
          { minimum: 1 },
        ),
      },
      undefined,
      { description: "The calling account's rate limits (see RateLimit-Policy for the window this key spends)" },
    ),
    account_limits: obj(
      {
        imports_at_once: int('Imports that may be waiting or running together (409 for another)', { minimum: 1 }),
        exports_at_once: int('Exports that may be running together (409 for another)', { minimum: 1 }),
        products: int('Products the account may have (409 for one more)', { minimum: 1 }),
        import_header_columns: int("Columns of an import's CSV header (400 for a wider one)", { minimum: 1 }),
        import_refused_keys: int('Rows of one import refused for a key held elsewhere before the import fails', {
          minimum: 1,
        }),
        members: int('Members invited or active the account may have (409 for one more invitation)', { minimum: 1 }),
      },
      undefined,
      { description: "The calling account's bounds on bulk work (the same on every plan)" },
    ),
  }),
  Readiness: obj({
    status: { enum: ['ready', 'shutting_down'] },
    account_service: ref('Probe'),
    rate_limits: { enum: ['redis', 'in_memory_fallback'] },
  }),
  Liveness: obj({ status: { const: 'ok' } }),
};
