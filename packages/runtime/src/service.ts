import type { Connection } from 'mongoose';
import { commonSchema, loadConfig, type ConfigOf, type Schema, int, str } from './core/config';
import { createLogger, type Logger } from './observability/logger';
import { connectMongo, syncIndexes } from './store/mongo';
import { StoreWatchdog } from './store/store-watchdog';
import { addPostgresIndexes, unusedByFerretdb, usePostgresPages, type PostgresPages } from './store/postgres';
import { QueryShapeLog } from './store/query-shapes';
import { ttlSweep } from './store/ttl-sweep';
import type { PeriodicTask } from './tasks/periodic';
import { EventBus, natsOptions } from './events/bus';
import { Outbox, SETTLE_MS } from './events/outbox';
import { GrpcServer } from './grpc/server';
import { internalTls } from './grpc/internal-tls';
import { systemClock, type Clock } from './core/clock';
import { Metrics, serveMetrics } from './observability/metrics';
import { startTracing, type Tracing } from './observability/tracing';
import { untilConnected } from './tasks/retry';
import { runMigrations, stampSchemaVersion, type Migration } from './store/migrations';
import type { ServiceJob } from './service-jobs';

/** Settings every gRPC service has on top of the common ones. */
export const serviceSchema = (name: string, defaultPort: number) => ({
  ...commonSchema,
  GRPC_HOST: str('Address the gRPC server binds to', { default: '127.0.0.1' }),
  GRPC_PORT: int('gRPC port (0 = any free port)', { default: defaultPort, min: 0, max: 65535 }),
  METRICS_PORT: int('Port of the Prometheus /metrics listener, on GRPC_HOST (0 = any free port)', {
    default: defaultPort + 1000,
    min: 0,
    max: 65535,
  }),
  INTERNAL_CALLERS: str(
    "Who may call this service: caller=sha256:<hex digest of the caller's INTERNAL_TOKEN>, comma- or newline-separated (deploy/make-secrets.sh writes them; a caller listed twice, with its old and its new token, while that token is rotated); each caller still gets only the methods the service allows it",
    { secret: true },
  ),
  MONGO_DB: str('Database name of this service (never shared)', { default: `licensing_${name}` }),
  FERRETDB_POSTGRESQL_URL: str(
    'Only when MONGO_URL is FerretDB over PostgreSQL: the PostgreSQL URL FerretDB uses, so the service adds the GIN indexes FerretDB needs (empty: nothing to add, e.g. with MongoDB)',
    { default: '', secret: true },
  ),
  OUTBOX_INTERVAL_MS: int(
    'How often the outbox relay retries unpublished events while some are pending (events normally go out right after their write)',
    { default: 1000, min: 50 },
  ),
  QUERY_SHAPES_DIR: str(
    'Test runs only: record every query shape and declared index here, for the index coverage check of npm test',
    { default: '' },
  ),
  OUTBOX_IDLE_INTERVAL_MS: int(
    'How often the relay scans for unpublished events when the last scan found none of its own to publish and no publish failed since (a failed publish or NATS coming back wakes it at once)',
    { default: 10_000, min: 50 },
  ),
  TTL_SWEEP_INTERVAL_MS: int(
    'Over FerretDB (FERRETDB_POSTGRESQL_URL set), which ignores TTL indexes: how often the service deletes a batch of the documents its TTL indexes let expire (MongoDB does this itself)',
    { default: 60_000, min: 50 },
  ),
});

type ServiceConfig = ConfigOf<ReturnType<typeof serviceSchema>>;

export interface ServiceContext<C> {
  config: C;
  log: Logger;
  db: Connection;
  bus: EventBus;
  outbox: Outbox;
  grpc: GrpcServer;
  metrics: Metrics;
  clock: Clock;
  /** OpenTelemetry tracing, when the OTEL_* variables turn it on (observability/tracing.ts). */
  tracing?: Tracing;
  /**
   * Aborted the moment a graceful stop begins, before the gRPC calls in flight are waited for: background
   * work that must not start anything new from then on (the mail sender) stops taking work at once,
   * rather than when the stop hook runs.
   */
  stopping: AbortSignal;
}

