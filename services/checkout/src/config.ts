import { int, serviceSchema, str, type ConfigOf } from '@licensing/runtime';

export const checkoutSchema = {
  ...serviceSchema('checkout', 50054),
  PRODUCT_GRPC_ADDR: str('Product service address (host:port)', { default: '127.0.0.1:50052' }),
  LICENSE_GRPC_ADDR: str('Licence service address (host:port), to issue the licence of a paid session', { default: '127.0.0.1:50053' }),
  HTTP_HOST: str('Address the hosted checkout page binds to', { default: '127.0.0.1' }),
  HTTP_PORT: int('Port of the hosted checkout page (the gateway proxies /checkout to it)', { default: 8081, min: 0, max: 65535 }),
  PUBLIC_BASE_URL: str('Public address of the gateway, for the hosted checkout page URLs', { default: 'http://127.0.0.1:8080' }),
  EXPIRY_SWEEP_INTERVAL_MS: int('How often open sessions past their expiry are marked expired', { default: 30_000, min: 50 }),
};

export type CheckoutConfig = ConfigOf<typeof checkoutSchema>;
