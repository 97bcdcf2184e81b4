import { bool, commonSchema, int, str, type ConfigOf } from '@licensing/runtime';
import { DEFAULT_ARTIFACT_MAX_BYTES, MAX_IMPORT_BYTES } from '@licensing/proto';

const { MONGO_URL: _unused, ...common } = commonSchema;

export const gatewaySchema = {
  ...common,
  HOST: str('Address the HTTP server binds to', { default: '127.0.0.1' }),
  PORT: int('HTTP(S) port (0 = any free port)', { default: 8080, min: 0, max: 65535 }),
  METRICS_PORT: int('Port of the Prometheus /metrics listener on HOST, kept off the public port (0 = any free port)', {
    default: 9464,
    min: 0,
    max: 65535,
  }),
  GATEWAY_WORKERS: int(
    'Gateway processes on this host sharing PORT (node:cluster; METRICS_PORT then sums them). One per core on a VM or compose; keep 1 in Kubernetes and scale pods',
    { default: 1, min: 1, max: 64 },
  ),
  TLS_CERT_FILE: str('PEM certificate chain; with TLS_KEY_FILE the gateway serves HTTPS and reloads both on SIGHUP', {
    default: '',
  }),
  TLS_KEY_FILE: str('PEM private key for TLS_CERT_FILE', { default: '' }),
  TRUSTED_PROXIES: str(
    'Comma-separated addresses or CIDRs of proxies whose X-Forwarded-For/-Proto are believed (empty: none)',
    { default: '' },
  ),
  SHUTDOWN_DRAIN_DELAY_MS: int(
    'On SIGTERM, keep serving this long with /readyz answering 503 so load balancers stop sending, then stop accepting',
    { default: 0, min: 0, max: 60000 },
  ),
  HSTS_MAX_AGE_S: int('max-age of the Strict-Transport-Security header sent on HTTPS responses', {
    default: 31536000,
    min: 0,
  }),
  ACCOUNT_GRPC_ADDR: str('Account service address (host:port)', { default: '127.0.0.1:15051' }),
  PRODUCT_GRPC_ADDR: str('Product service address (host:port)', { default: '127.0.0.1:15052' }),
  LICENSE_GRPC_ADDR: str('Licence service address (host:port)', { default: '127.0.0.1:15053' }),
  CHECKOUT_GRPC_ADDR: str('Checkout service address (host:port)', { default: '127.0.0.1:15054' }),
  WEBHOOK_GRPC_ADDR: str('Webhook service address (host:port)', { default: '127.0.0.1:15055' }),
  NOTIFICATION_GRPC_ADDR: str('Notification service address (host:port): the mail log and e-mails asked for', {
    default: '127.0.0.1:15056',
  }),
  CHECKOUT_PAGE_URL: str(
    "Where the checkout service receives Stripe's webhooks (proxied from /webhooks/stripe; the hosted page under /checkout is the web component's)",
    { default: 'http://127.0.0.1:8081' },
  ),
  WEB_PAGE_URL: str(
    'Where the web component serves the pages people see (proxied under /dashboard, /portal and /checkout, paths unchanged)',
    { default: 'http://127.0.0.1:8082' },
  ),
  STRIPE_WEBHOOK_REQUESTS_PER_MINUTE: int(
    'Deliveries to POST /webhooks/stripe per client IP and minute (Stripe retries refused ones)',
    { default: 600, min: 1 },
  ),
  BODY_LIMIT_BYTES: int('Largest accepted JSON body', { default: 64 * 1024, min: 1024, max: 10 * 1024 * 1024 }),
  IMPORT_MAX_BYTES: int(
    "Largest import file (POST /api/v1/imports): 413 past it, whether declared by Content-Length or streamed; at most 100 MB, the licence service's own limit",
    { default: MAX_IMPORT_BYTES, min: 64 * 1024, max: MAX_IMPORT_BYTES },
  ),
  DATA_DIR: str('Folder the gateway keeps release files in (DATA_DIR/artifacts) when ARTIFACT_STORE_URL is empty', {
    default: '.data',
  }),
  ARTIFACT_STORE_URL: str(
    'Where release files live: empty for DATA_DIR/artifacts on this machine, or s3://bucket?endpoint=…&region=… for any S3-compatible store (credentials from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY); several gateways need the S3 store or a shared volume',
    { default: '' },
  ),
  ARTIFACT_MAX_BYTES: int(
    'Largest release file an upload may carry (PUT /api/v1/releases/{id}/artifacts/{filename}): 413 past it, the partial file removed',
    { default: DEFAULT_ARTIFACT_MAX_BYTES, min: 1024, max: 5 * 1024 ** 4 },
  ),
  PUBLIC_BASE_URL: str(
    'Public address of the gateway, for the absolute links of update feeds and downloads (empty: the address each request came to)',
    { default: '' },
  ),
  VALIDATION_CACHE_SIZE: int(
    'Licences (and unknown keys) the validation cache holds, least recently used dropped first; about 1.4 KiB each (0.85 KiB of facts, the rest the answer it last sent) (0 = no cache: every validation asks the licence service)',
    { default: 100_000, min: 0, max: 10_000_000 },
  ),
  VALIDATION_CACHE_TTL_MS: int(
    'How long a cached validation answer is trusted at most; events evict changed licences at once, this only bounds a lost event',
    { default: 60_000, min: 1000, max: 60_000 },
  ),
  VALIDATION_STATS_FLUSH_MS: int(
    'How often the gateway sends the counts of validations it answered from its cache to the licence service',
    { default: 2000, min: 50, max: 60_000 },
  ),
  RATE_LIMIT_LOCAL_PERCENT: int(
    'Percent of a large rate limit (1,000 or more) one gateway may admit on its own between two syncs with Redis (docs/api.md gives the accuracy); 0 = ask Redis on every request',
    { default: 1, min: 0, max: 5 },
  ),
  AUTH_CACHE_TTL_MS: int(
    'How long an authenticated key is trusted without asking the account service: at most 1 s, so a revoked key is refused within a second even when its api_key.revoked event is late or lost (events usually evict it sooner)',
    { default: 1000, min: 0, max: 1000 },
  ),
  GRPC_TIMEOUT_MS: int('Deadline of each call to a service', { default: 5000, min: 100 }),
  REDIS_URL: str(
    "Redis shared by every gateway for rate-limit counters; in production with the gateway's own ACL user, allowed only the rate-limit keys (redis://gateway:<password>@redis:6379, rediss:// for TLS; deploy/redis/start.sh), so give it as REDIS_URL_FILE",
    { default: 'redis://127.0.0.1:6379', secret: true },
  ),
  REDIS_TIMEOUT_MS: int('A Redis command slower than this falls back to the in-memory limiter', {
    default: 250,
    min: 10,
  }),
  REDIS_CONNECT_WAIT_MS: int(
    'How long a starting gateway waits for Redis before it serves with per-process limits (it keeps trying in the background)',
    { default: 2000, min: 0 },
  ),
  RATE_LIMITS_ENABLED: bool('Enforce rate limits (turn off only to measure their cost)', { default: true }),
  RATE_LIMIT_PREFIX: str('Prefix of the rate-limit keys in Redis', { default: 'licensing:rl' }),
  RATE_LIMIT_MINUTE_WINDOW_S: int('Length of the per-key "minute" window in seconds (60; shorter only in tests)', {
    default: 60,
    min: 1,
  }),
  RATE_LIMIT_HOUR_WINDOW_S: int('Length of the per-account "hour" window in seconds (3600; shorter only in tests)', {
    default: 3600,
    min: 1,
  }),
  LICENSE_PER_MINUTE: int(
    'Requests one licence may make per minute: with its "License" credential, or through a validate-scope key naming it (budget "license_minute"; docs/api.md, "App credentials")',
    { default: 60, min: 1, max: 1_000_000_000 },
  ),
  LICENSE_CREDENTIAL_CACHE_SIZE: int(
    'Licence credentials ("Authorization: License <key>") the gateway remembers, least recently used dropped first; events keep them exact (0 = ask the licence service on every request)',
    { default: 100_000, min: 0, max: 10_000_000 },
  ),
  AUTH_FAILURES_PER_MINUTE: int('Requests with a missing or bad key allowed per client IP and minute', {
    default: 60,
    min: 1,
  }),
  CORS_ALLOWED_ORIGINS: str(
    'Origins (scheme://host[:port], comma-separated, or *) whose browser pages may call the app routes (validation and the licence credential routes); empty: no cross-origin calls',
    { default: '' },
  ),
};

export type GatewayConfig = ConfigOf<typeof gatewaySchema>;
