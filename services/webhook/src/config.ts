import { bool, int, serviceSchema, str, type ConfigOf } from '@licensing/runtime';

export const webhookSchema = {
  ...serviceSchema('webhook', 15055),
  WEBHOOK_SECRET_KEY: str('32 random bytes, base64: encrypts endpoint signing secrets at rest', { secret: true }),
  WEBHOOK_TIMEOUT_MS: int('A delivery that has not answered 2xx within this is a failed attempt', {
    default: 10_000,
    min: 100,
    max: 60_000,
  }),
  WEBHOOK_RETRY_SCHEDULE_S: str('Seconds between attempts, comma-separated (shorter only in tests)', {
    default: '5,300,1800,7200,18000,36000,36000',
  }),
  WEBHOOK_DISPATCH_INTERVAL_MS: int('How often due deliveries are looked for', { default: 500, min: 20 }),
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
