import { bool, int, serviceSchema, str, type ConfigOf } from '@licensing/runtime';

export const webhookSchema = {
  ...serviceSchema('webhook', 15055),
  WEBHOOK_SECRET_KEY: str(
    '32 random bytes, base64: encrypts endpoint signing secrets at rest. While it is rotated, several as id:<base64> entries (comma-separated; a bare one is the id "legacy"): the first seals, every one opens (docs/operations.md, "Rotating secrets")',
    { secret: true },
  ),
  WEBHOOK_TIMEOUT_MS: int('A delivery that has not answered 2xx within this is a failed attempt', {
    default: 10_000,
    min: 100,
    max: 60_000,
  }),
  WEBHOOK_RETRY_SCHEDULE_S: str('Seconds between attempts, comma-separated (shorter only in tests)', {
    default: '5,300,1800,7200,18000,36000,36000',
  }),
  WEBHOOK_DISPATCH_INTERVAL_MS: int(
    'How often the store is looked at for due deliveries not sent at once: retries, and those left by a restart or recorded by another replica (a new delivery is sent as soon as it is recorded)',
    { default: 2000, min: 20 },
  ),
  WEBHOOK_ENDPOINT_CONCURRENCY: int(
    'Requests to one endpoint in flight at once, across all replicas (1: one at a time); deliveries to one endpoint have no promised order',
    { default: 8, min: 1, max: 64 },
  ),
  WEBHOOK_ENDPOINT_CACHE_MS: int(
    "How long a replica keeps an account's enabled endpoints in memory: a change made through another replica reaches it within this (its own changes at once; 0: read the store every time)",
    { default: 1000, min: 0, max: 60_000 },
  ),
  WEBHOOK_MAX_ENDPOINTS: int('Webhook endpoints one account may have (deleted ones do not count)', {
    default: 20,
    min: 1,
    max: 1000,
  }),
  WEBHOOK_DELIVERY_RETENTION_DAYS: int(
    'Finished deliveries (delivered or failed) are removed after this many days; the delivery log shows what is left',
    { default: 30, min: 1, max: 3650 },
  ),
  WEBHOOK_ALLOW_LOOPBACK: bool(
    'Development and tests only: let endpoints point at loopback receivers (refused in production)',
    { default: false },
  ),
};

export type WebhookConfig = ConfigOf<typeof webhookSchema>;
