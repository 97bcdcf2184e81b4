import { int, serviceSchema, str, type ConfigOf } from '@licensing/runtime';
import { transferSchema } from './transfer/config';

export const licenseSchema = {
  ...serviceSchema('license', 15053),
  PRODUCT_GRPC_ADDR: str('Product service address (host:port)', { default: '127.0.0.1:15052' }),
  // Imports, exports and licence batches (transfer/README.md).
  ...transferSchema,
  EXPIRY_SWEEP_INTERVAL_MS: int(
    'How often licences past expiry and grace (to publish license.expired) and lapsed floating seats (to reclaim them) are looked for',
    { default: 60_000, min: 50 },
  ),
  STATS_FLUSH_INTERVAL_MS: int('How often validation counts are written to the database', { default: 5000, min: 50 }),
  PRODUCT_CACHE_SIZE: int(
    'Products remembered for issuing licences and for the entitlements every licence answer and validation carries (kept exact by product.updated; 0: ask the product service every time)',
    { default: 10_000, min: 0, max: 1_000_000 },
  ),
  PRODUCT_CACHE_TTL_MS: int('The longest a remembered product is used, in case an update event is ever lost', {
    default: 60_000,
    min: 0,
    max: 600_000,
  }),
  LICENSE_CACHE_SIZE: int(
    'Licences remembered for validations that reach this service (kept exact by license.* events; 0: read the store every time)',
    { default: 10_000, min: 0, max: 1_000_000 },
  ),
  LICENSE_CACHE_TTL_MS: int('The longest a remembered licence is used, in case an event is ever lost', {
    default: 60_000,
    min: 0,
    max: 60_000,
  }),
};

export type LicenseConfig = ConfigOf<typeof licenseSchema>;
