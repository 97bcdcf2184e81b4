import type { AddressInfo } from 'node:net';
import { createServer } from 'node:http';
import { Redis } from 'ioredis';
import { createLogger, EventBus, loadConfig, runMain } from '@licensing/runtime';
import { createApp } from './app';
import { createClients } from './clients';
import { gatewaySchema, type GatewayConfig } from './config';
import { RateLimits } from './limits';

const VERSION = process.env.npm_package_version ?? '0.1.0';

export interface RunningGateway {
  port: number;
  url: string;
  stop(): Promise<void>;
}

export async function start(opts: { config?: Partial<GatewayConfig>; env?: Record<string, string | undefined> } = {}): Promise<RunningGateway> {
  const config = loadConfig(gatewaySchema, opts.env ?? process.env, opts.config ?? {});
  const log = createLogger('gateway', config.LOG_LEVEL);
  const bus = await EventBus.connect({ url: config.NATS_URL, subjectPrefix: config.EVENTS_SUBJECT_PREFIX, stream: config.EVENTS_STREAM, name: 'gateway', log });
  const clients = createClients(config);
  // No offline queue and a short command timeout: when Redis is away, the limiter
  // falls over to its in-memory insurance at once instead of waiting. ioredis
  // keeps reconnecting in the background and Redis is used again when it is back.
  const redis = new Redis(config.REDIS_URL, {
    enableOfflineQueue: false,
    commandTimeout: config.REDIS_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    lazyConnect: true,
    // Retry often: a returning Redis is used again within half a second.
    retryStrategy: (attempt) => Math.min(attempt * 100, 500),
    // ioredis 6 keeps a timer this long after disconnect() (default 2 s), delaying exit.
    disconnectTimeout: 200,
  });
  let redisDown = false;
  redis.on('error', (err) => {
    if (!redisDown) log.warn({ err: err.message }, 'redis unavailable: rate limits are counted per gateway until it is back');
    redisDown = true;
  });
  redis.on('ready', () => {
    if (redisDown) log.info('redis is back: shared rate limits again');
    redisDown = false;
  });
  redis.connect().catch(() => undefined);
  const limits = new RateLimits(redis, {
    enabled: config.RATE_LIMITS_ENABLED,
    keyPrefix: config.RATE_LIMIT_PREFIX,
    minuteWindowS: config.RATE_LIMIT_MINUTE_WINDOW_S,
    hourWindowS: config.RATE_LIMIT_HOUR_WINDOW_S,
    authFailuresPerMinute: config.AUTH_FAILURES_PER_MINUTE,
  });
  const app = createApp({ config, clients, bus, limits, log, version: VERSION });
  const server = createServer({ keepAliveTimeout: 65_000, headersTimeout: 20_000, requestTimeout: 30_000 }, app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.PORT, config.HOST, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST}:${port}`;
  log.info({ url }, 'gateway listening');

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      // Stop accepting, let in-flight requests finish (bounded), then close channels.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const limit = new Promise<void>((resolve) => setTimeout(resolve, config.SHUTDOWN_TIMEOUT_MS).unref());
      await Promise.race([closed, limit]);
      server.closeAllConnections();
      clients.close();
      redis.disconnect();
      await bus.close();
    })());
  return { port, url, stop };
}

if (require.main === module) runMain('gateway', () => start());
