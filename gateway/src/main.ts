import cluster from 'node:cluster';
import type { AddressInfo, Server } from 'node:net';
import { Redis } from 'ioredis';
import {
  createLogger,
  internalTls,
  loadConfig,
  Metrics,
  natsOptions,
  runMain,
  serveMetrics,
  shareMetricsWithPrimary,
  startTracing,
  systemClock,
  type Clock,
  type Logger,
} from '@licensing/runtime';
import { createApp, type FastPathSwitch } from './app';
import { createClients, type Clients } from './backends/clients';
import { gatewaySchema, type GatewayConfig } from './config';
import { AccessLog, RateLimits } from '@licensing/runtime';
import { checkTransportConfig, createGatewayServer } from './http/transport';

import { Drain } from './http/drain';
import { ExportJobs } from './routes/export-jobs';
import { EventFeed } from './backends/event-feed';
import { LicenseValidator } from './license-validation/validator';
import { ValidationCache } from './license-validation/cache';
import { ValidationTally } from './license-validation/tally';
import { runPrimary } from './http/workers';
import { artifactStoreOf } from './artifacts/store-url';
import type { ArtifactStore } from './artifacts/artifact-store';

// The release in /api/v1/status and the OpenAPI document: APP_VERSION when the
// image build sets it (e.g. a git tag), else this package's version.
const VERSION: string = process.env.APP_VERSION || (require('../package.json') as { version: string }).version;

export interface RunningGateway {
  port: number;
  url: string;
  metricsPort: number;
  /** Re-reads the TLS certificate and key (what SIGHUP does). */
  reloadTls(): void;
  stop(): Promise<void>;
}

export interface StartOptions {
  config?: Partial<GatewayConfig>;
  env?: Record<string, string | undefined>;
  clock?: Clock;
  /** For tests only (app.ts). */
  fastPath?: FastPathSwitch;
}

/**
 * No offline queue and a short command timeout: when Redis is away, the limiter falls over to its
 * in-memory insurance at once instead of waiting. ioredis keeps reconnecting in the background and
 * Redis is used again when it is back.
 */
async function connectRedis(config: GatewayConfig, log: Logger): Promise<Redis> {
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
    if (!redisDown)
      log.warn({ err: err.message }, 'redis unavailable: rate limits are counted per gateway until it is back');
    redisDown = true;
  });
  redis.on('ready', () => {
    if (redisDown) log.info('redis is back: shared rate limits again');
    redisDown = false;
  });
  // Waited for briefly, so a new gateway's first requests count in the shared window (counted in
  // memory instead, a flood of bad keys would get a second allowance once Redis answers); never for
  // long: a gateway without Redis still serves, with per-process limits.
  await redisReady(redis, config.REDIS_CONNECT_WAIT_MS);
  return redis;
}

function rateLimitsOf(redis: Redis, config: GatewayConfig): RateLimits {
  return new RateLimits(redis, {
    enabled: config.RATE_LIMITS_ENABLED,
    keyPrefix: config.RATE_LIMIT_PREFIX,
    minuteWindowS: config.RATE_LIMIT_MINUTE_WINDOW_S,
    hourWindowS: config.RATE_LIMIT_HOUR_WINDOW_S,
    authFailuresPerMinute: config.AUTH_FAILURES_PER_MINUTE,
    localShare: config.RATE_LIMIT_LOCAL_PERCENT / 100,
    licensePerMinute: config.LICENSE_PER_MINUTE,
  });
}

/** The licence validator, its cache (kept exact by events) and the tally of validations it counts. */
function createValidator(
  config: GatewayConfig,
  clients: Clients,
  bus: EventFeed,
  log: Logger,
  metrics: Metrics,
  clock: Clock,
) {
  const tally = new ValidationTally(clients, log, config.VALIDATION_STATS_FLUSH_MS, metrics);
  const evictions = metrics.counter('licensing_validation_cache_evictions_total', ['event']);
  const cache = new ValidationCache(config.VALIDATION_CACHE_SIZE, config.VALIDATION_CACHE_TTL_MS, bus, (event) =>
    evictions.inc({ event }),
  );
  const validator = new LicenseValidator(clients, cache, tally, clock, metrics);
  tally.start();
  return { tally, validator };
}

/**
 * Certificates are renewed in place (cert-manager, certbot); SIGHUP picks them up without a restart.
 * Answers the SIGHUP handler; the served certificate's expiry is a metric.
 */
function watchCertificates(certificate: () => Buffer | undefined, reloadTls: () => void, metrics: Metrics): () => void {
  const servedCertificate = () => {
    const cert = certificate();
    if (cert) metrics.certificateExpiry('https', cert);
  };
  servedCertificate();
  const onHup = () => {
    reloadTls();
    servedCertificate();
  };
  return onHup;
}

function warnOfPlainHttp(config: GatewayConfig, log: Logger): void {
  if (config.NODE_ENV !== 'production' && !['127.0.0.1', '::1', 'localhost'].includes(config.HOST)) {
    log.warn(
      { host: config.HOST },
      'serving plain HTTP beyond loopback: API keys cross the network in clear text (set TLS_CERT_FILE/TLS_KEY_FILE, or NODE_ENV=production behind a TLS proxy)',
    );
  }
}

/** The event stream the caches follow. */
function connectEvents(config: GatewayConfig, log: Logger, metrics: Metrics): EventFeed {
  return EventFeed.connect({
    ...natsOptions(config),
    subjectPrefix: config.EVENTS_SUBJECT_PREFIX,
    stream: config.EVENTS_STREAM,
    name: 'gateway',
    log,
    metrics,
  });
}

