import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, copyFileSync, writeFileSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { waitForPort } from './net';
import { repoRoot } from './paths';

// FerretDB 1.x is the MongoDB-compatible store for development and tests. It is
// built from the Go module proxy with the pinned module in scripts/ferretdb:
// `go install ...@v1.24.2` cannot be used here (the proxy refuses the version
// list it asks for), and the module's source lacks the version file its own
// build task generates, so the build vendors the module and writes that file.
export const FERRETDB_VERSION = 'v1.24.2';

const cacheDir = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'licensing', `ferretdb-${FERRETDB_VERSION}`);
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
    throw new Error('FerretDB is needed (nothing answers at MONGO_URL) and Go is not installed to build it: install Go >= 1.22, or point MONGO_URL at a running MongoDB.');
  }
  log(`Building FerretDB ${FERRETDB_VERSION} with Go (first run only, about a minute)...`);
  const work = join(cacheDir, 'build');
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  for (const f of ['go.mod', 'go.sum', 'tools.go']) copyFileSync(join(repoRoot(), 'scripts', 'ferretdb', f), join(work, f));
  const env = { ...process.env, GOTOOLCHAIN: 'local' };
  execFileSync('go', ['mod', 'vendor'], { cwd: work, env, stdio: ['ignore', 'ignore', 'inherit'] });
  writeFileSync(join(work, 'vendor/github.com/FerretDB/FerretDB/build/version/version.txt'), `${FERRETDB_VERSION}\n`);
  execFileSync('go', ['build', '-mod=vendor', '-o', cachedBinary, 'github.com/FerretDB/FerretDB/cmd/ferretdb'], { cwd: work, env, stdio: ['ignore', 'ignore', 'inherit'] });
  rmSync(work, { recursive: true, force: true });
  log(`FerretDB built at ${cachedBinary}`);
  return cachedBinary;
}

export interface FerretDB {
  url: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** Starts FerretDB over SQLite with its data under `dataDir`, listening on loopback `port`. */
export async function startFerretDB(opts: { port: number; dataDir: string; log?: (line: string) => void }): Promise<FerretDB> {
  const bin = ferretdbBinary(opts.log);
  mkdirSync(opts.dataDir, { recursive: true });
  const child = spawn(
    bin,
    [
      '--handler=sqlite',
      `--sqlite-url=file:${opts.dataDir}/`,
      `--listen-addr=127.0.0.1:${opts.port}`,
      `--state-dir=${opts.dataDir}`,
      '--debug-addr=-',
      '--telemetry=disable',
      '--log-level=warn',
    ],
    // Own process group, so Ctrl-C does not stop the store before the services close their connections.
    { stdio: ['ignore', 'ignore', 'pipe'], detached: true },
  );
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`FerretDB exited with code ${code}: ${stderr}`))));
  await Promise.race([waitForPort('127.0.0.1', opts.port, 20_000), exited]);
  exited.catch(() => undefined);
  return {
    url: `mongodb://127.0.0.1:${opts.port}`,
    process: child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 5000).unref();
      }),
  };
}
