import { bool, commonSchema, int, str, type ConfigOf } from '@licensing/runtime';

const { MONGO_URL: _unused, ...common } = commonSchema;

export const gatewaySchema = {
  ...common,
  HOST: str('Address the HTTP server binds to', { default: '127.0.0.1' }),
  PORT: int('HTTP(S) port (0 = any free port)', { default: 8080, min: 0, max: 65535 }),
  METRICS_PORT: int('Port of the Prometheus /metrics listener on HOST, kept off the public port (0 = any free port)', { default: 9464, min: 0, max: 65535 }),
  TLS_CERT_FILE: str('PEM certificate chain; with TLS_KEY_FILE the gateway serves HTTPS and reloads both on SIGHUP', { default: '' }),
  TLS_KEY_FILE: str('PEM private key for TLS_CERT_FILE', { default: '' }),
  TRUSTED_PROXIES: str('Comma-separated addresses or CIDRs of proxies whose X-Forwarded-For/-Proto are believed (empty: none)', { default: '' }),
  SHUTDOWN_DRAIN_DELAY_MS: int('On SIGTERM, keep serving this long with /readyz answering 503 so load balancers stop sending, then stop accepting', { default: 0, min: 0, max: 60000 }),
  HSTS_MAX_AGE_S: int('max-age of the Strict-Transport-Security header sent on HTTPS responses', { default: 31536000, min: 0 }),
  ACCOUNT_GRPC_ADDR: str('Account service address (host:port)', { default: '127.0.0.1:50051' }),
  PRODUCT_GRPC_ADDR: str('Product service address (host:port)', { default: '127.0.0.1:50052' }),
  LICENSE_GRPC_ADDR: str('Licence service address (host:port)', { default: '127.0.0.1:50053' }),
  CHECKOUT_GRPC_ADDR: str('Checkout service address (host:port)', { default: '127.0.0.1:50054' }),
  WEBHOOK_GRPC_ADDR: str('Webhook service address (host:port)', { default: '127.0.0.1:50055' }),
  CHECKOUT_PAGE_URL: str('Where the checkout service serves its hosted page (proxied under /checkout)', { default: 'http://127.0.0.1:8081' }),
  CHECKOUT_REQUESTS_PER_MINUTE: int('Requests to the hosted checkout page per client IP and minute', { default: 60, min: 1 }),
  BODY_LIMIT_BYTES: int('Largest accepted JSON body', { default: 64 * 1024, min: 1024, max: 10 * 1024 * 1024 }),
  AUTH_CACHE_TTL_MS: int('How long an authenticated key is trusted without asking the account service (revocations arrive over NATS sooner)', { default: 30000, min: 0 }),
  GRPC_TIMEOUT_MS: int('Deadline of each call to a service', { default: 5000, min: 100 }),
  REDIS_URL: str('Redis shared by every gateway for rate-limit counters', { default: 'redis://127.0.0.1:6379' }),
  REDIS_TIMEOUT_MS: int('A Redis command slower than this falls back to the in-memory limiter', { default: 250, min: 10 }),
  RATE_LIMITS_ENABLED: bool('Enforce rate limits (turn off only to measure their cost)', { default: true }),
  RATE_LIMIT_PREFIX: str('Prefix of the rate-limit keys in Redis', { default: 'licensing:rl' }),
  RATE_LIMIT_MINUTE_WINDOW_S: int('Length of the per-key "minute" window in seconds (60; shorter only in tests)', { default: 60, min: 1 }),
  RATE_LIMIT_HOUR_WINDOW_S: int('Length of the per-account "hour" window in seconds (3600; shorter only in tests)', { default: 3600, min: 1 }),
  AUTH_FAILURES_PER_MINUTE: int('Requests with a missing or bad key allowed per client IP and minute', { default: 60, min: 1 }),
  SIGNIN_FAILURES_PER_EMAIL: int('Failed dashboard sign-ins per e-mail before it is throttled', { default: 10, min: 1 }),
  SIGNIN_FAILURES_PER_ADDRESS: int('Failed dashboard sign-ins per client IP before it is throttled', { default: 30, min: 1 }),
  SIGNIN_WINDOW_S: int('Window of the sign-in throttles in seconds', { default: 900, min: 1 }),
};

export type GatewayConfig = ConfigOf<typeof gatewaySchema>;