export interface ServiceRecipe<S extends Schema> {
  name: string;
  schema: S;
  /** Declares models, registers handlers and subscriptions. May return its own stop hook. */
  setup(ctx: ServiceContext<ConfigOf<S>>): Promise<(() => Promise<void>) | void>;
  /** This service's own migrations, in order, after the schema_version stamp every service runs (store/migrations.ts). */
  migrations?: Migration[];
  /** One-off jobs run outside the service with its settings (service-jobs.ts), e.g. `reseal`. */
  jobs?: Record<string, ServiceJob<ConfigOf<S>>>;
}

/** Every migration a service applies, in order: the shared stamp first, then its own. */
export const migrationsOf = (recipe: { migrations?: Migration[] }): Migration[] => [
  stampSchemaVersion,
  ...(recipe.migrations ?? []),
];

export interface RunningService<C> {
  port: number;
  metricsPort: number;
  ctx: ServiceContext<C>;
  stop(): Promise<void>;
}

export interface StartOptions<C> {
  config?: Partial<C>;
  env?: Record<string, string | undefined>;
  clock?: Clock;
  /** Called once the gRPC port is bound, before the stores are reached (health answers NOT_SERVING meanwhile). */
  onListening?(port: number): void;
  /** Gives up waiting for the stores: start() rejects and releases its ports. */
  signal?: AbortSignal;
}

/**
 * The composition root every service shares: config → logger → gRPC port
 * (health NOT_SERVING) → MongoDB → NATS → handlers → indexes → outbox →
 * SERVING. Stores that are not there yet are waited for, not fatal, so an
 * orchestrator sees a live process that is not ready. Stops in reverse order
 * under a hard time limit.
 */