/**
 * Where release files live. A bad ARTIFACT_STORE_URL stops the start here; a store that is away only
 * fails uploads and downloads, never validation, so it is not waited for.
 */
function openArtifactStore(config: GatewayConfig, log: Logger): ArtifactStore {
  const artifacts = artifactStoreOf(config.ARTIFACT_STORE_URL, config.DATA_DIR);
  artifacts
    .ready()
    .catch((err: unknown) =>
      log.error({ err: String(err), store: artifacts.kind }, 'the release file store is not ready'),
    );
  return artifacts;
}

/** Listens on HOST:PORT; answers the port taken (PORT=0 picks one) and the URL to reach it. */
async function listen(server: Server, config: GatewayConfig, tls: boolean): Promise<{ port: number; url: string }> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.PORT, config.HOST, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `${tls ? 'https' : 'http'}://${config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST}:${port}`;
  return { port, url };
}

export async function start(opts: StartOptions = {}): Promise<RunningGateway> {
  const env = opts.env ?? process.env;
  const config = loadConfig(gatewaySchema, env, opts.config ?? {});
  checkTransportConfig(config);
  const log = createLogger('gateway', config.LOG_LEVEL);
  const tracing = startTracing('gateway', env);
  const access = new AccessLog('gateway', config.LOG_LEVEL);
  const metrics = new Metrics('gateway');
  const bus = connectEvents(config, log, metrics);
  const clients = createClients(config, tracing);
  const artifacts = openArtifactStore(config, log);
  const redis = await connectRedis(config, log);
  // Either state holds for the whole process; a clustered gateway reports its worst worker.
  metrics.gauge('licensing_rate_limit_fallback', async () => (redis.status === 'ready' ? 0 : 1), 'max');
  metrics.gauge('licensing_nats_connected', async () => (bus.connected ? 1 : 0), 'min');
  // The certificate the gateway shows the services when internal mTLS is on (read once, like theirs).
  const internalCert = internalTls(config)?.cert;
  if (internalCert) metrics.certificateExpiry('grpc', internalCert);
  const limits = rateLimitsOf(redis, config);
  const { tally, validator } = createValidator(config, clients, bus, log, metrics, opts.clock ?? systemClock);
  const draining = {
    get now() {
      return drain.draining;
    },
  };
  const exportJobs = new ExportJobs(clients, log);
  const app = createApp({
    exportJobs,
    clock: opts.clock,
    config,
    clients,
    bus,
    limits,
    validator,
    log,
    access,
    metrics,
    version: VERSION,
    artifacts,
    draining,
    fastPath: opts.fastPath,
    tracing,
  });
  const { server, tls, certificate, reloadTls } = createGatewayServer(config, app, log);
  const drain = new Drain(server, log);
  const { port, url } = await listen(server, config, tls);
  // A cluster worker's metrics are served, summed with its siblings', by the primary (workers.ts).
  const metricsServer = cluster.isWorker
    ? shareMetricsWithPrimary(metrics)
    : await serveMetrics(metrics, config.HOST, config.METRICS_PORT);
  const onHup = watchCertificates(certificate, reloadTls, metrics);
  if (tls) process.on('SIGHUP', onHup);
  log.info({ url, metrics_port: metricsServer.port }, 'gateway listening');
  if (!tls) warnOfPlainHttp(config, log);
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      // Not ready, stop accepting, let accepted requests finish (bounded), then close channels. Exports
      // running in this process get as long to finish; those left are marked failed (export-jobs.ts).
      await Promise.all([
        drain.stop(config.SHUTDOWN_DRAIN_DELAY_MS, config.SHUTDOWN_TIMEOUT_MS),
        exportJobs.stop(config.SHUTDOWN_TIMEOUT_MS),
      ]);
      process.off('SIGHUP', onHup);
      await metricsServer.close();
      // Counts of cached validations and locally admitted requests reach their stores before the channels close.
      await Promise.all([tally.stop(), limits.close()]);
      clients.close();
      artifacts.close?.();
      redis.disconnect();
      await bus.close();
      access.flush();
      await tracing?.shutdown().catch((err: unknown) => log.warn({ err }, 'could not send the last spans'));
    })());
  return { port, url, metricsPort: metricsServer.port, reloadTls, stop };
}

if (require.main === module) {
  if (cluster.isWorker) {
    // The primary turns SIGINT (and SIGTERM) into one SIGTERM per worker: a second signal would cut the drain short.
    process.on('SIGINT', () => undefined);
    runMain('gateway', () => start(), undefined, ['SIGTERM']);
  } else {
    let config: GatewayConfig;
    try {
      config = loadConfig(gatewaySchema, process.env);
      checkTransportConfig(config);
    } catch (err) {
      console.error(`gateway failed to start: ${(err as Error).message}`);
      process.exit(1);
    }
    if (config.GATEWAY_WORKERS === 1) runMain('gateway', () => start());
    else
      runPrimary({
        workers: config.GATEWAY_WORKERS,
        host: config.HOST,
        metricsPort: config.METRICS_PORT,
        shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
        log: createLogger('gateway', config.LOG_LEVEL),
      }).catch((err: Error) => {
        console.error(`gateway failed to start: ${err.message}`);
        process.exit(1);
      });
  }
}

/** Connects to Redis and waits for it at most `waitMs` (a failed connection is retried by ioredis, not here). */
async function redisReady(redis: Redis, waitMs: number): Promise<void> {
  const connecting = redis.connect().catch(() => undefined);
  if (waitMs <= 0) return;
  let timer: NodeJS.Timeout | undefined;
  const ready = new Promise<void>((resolve) => redis.once('ready', resolve));
  await Promise.race([
    connecting.then(() => ready),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, waitMs);
    }),
  ]);
  clearTimeout(timer);
}
