import { serviceSchema, str, type ConfigOf } from '@licensing/runtime';

export const licenseSchema = {
  ...serviceSchema('license', 50053),
  PRODUCT_GRPC_ADDR: str('Product service address (host:port)', { default: '127.0.0.1:50052' }),
};

export type LicenseConfig = ConfigOf<typeof licenseSchema>;