export async function startService<S extends Schema>(
  recipe: ServiceRecipe<S>,
  opts: StartOptions<ConfigOf<S>> = {},
): Promise<RunningService<ConfigOf<S>>> {
  const env = opts.env ?? process.env;
  const config = loadConfig(recipe.schema, env, opts.config ?? {}) as ConfigOf<S> & ServiceConfig;
  const log = createLogger(`${recipe.name}-service`, config.LOG_LEVEL);
  const tracing = startTracing(`${recipe.name}-service`, env);
  const metrics = new Metrics(`${recipe.name}-service`);
  let db: Connection | undefined;
  const tls = internalTls(config);
  if (tls) metrics.certificateExpiry('grpc', tls.cert);
  const grpc = new GrpcServer({
    callers: config.INTERNAL_CALLERS,
    tls,
    log,
    metrics,
    ready: () => db?.readyState === 1,
    tracing,
  });
  const port = await grpc.listen(config.GRPC_HOST, config.GRPC_PORT);
  opts.onListening?.(port);
  const metricsServer = await serveMetrics(metrics, config.GRPC_HOST, config.METRICS_PORT);

  let bus: EventBus | undefined;
  let ctx: ServiceContext<ConfigOf<S>>;
  let stopHook: (() => Promise<void>) | void;
  let pages: PostgresPages | undefined;
  let watchdog: StoreWatchdog | undefined;
  let sweep: PeriodicTask | undefined;
  const stopSignal = new AbortController();
  try {
    const waiting = { signal: opts.signal, meanwhile: 'health says NOT_SERVING' };
    db = await untilConnected('MongoDB', log, () => connectMongo(config.MONGO_URL, config.MONGO_DB), waiting);
    const shapes = config.QUERY_SHAPES_DIR ? new QueryShapeLog(config.QUERY_SHAPES_DIR) : undefined;
    if (shapes) shapes.watch(db);
    // The store is brought to this release's shape before anything reads it (docs/operations.md, "Upgrades").
    await runMigrations(db, migrationsOf(recipe), {
      log,
      ferretdbPostgresUrl: config.FERRETDB_POSTGRESQL_URL,
      signal: opts.signal,
    });
    bus = await untilConnected(
      'NATS',
      log,
      () =>
        EventBus.connect({
          ...natsOptions(config),
          subjectPrefix: config.EVENTS_SUBJECT_PREFIX,
          stream: config.EVENTS_STREAM,
          name: `${recipe.name}-service`,
          log,
          metrics,
          tracing,
        }),
      waiting,
    );
    const outbox = new Outbox(bus, log, config.OUTBOX_INTERVAL_MS, SETTLE_MS, config.OUTBOX_IDLE_INTERVAL_MS);
    metrics.gauge('licensing_outbox_backlog', () => outbox.backlog());
    metrics.gauge('licensing_outbox_oldest_age_seconds', () => outbox.oldestPendingAgeS());
    metrics.gauge('licensing_nats_connected', async () => (bus?.connected ? 1 : 0));
    ctx = {
      config,
      log,
      db,
      bus,
      outbox,
      grpc,
      metrics,
      clock: opts.clock ?? systemClock,
      tracing,
      stopping: stopSignal.signal,
    };
    stopHook = await recipe.setup(ctx);
    await syncIndexes(db, config.FERRETDB_POSTGRESQL_URL ? unusedByFerretdb : undefined);
    shapes?.declare(db);
    if (config.FERRETDB_POSTGRESQL_URL) {
      await addPostgresIndexes(db, config.FERRETDB_POSTGRESQL_URL, log);
      pages = usePostgresPages(db, config.FERRETDB_POSTGRESQL_URL, log);
      sweep = ttlSweep(db, ctx.clock, log, config.TTL_SWEEP_INTERVAL_MS);
      sweep.start();
    }
    outbox.start();
    watchdog = new StoreWatchdog(db, config.MONGO_URL, log, metrics);
    watchdog.start();
  } catch (err) {
    stopSignal.abort();
    await sweep?.stop();
    grpc.server.forceShutdown();
    await metricsServer.close();
    await bus?.close();
    await pages?.close();
    await db?.close();
    await tracing?.shutdown().catch(() => undefined);
    throw err;
  }
  grpc.health.setServing(true);
  log.info({ port, metrics_port: metricsServer.port }, `${recipe.name} service serving`);

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      log.info('shutting down');
      stopSignal.abort();
      // NOT_SERVING first, then no new calls; in-flight ones finish (bounded).
      await grpc.shutdown(config.SHUTDOWN_TIMEOUT_MS);
      if (stopHook) await stopHook();
      await sweep?.stop();
      // Last outbox pass: events written by the calls that just finished go out now.
      await ctx.outbox.stop();
      watchdog?.stop();
      await ctx.bus.close();
      await pages?.close();
      await ctx.db.close();
      await metricsServer.close();
      // The spans of the last calls go out before the process ends.
      await tracing?.shutdown().catch((err: unknown) => log.warn({ err }, 'could not send the last spans'));
      log.info('stopped');
    })());
  return { port, metricsPort: metricsServer.port, ctx, stop };
}

/**
 * Runs a service as a process: starts it, and on SIGTERM or SIGINT stops it
 * gracefully; a second signal or the hard limit exits at once.
 */
export function runMain(
  name: string,
  start: () => Promise<{ stop(): Promise<void> }>,
  hardLimitMs = Number(process.env.SHUTDOWN_TIMEOUT_MS ?? 10000) + 5000,
  /** The signals that stop it (a gateway worker leaves SIGINT to its primary). */
  signals: readonly ('SIGTERM' | 'SIGINT')[] = ['SIGTERM', 'SIGINT'],
): void {
  // A signal while still starting (e.g. waiting for MongoDB) has nothing in flight to finish.
  const whileStarting = () => process.exit(0);
  for (const s of signals) process.once(s, whileStarting);
  start()
    .then((running) => {
      for (const s of signals) process.off(s, whileStarting);
      let signalled = false;
      const onSignal = (signal: string) => {
        if (signalled) process.exit(1);
        signalled = true;
        setTimeout(() => {
          console.error(`${name}: shutdown took longer than ${hardLimitMs} ms, exiting`);
          process.exit(1);
        }, hardLimitMs).unref();
        running.stop().then(
          () => process.exit(0),
          (err) => {
            console.error(`${name}: error during shutdown (${signal})`, err);
            process.exit(1);
          },
        );
      };
      for (const s of signals) process.on(s, () => onSignal(s));
    })
    .catch((err: Error) => {
      console.error(`${name} failed to start: ${err.message}`);
      process.exit(1);
    });
}
