import { bool, commonSchema, int, str, type ConfigOf } from '@licensing/runtime';

// The web component reaches the services over gRPC and Redis (throttles, the account's shared hourly
// quota); it keeps no store and follows no events, so of the common settings it takes only these.
const {
  NODE_ENV,
  LOG_LEVEL,
  INTERNAL_TOKEN,
  GRPC_TLS_CA_FILE,
  GRPC_TLS_CERT_FILE,
  GRPC_TLS_KEY_FILE,
  SHUTDOWN_TIMEOUT_MS,
} = commonSchema;

export const webSchema = {
  NODE_ENV,
  LOG_LEVEL,
  INTERNAL_TOKEN,
  GRPC_TLS_CA_FILE,
  GRPC_TLS_CERT_FILE,
  GRPC_TLS_KEY_FILE,
  SHUTDOWN_TIMEOUT_MS,
  HOST: str('Address the HTTP server binds to', { default: '127.0.0.1' }),
  PORT: int(
    'HTTP port of the pages (0 = any free port); the gateway (or the Ingress) sends /dashboard, /portal and /checkout here',
    {
      default: 8082,
      min: 0,
      max: 65535,
    },
  ),
  METRICS_PORT: int('Port of the Prometheus /metrics listener on HOST (0 = any free port)', {
    default: 9465,
    min: 0,
    max: 65535,
  }),
  TRUSTED_PROXIES: str(
    "Comma-separated addresses or CIDRs (or loopback/linklocal/uniquelocal) whose X-Forwarded-For/-Proto are believed: the gateway's and the Ingress's. The per-address throttles count the address they name",
    { default: 'loopback' },
  ),
  HSTS_MAX_AGE_S: int(
    'max-age of the Strict-Transport-Security header sent on HTTPS responses (in production a page asked for over plain HTTP is redirected to HTTPS)',
    { default: 31536000, min: 0 },
  ),
  ACCOUNT_GRPC_ADDR: str('Account service address (host:port)', { default: '127.0.0.1:15051' }),
  PRODUCT_GRPC_ADDR: str('Product service address (host:port)', { default: '127.0.0.1:15052' }),
  LICENSE_GRPC_ADDR: str('Licence service address (host:port)', { default: '127.0.0.1:15053' }),
  CHECKOUT_GRPC_ADDR: str('Checkout service address (host:port)', { default: '127.0.0.1:15054' }),
  WEBHOOK_GRPC_ADDR: str('Webhook service address (host:port)', { default: '127.0.0.1:15055' }),
  NOTIFICATION_GRPC_ADDR: str('Notification service address (host:port)', { default: '127.0.0.1:15056' }),
  GRPC_TIMEOUT_MS: int('Deadline of each call to a service', { default: 5000, min: 100 }),
  REDIS_URL: str(
    "Redis of the rate limits, shared with the gateway: the throttles of the sign-in forms and the account's hourly quota, which the dashboard spends like the API; in production with an ACL user allowed only the rate-limit keys, so give it as REDIS_URL_FILE",
    { default: 'redis://127.0.0.1:6379', secret: true },
  ),
  REDIS_TIMEOUT_MS: int('A Redis command slower than this falls back to the in-memory limiter', {
    default: 250,
    min: 10,
  }),
  RATE_LIMITS_ENABLED: bool('Meter signed-in dashboard requests against the account limits (as the gateway does)', {
    default: true,
  }),
  RATE_LIMIT_PREFIX: str("Prefix of the rate-limit keys in Redis (the gateway's, so both count the same windows)", {
    default: 'licensing:rl',
  }),
  RATE_LIMIT_MINUTE_WINDOW_S: int('Length of the per-session "minute" window in seconds (60; shorter only in tests)', {
    default: 60,
    min: 1,
  }),
  RATE_LIMIT_HOUR_WINDOW_S: int('Length of the per-account "hour" window in seconds (3600; shorter only in tests)', {
    default: 3600,
    min: 1,
  }),
  LICENSE_PER_MINUTE: int(
    "Requests one licence may make per minute (the gateway's setting), shown with the plan's limits",
    {
      default: 60,
      min: 1,
      max: 1_000_000_000,
    },
  ),
  SIGNIN_FAILURES_PER_EMAIL: int(
    'Failed dashboard sign-ins per e-mail and client address before that pair is throttled (guesses from another address never lock a member out)',
    {
      default: 10,
      min: 1,
    },
  ),
  SIGNIN_FAILURES_PER_ADDRESS: int('Failed dashboard sign-ins per client IP before it is throttled', {
    default: 30,
    min: 1,
  }),
  SIGNIN_WINDOW_S: int('Window of the sign-in throttles in seconds', { default: 900, min: 1 }),
  SESSION_FAILURES_PER_MINUTE: int(
    'Unknown dashboard (and, counted apart, customer portal) session cookies per client IP and minute before its cookies are no longer looked up',
    { default: 30, min: 1 },
  ),
  SIGNUPS_PER_EMAIL: int('Dashboard sign-up attempts per e-mail and window (every attempt counts)', {
    default: 5,
    min: 1,
  }),
  SIGNUPS_PER_ADDRESS: int('Dashboard sign-up attempts per client IP and window (every attempt counts)', {
    default: 20,
    min: 1,
  }),
  SIGNUP_WINDOW_S: int('Window of the sign-up throttles in seconds', { default: 3600, min: 1 }),
  CHECKOUT_REQUESTS_PER_MINUTE: int(
    'Requests to the hosted checkout page per client IP and minute (its assets not counted); past it a 429 page',
    {
      default: 60,
      min: 1,
    },
  ),
  PORTAL_LOOKUPS_PER_ADDRESS_PER_MINUTE: int(
    "Customer portal requests per client IP and minute whose account is not already known to this process (each account's vendor, or its absence, is remembered for a minute); past it a 429 page",
    { default: 60, min: 1 },
  ),
  PORTAL_SIGNINS_PER_ADDRESS: int('Customer portal sign-in requests per client IP and window, every request counted', {
    default: 20,
    min: 1,
  }),
  PORTAL_SIGNIN_WINDOW_S: int('Window of the customer portal sign-in throttles in seconds', {
    default: 3600,
    min: 1,
  }),
  PUBLIC_BASE_URL: str(
    "Public address of the system (the gateway's), for the customer portal link shown in the dashboard's Settings (empty: the address the request came to)",
    { default: '' },
  ),
};

export type WebConfig = ConfigOf<typeof webSchema>;
