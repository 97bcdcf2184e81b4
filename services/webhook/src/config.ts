import { bool, serviceSchema, str, type ConfigOf } from '@licensing/runtime';

export const webhookSchema = {
  ...serviceSchema('webhook', 50055),
  WEBHOOK_SECRET_KEY: str('32 random bytes, base64: encrypts endpoint signing secrets at rest', { secret: true }),
  WEBHOOK_ALLOW_LOOPBACK: bool('Development and tests only: let endpoints point at loopback receivers (refused in production)', { default: false }),
};

export type WebhookConfig = ConfigOf<typeof webhookSchema>;
