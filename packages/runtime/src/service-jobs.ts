import type { Connection } from 'mongoose';
import { loadConfig, type ConfigOf, type Schema } from './core/config';
import { systemClock, type Clock } from './core/clock';
import { createLogger, type Logger } from './observability/logger';
import { connectMongo } from './store/mongo';
import { appliedMigrations, runMigrations } from './store/migrations';
import { migrationsOf, type ServiceRecipe } from './service';

// A service's one-off jobs, run outside the service with its own settings (the same environment,
// MONGO_URL_FILE and secrets included): `migrate` (the migrations a start would apply) and the jobs
// its recipe declares, such as `reseal`. The operator CLI runs them (`npm run admin -- migrate
// --service product`), and so does the Kubernetes Job deploy/k8s/tools/migrate-job.yaml. Each job is
// idempotent and safe while the service serves.

export interface JobContext<C> {
  config: C;
  log: Logger;
  db: Connection;
  clock: Clock;
  /** A progress line (the CLI prints it on stderr). */
  progress(line: Record<string, unknown>): void;
  /** The job's own flags (`--email` of `reset-mfa`), as the CLI checked them. */
  args: Record<string, string>;
}

export type ServiceJob<C> = (ctx: JobContext<C>) => Promise<Record<string, unknown>>;

export interface JobOptions {
  env?: Record<string, string | undefined>;
  progress?: (line: Record<string, unknown>) => void;
  clock?: Clock;
  args?: Record<string, string>;
}

/** The jobs a service can run: `migrate`, `migrations` (what is applied) and its recipe's own. */
export function jobNames(recipe: ServiceRecipe<Schema>): string[] {
  return ['migrate', 'migrations', ...Object.keys(recipe.jobs ?? {})];
}

/** Runs one job of a service with the settings in `env`; answers its summary. */
export async function runServiceJob<S extends Schema>(
  recipe: ServiceRecipe<S>,
  job: string,
  opts: JobOptions = {},
): Promise<Record<string, unknown>> {
  const own = recipe.jobs?.[job];
  if (!['migrate', 'migrations'].includes(job) && !own)
    throw new Error(`the ${recipe.name} service has no job "${job}" (it has ${jobNames(recipe as never).join(', ')})`);
  const env = opts.env ?? process.env;
  // A job calls no one and is called by no one: the service's callers are not needed.
  const config = loadConfig(recipe.schema, env, {
    INTERNAL_CALLERS: env.INTERNAL_CALLERS || 'unused',
  } as never) as ConfigOf<S> & {
    MONGO_URL: string;
    MONGO_DB: string;
    FERRETDB_POSTGRESQL_URL: string;
    LOG_LEVEL: string;
  };
  const log = createLogger(`${recipe.name}-${job}`, (env.LOG_LEVEL ?? 'warn') as never);
  const progress = opts.progress ?? (() => undefined);
  const db = await connectMongo(config.MONGO_URL, config.MONGO_DB);
  try {
    const migrations = migrationsOf(recipe);
    if (job === 'migrations') {
      const applied = await appliedMigrations(db);
      return { service: recipe.name, migrations: migrations.map((m) => ({ id: m.id, applied: applied.has(m.id) })) };
    }
    if (job === 'migrate') {
      const report = await runMigrations(db, migrations, {
        log,
        ferretdbPostgresUrl: config.FERRETDB_POSTGRESQL_URL,
        onProgress: progress,
      });
      return { service: recipe.name, applied: report.applied, recorded: report.recorded };
    }
    return {
      service: recipe.name,
      job,
      ...(await own!({ config, log, db, clock: opts.clock ?? systemClock, progress, args: opts.args ?? {} })),
    };
  } finally {
    await db.close();
  }
}
