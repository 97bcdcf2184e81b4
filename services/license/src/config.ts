import { int, serviceSchema, str, type ConfigOf } from '@licensing/runtime';

export const licenseSchema = {
  ...serviceSchema('license', 50053),
  PRODUCT_GRPC_ADDR: str('Product service address (host:port)', { default: '127.0.0.1:50052' }),
  EXPIRY_SWEEP_INTERVAL_MS: int(
    'How often licences past expiry and grace are looked for (to publish license.expired)',
    { default: 60_000, min: 50 },
  ),
  STATS_FLUSH_INTERVAL_MS: int('How often validation counts are written to the database', { default: 5000, min: 50 }),
};

export type LicenseConfig = ConfigOf<typeof licenseSchema>;
