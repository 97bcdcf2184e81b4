import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import {
  AccessLog,
  createLogger,
  internalTls,
  loadConfig,
  Metrics,
  RateLimits,
  runMain,
  serveMetrics,
  startTracing,
  type Logger,
} from '@licensing/runtime';
import { createWebApp } from './app';
import { createClients } from './backends/clients';
import { webSchema, type WebConfig } from './config';

export interface RunningWeb {
  port: number;
  url: string;
  metricsPort: number;
  stop(): Promise<void>;
}

export interface StartOptions {
  config?: Partial<WebConfig>;
  env?: Record<string, string | undefined>;
}

/** Redis for the throttles and the quota: used when it answers, in-memory counts meanwhile (never a wait). */
function connectRedis(config: WebConfig, log: Logger): Redis {
  const redis = new Redis(config.REDIS_URL, {
    enableOfflineQueue: false,
    commandTimeout: config.REDIS_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    retryStrategy: (attempt) => Math.min(attempt * 100, 500),
    disconnectTimeout: 200,
  });
  let down = false;
  redis.on('error', (err) => {
    if (!down) log.warn({ err: err.message }, 'redis unavailable: throttles are counted per process until it is back');
    down = true;
  });
  redis.on('ready', () => {
    if (down) log.info('redis is back: shared throttles again');
    down = false;
  });
  return redis;
}

/** The web component: the dashboard, the customer portal (and their page kit) as one HTTP server. */
export async function start(opts: StartOptions = {}): Promise<RunningWeb> {
  const env = opts.env ?? process.env;
  const config = loadConfig(webSchema, env, opts.config ?? {});
  const log = createLogger('web', config.LOG_LEVEL);
  const tracing = startTracing('web', env);
  const metrics = new Metrics('web');
  const clients = createClients(config, tracing);
  const redis = connectRedis(config, log);
  metrics.gauge('licensing_rate_limit_fallback', async () => (redis.status === 'ready' ? 0 : 1), 'max');
  // The certificate it shows the services when internal mTLS is on (read once, like theirs).
  const internalCert = internalTls(config)?.cert;
  if (internalCert) metrics.certificateExpiry('grpc', internalCert);
  const limits = new RateLimits(redis, {
    enabled: config.RATE_LIMITS_ENABLED,
    keyPrefix: config.RATE_LIMIT_PREFIX,
    minuteWindowS: config.RATE_LIMIT_MINUTE_WINDOW_S,
    hourWindowS: config.RATE_LIMIT_HOUR_WINDOW_S,
    // Unused here (no API keys are checked); the gateway's default.
    authFailuresPerMinute: 60,
    // Pages are few next to API calls: every signed-in request asks Redis, none is admitted locally.
    localShare: 0,
    licensePerMinute: config.LICENSE_PER_MINUTE,
  });
  const access = new AccessLog('web', config.LOG_LEVEL);
  const server = createServer(createWebApp({ config, clients, limits, log, metrics, access }));
  // The gateway reuses its connections here (routes/web-proxy.ts) and lets an idle one go after
  // WEB_PROXY_IDLE_SOCKET_MS (30 s); this side keeps one open longer, so it never closes a connection the
  // gateway is sending a request on at that moment (that race was a 503 for a page now and then).
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.PORT, config.HOST, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST}:${port}`;
  const metricsServer = await serveMetrics(metrics, config.HOST, config.METRICS_PORT);
  log.info({ url, metrics_port: metricsServer.port }, 'web listening');

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      // Accepted requests finish (bounded by SHUTDOWN_TIMEOUT_MS); idle keep-alive connections close now.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const timer = setTimeout(() => server.closeAllConnections(), config.SHUTDOWN_TIMEOUT_MS);
      await closed;
      clearTimeout(timer);
      access.flush();
      await metricsServer.close();
      await limits.close();
      clients.close();
      redis.disconnect();
      await tracing?.shutdown().catch((err: unknown) => log.warn({ err }, 'could not send the last spans'));
    })());
  return { port, url, metricsPort: metricsServer.port, stop };
}

if (require.main === module) runMain('web', () => start());
