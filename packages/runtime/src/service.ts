import type { Connection } from 'mongoose';
import { commonSchema, loadConfig, type ConfigOf, type Schema, int, str } from './config';
import { createLogger, type Logger } from './logger';
import { connectMongo, syncIndexes } from './mongo';
import { EventBus } from './bus';
import { Outbox } from './outbox';
import { GrpcServer } from './grpc-server';
import { systemClock, type Clock } from './clock';

/** Settings every gRPC service has on top of the common ones. */
export const serviceSchema = (name: string, defaultPort: number) => ({
  ...commonSchema,
  GRPC_HOST: str('Address the gRPC server binds to', { default: '127.0.0.1' }),
  GRPC_PORT: int('gRPC port (0 = any free port)', { default: defaultPort, min: 0, max: 65535 }),
  MONGO_DB: str('Database name of this service (never shared)', { default: `licensing_${name}` }),
  OUTBOX_INTERVAL_MS: int('How often the outbox relay retries unpublished events', { default: 1000, min: 50 }),
});

type ServiceConfig = ConfigOf<ReturnType<typeof serviceSchema>>;

export interface ServiceContext<C> {
  config: C;
  log: Logger;
  db: Connection;
  bus: EventBus;
  outbox: Outbox;
  grpc: GrpcServer;
  clock: Clock;
}

export interface ServiceRecipe<S extends Schema> {
  name: string;
  schema: S;
  /** Declares models, registers handlers and subscriptions. May return its own stop hook. */
  setup(ctx: ServiceContext<ConfigOf<S>>): Promise<(() => Promise<void>) | void>;
}

export interface RunningService<C> {
  port: number;
  ctx: ServiceContext<C>;
  stop(): Promise<void>;
}

export interface StartOptions<C> {
  config?: Partial<C>;
  env?: Record<string, string | undefined>;
  clock?: Clock;
}

/**
 * The composition root every service shares: config → logger → MongoDB → NATS
 * → outbox → gRPC handlers → serve. The service is NOT_SERVING until all of it
 * is up, and stops in the reverse order under a hard time limit.
 */
export async function startService<S extends Schema>(recipe: ServiceRecipe<S>, opts: StartOptions<ConfigOf<S>> = {}): Promise<RunningService<ConfigOf<S>>> {
  const config = loadConfig(recipe.schema, opts.env ?? process.env, opts.config ?? {}) as ConfigOf<S> & ServiceConfig;
  const log = createLogger(`${recipe.name}-service`, config.LOG_LEVEL);
  const db = await connectMongo(config.MONGO_URL, config.MONGO_DB);
  let bus: EventBus;
  try {
    bus = await EventBus.connect({ url: config.NATS_URL, subjectPrefix: config.EVENTS_SUBJECT_PREFIX, stream: config.EVENTS_STREAM, name: `${recipe.name}-service`, log });
  } catch (err) {
    await db.close();
    throw err;
  }
  const outbox = new Outbox(bus, log, config.OUTBOX_INTERVAL_MS);
  const grpc = new GrpcServer({ internalToken: config.INTERNAL_TOKEN, log, ready: () => db.readyState === 1 });
  const ctx: ServiceContext<ConfigOf<S>> = { config, log, db, bus, outbox, grpc, clock: opts.clock ?? systemClock };

  const stopHook = await recipe.setup(ctx);
  await syncIndexes(db);
  outbox.start();
  const port = await grpc.listen(config.GRPC_HOST, config.GRPC_PORT);
  grpc.health.setServing(true);
  log.info({ port }, `${recipe.name} service listening`);

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      log.info('shutting down');
      await grpc.shutdown(config.SHUTDOWN_TIMEOUT_MS);
      if (stopHook) await stopHook();
      await outbox.stop();
      await bus.close();
      await db.close();
      log.info('stopped');
    })());
  return { port, ctx, stop };
}

/**
 * Runs a service as a process: starts it, and on SIGTERM or SIGINT stops it
 * gracefully; a second signal or the hard limit exits at once.
 */
export function runMain(name: string, start: () => Promise<{ stop(): Promise<void> }>, hardLimitMs = Number(process.env.SHUTDOWN_TIMEOUT_MS ?? 10000) + 5000): void {
  start()
    .then((running) => {
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
      process.on('SIGTERM', () => onSignal('SIGTERM'));
      process.on('SIGINT', () => onSignal('SIGINT'));
    })
    .catch((err: Error) => {
      console.error(`${name} failed to start: ${err.message}`);
      process.exit(1);
    });
}
