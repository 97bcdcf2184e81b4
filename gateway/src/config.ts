import { commonSchema, int, str, type ConfigOf } from '@licensing/runtime';

const { MONGO_URL: _unused, ...common } = commonSchema;

export const gatewaySchema = {
  ...common,
  HOST: str('Address the HTTP server binds to', { default: '127.0.0.1' }),
  PORT: int('HTTP port (0 = any free port)', { default: 8080, min: 0, max: 65535 }),
  ACCOUNT_GRPC_ADDR: str('Account service address (host:port)', { default: '127.0.0.1:50051' }),
  PRODUCT_GRPC_ADDR: str('Product service address (host:port)', { default: '127.0.0.1:50052' }),
  LICENSE_GRPC_ADDR: str('Licence service address (host:port)', { default: '127.0.0.1:50053' }),
  BODY_LIMIT_BYTES: int('Largest accepted JSON body', { default: 64 * 1024, min: 1024, max: 10 * 1024 * 1024 }),
  AUTH_CACHE_TTL_MS: int('How long an authenticated key is trusted without asking the account service (revocations arrive over NATS sooner)', { default: 30000, min: 0 }),
  GRPC_TIMEOUT_MS: int('Deadline of each call to a service', { default: 5000, min: 100 }),
};

export type GatewayConfig = ConfigOf<typeof gatewaySchema>;
