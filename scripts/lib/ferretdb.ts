import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, copyFileSync, writeFileSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { portAnswers } from './net';
import { untilListening } from './tool-process';
import { repoRoot } from './paths';

// FerretDB 1.x is the MongoDB-compatible store for development and tests. It is
// built from the Go module proxy with the pinned module in scripts/ferretdb:
// `go install ...@v1.24.2` cannot be used here (the proxy refuses the version
// list it asks for), and the module's source lacks the version file its own
// build task generates, so the build vendors the module and writes that file.
export const FERRETDB_VERSION = 'v1.24.2';

const cacheDir = join(
  process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'),
  'licensing',
  `ferretdb-${FERRETDB_VERSION}`,
);
const cachedBinary = join(cacheDir, 'ferretdb');

function onPath(): string | undefined {
  try {
    const found = execFileSync('sh', ['-c', 'command -v ferretdb'], { encoding: 'utf8' }).trim();
    if (!found) return undefined;
    const version = execFileSync(found, ['--version'], { encoding: 'utf8' });
    return version.includes(FERRETDB_VERSION) ? found : undefined;
  } catch {
    return undefined;
  }
}

export function ferretdbBinary(log: (line: string) => void = console.log): string {
  const existing = onPath() ?? (existsSync(cachedBinary) ? cachedBinary : undefined);
  if (existing) return existing;
  try {
    execFileSync('go', ['version'], { stdio: 'ignore' });
  } catch {
    throw new Error(
      'FerretDB is needed (nothing answers at MONGO_URL) and Go is not installed to build it: install Go >= 1.22, or point MONGO_URL at a running MongoDB.',
    );
  }
  log(`Building FerretDB ${FERRETDB_VERSION} with Go (first run only, about a minute)...`);
  const work = join(cacheDir, 'build');
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  for (const f of ['go.mod', 'go.sum', 'tools.go'])
    copyFileSync(join(repoRoot(), 'scripts', 'ferretdb', f), join(work, f));
  const env = { ...process.env, GOTOOLCHAIN: 'local' };
  execFileSync('go', ['mod', 'vendor'], { cwd: work, env, stdio: ['ignore', 'ignore', 'inherit'] });
  writeFileSync(join(work, 'vendor/github.com/FerretDB/FerretDB/build/version/version.txt'), `${FERRETDB_VERSION}\n`);
  execFileSync('go', ['build', '-mod=vendor', '-o', cachedBinary, 'github.com/FerretDB/FerretDB/cmd/ferretdb'], {
    cwd: work,
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  rmSync(work, { recursive: true, force: true });
  log(`FerretDB built at ${cachedBinary}`);
  return cachedBinary;
}

export interface FerretDB {
  url: string;
  /** The PostgreSQL database behind it, or undefined over SQLite. */
  postgres?: PostgresDatabase;
  process: ChildProcess;
  stop(): Promise<void>;
}

/**
 * The PostgreSQL database behind FerretDB, when a PostgreSQL server answers
 * (FERRETDB_POSTGRES_ADMIN_URL, default postgres://postgres@127.0.0.1:5432/postgres):
 * created if missing (or afresh), and set to plan every statement with its
 * parameters, which lets the GIN indexes the services add (runtime
 * src/postgres/indexes.ts) serve FerretDB's filters. Null when no server answers.
 */
export interface PostgresDatabase {
  /** For FerretDB's --postgresql-url and the services' FERRETDB_POSTGRESQL_URL. */
  url: string;
  name: string;
  drop(): Promise<void>;
}

export const POSTGRES_ADMIN_URL =
  process.env.FERRETDB_POSTGRES_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export async function preparePostgres(name: string, opts: { fresh: boolean }): Promise<PostgresDatabase | null> {
  const admin = new URL(POSTGRES_ADMIN_URL);
  if (!(await portAnswers(admin.hostname, Number(admin.port || 5432), 1000))) return null;
  const client = new Client({ connectionString: POSTGRES_ADMIN_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
  } catch {
    return null; // something answers, but not a PostgreSQL we may use
  }
  const db = `"${name.replace(/"/g, '""')}"`;
  try {
    if (opts.fresh) await client.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!exists.rowCount) await client.query(`CREATE DATABASE ${db}`);
    await client.query(`ALTER DATABASE ${db} SET plan_cache_mode = force_custom_plan`);
  } finally {
    await client.end();
  }
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async drop() {
      const c = new Client({ connectionString: POSTGRES_ADMIN_URL });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

/** What the fallback store can do, printed when it is chosen (docs/benchmarks.md has the measurements). */
export const SQLITE_LIMITS =
  'FerretDB over SQLite scans every table on every query: fine for a few thousand licences, slow beyond (3,500 licences: validation p99 0.7 s). Start PostgreSQL on 127.0.0.1:5432 (or set FERRETDB_POSTGRES_ADMIN_URL) for FerretDB over PostgreSQL, or point MONGO_URL at MongoDB.';

/**
 * Starts FerretDB listening on loopback `port`: over PostgreSQL when `postgres`
 * is given, else over SQLite with its data under `dataDir`.
 */
export async function startFerretDB(opts: {
  port: number;
  dataDir: string;
  postgres?: PostgresDatabase | null;
  log?: (line: string) => void;
}): Promise<FerretDB> {
  const bin = ferretdbBinary(opts.log);
  mkdirSync(opts.dataDir, { recursive: true });
  const backend = opts.postgres
    ? ['--handler=postgresql', `--postgresql-url=${opts.postgres.url}`]
    : ['--handler=sqlite', `--sqlite-url=file:${opts.dataDir}/`];
  const child = spawn(
    bin,
    [
      ...backend,
      `--listen-addr=127.0.0.1:${opts.port}`,
      `--state-dir=${opts.dataDir}`,
      '--debug-addr=-',
      '--telemetry=disable',
      '--log-level=warn',
    ],
    // Own process group, so Ctrl-C does not stop the store before the services close their connections.
    { stdio: ['ignore', 'ignore', 'pipe'], detached: true },
  );
  const stop = await untilListening(child, 'FerretDB', opts.port);
  return {
    url: `mongodb://127.0.0.1:${opts.port}`,
    postgres: opts.postgres ?? undefined,
    process: child,
    stop,
  };
}
