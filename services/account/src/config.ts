import { serviceSchema, str, type ConfigOf } from '@licensing/runtime';

export const accountSchema = {
  ...serviceSchema('account', 50051),
  API_KEY_PEPPER: str('Server secret for the HMAC digest of API keys; changing it invalidates every key', { secret: true }),
};

export type AccountConfig = ConfigOf<typeof accountSchema>;
