// Entry point of `npm start`, `npm test`, `npm run test:unit`, `npm run bench` and `npm run admin`,
// and of each workspace's `npm test -w <folder>` (test:folder).
// Plain Node with no dependencies, so it works on a fresh clone: it installs
// what is missing (npm ci), builds when sources changed, then does the job.
import { spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync, mkdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tmpdir } from 'node:os';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const [command, ...args] = process.argv.slice(2);
const quiet = command === 'admin';

function run(cmd, argv, opts = {}) {
  const r = spawnSync(cmd, argv, { cwd: root, stdio: 'inherit', ...opts });
  if (r.error) throw r.error;
  return r.status ?? 1;
}

/** How long each step of this command took, printed at the end of `npm test` (where a slow run spent its time). */
const phases = [];
function timed(label, work) {
  const started = Date.now();
  try {
    return work();
  } finally {
    phases.push(`${label} ${Math.round((Date.now() - started) / 1000)} s`);
  }
}

function must(cmd, argv, what, opts = {}) {
  const code = run(cmd, argv, opts);
  if (code !== 0) {
    console.error(`${what} failed (exit ${code})`);
    process.exit(code);
  }
}

function newest(path) {
  let t = 0;
  if (!existsSync(path)) return t;
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  for (const name of readdirSync(path)) {
    // A change to tests alone needs no new build: jest compiles what it runs.
    if (name === 'node_modules' || name === 'dist' || name === 'test') continue;
    t = Math.max(t, newest(join(path, name)));
  }
  return t;
}

// 1. Dependencies: npm ci when node_modules is missing or older than the lockfile.
const installed = join(root, 'node_modules', '.package-lock.json');
if (!existsSync(installed) || statSync(installed).mtimeMs < statSync(join(root, 'package-lock.json')).mtimeMs) {
  if (!quiet) console.log('Installing dependencies (npm ci)...');
  // npm 11 sometimes writes a lockfile without other platforms' optional binaries and then
  // refuses it in `npm ci` (npm/cli#8669); `npm install` keeps the locked versions and fills them in.
  timed('install', () => {
    if (
      run('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { stdio: ['ignore', 'inherit', 'ignore'] }) !==
      0
    ) {
      if (!quiet) console.log('npm ci refused the lockfile; installing the locked versions with npm install...');
      must('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], 'npm install');
    }
  });
}

// 2. Build (swc, about a second) when any source is newer than the last build. Not for the unit
// tier alone: jest compiles the TypeScript sources it imports, and nothing there runs dist/.
const stamp = join(root, 'node_modules', '.cache', 'licensing-build-stamp');
const sources = ['proto', 'packages', 'examples', 'services', 'gateway', 'web', 'scripts', 'components.json'].map((d) =>
  newest(join(root, d)),
);
if (command !== 'test:unit' && (!existsSync(stamp) || Math.max(...sources) > statSync(stamp).mtimeMs)) {
  timed('build', () => must(process.execPath, [join(root, 'scripts', 'build.mjs')], 'build'));
  mkdirSync(dirname(stamp), { recursive: true });
  writeFileSync(stamp, new Date().toISOString());
}

// The dashboard's browser tests drive Debian's Chromium (never a downloaded browser).
/**
 * The app-side libraries in Go, Python and Java are tested with their own tools: Go is the machine's
 * (it builds FerretDB too); Python's cryptography and a JDK come from Debian when missing (PyPI and
 * Maven Central are out of reach).
 */
function ensureSdkToolchains() {
  const missing = [];
  if (run('python3', ['-c', 'import cryptography'], { stdio: 'ignore' }) !== 0) missing.push('python3-cryptography');
  if (run('sh', ['-c', 'command -v javac'], { stdio: 'ignore' }) !== 0) missing.push('openjdk-17-jdk-headless');
  if (!missing.length) return;
  const instruction = `The SDK tests need ${missing.join(' and ')}: run "apt-get install -y ${missing.join(' ')}" (Debian).`;
  if (process.getuid?.() !== 0 || run('sh', ['-c', 'command -v apt-get'], { stdio: 'ignore' }) !== 0) {
    console.error(instruction);
    process.exit(1);
  }
  console.log(`Installing ${missing.join(' and ')} for the SDK tests...`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  if (
    run('apt-get', ['update', '-qq'], { env }) !== 0 ||
    run('apt-get', ['install', '-y', '-qq', ...missing], { env, stdio: ['ignore', 'ignore', 'inherit'] }) !== 0
  ) {
    console.error(`Installing failed. ${instruction}`);
    process.exit(1);
  }
}

/** Each app-side library's own tests, with its language's own tool (sdks/<language>/README.md). */
function sdkTests() {
  const sdks = join(root, 'sdks');
  must('go', ['vet', './...'], 'Go SDK vet (cd sdks/go && go vet ./...)', { cwd: join(sdks, 'go') });
  must('go', ['test', './...'], 'Go SDK tests (cd sdks/go && go test ./...)', { cwd: join(sdks, 'go') });
  must('python3', ['-m', 'unittest', 'discover', '-q', '-s', 'tests', '-t', '.'], 'Python SDK tests', {
    cwd: join(sdks, 'python'),
  });
  must('bash', [join(sdks, 'java', 'test.sh')], 'Java SDK tests (bash sdks/java/test.sh)');
  // The minimal app of each language still builds (and Python's still loads) against its library.
  const examples = join(root, 'examples');
  must('go', ['build', '-o', '/dev/null', '.'], 'examples/go-app build', { cwd: join(examples, 'go-app') });
  must('bash', [join(examples, 'java-app', 'run.sh'), '--compile-only'], 'examples/java-app build');
  must('python3', [join(examples, 'python-app', 'app.py'), '--help'], 'examples/python-app', { stdio: 'ignore' });
}

function ensureChromium() {
  const path = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
  if (existsSync(path)) return;
  const instruction =
    'Chromium is needed for the browser tests: run "apt-get install -y chromium" (Debian) or set CHROMIUM_PATH.';
  if (process.getuid?.() !== 0 || run('sh', ['-c', 'command -v apt-get'], { stdio: 'ignore' }) !== 0) {
    console.error(instruction);
    process.exit(1);
  }
  console.log('Installing Chromium for the browser tests (apt-get install chromium)...');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  if (
    run('apt-get', ['update', '-qq'], { env }) !== 0 ||
    run('apt-get', ['install', '-y', '-qq', 'chromium'], { env, stdio: ['ignore', 'ignore', 'inherit'] }) !== 0 ||
    !existsSync(path)
  ) {
    console.error(`Installing Chromium failed. ${instruction}`);
    process.exit(1);
  }
}

// The test tiers run several stacks at once over FerretDB on the local PostgreSQL, each service with a
// pool: more connections than PostgreSQL's default 100. Raised once on a machine where we may (root, a
// Debian cluster), as an operator would; elsewhere a note says how.
const PG_CONNECTIONS = 400;
function ensurePostgresConnections() {
  const psql = (sql) =>
    spawnSync('psql', ['-h', '127.0.0.1', '-U', 'postgres', '-tAc', sql], { encoding: 'utf8', timeout: 10_000 });
  const shown = psql('SHOW max_connections');
  if (shown.status !== 0) return; // no psql or no local PostgreSQL: FerretDB's own store is used
  if (Number(shown.stdout.trim()) >= PG_CONNECTIONS) return;
  const cluster = spawnSync('sh', ['-c', 'pg_lsclusters -h | head -1'], { encoding: 'utf8' })
    .stdout.trim()
    .split(/\s+/);
  if (
    process.getuid?.() !== 0 ||
    cluster.length < 2 ||
    psql(`ALTER SYSTEM SET max_connections = ${PG_CONNECTIONS}`).status !== 0
  ) {
    console.warn(
      `PostgreSQL allows ${shown.stdout.trim()} connections; the tiers need ${PG_CONNECTIONS}: ALTER SYSTEM SET max_connections = ${PG_CONNECTIONS}, then restart it.`,
    );
    return;
  }
  console.log(
    `Raising PostgreSQL's max_connections to ${PG_CONNECTIONS} (cluster ${cluster[0]}/${cluster[1]}, restarted)...`,
  );
  run('pg_ctlcluster', [cluster[0], cluster[1], 'restart']);
}

/** A loopback port nothing listens on (taken from the system, then let go): a connection to it is refused at once. */
async function closedPort() {
  const server = createServer();
  await new Promise((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * The environment the unit tier runs in: NATS, Redis and the store point at a closed port and the
 * test servers' addresses are unset, so a unit test that reaches for a server fails instead of
 * quietly using the machine's (jest's `unit` project has no global set-up: nothing is started).
 */
async function withoutServers() {
  const nowhere = await closedPort();
  const env = {
    ...process.env,
    NATS_URL: `nats://127.0.0.1:${nowhere}`,
    REDIS_URL: `redis://127.0.0.1:${nowhere}`,
    MONGO_URL: `mongodb://127.0.0.1:${nowhere}`,
  };
  for (const name of ['TEST_MONGO_URL', 'TEST_STRIPE_MOCK_URL', 'TEST_FERRETDB_POSTGRESQL_URL']) delete env[name];
  return env;
}

/** Runs jest and reads its JSON report: the exit code and the counts (undefined when jest wrote none). */
function jest(argv, env) {
  const report = join(tmpdir(), `licensing-jest-${process.pid}-${Date.now()}.json`);
  const code = run(join(root, 'node_modules', '.bin', 'jest'), ['--json', `--outputFile=${report}`, ...argv], { env });
  if (!existsSync(report)) return { code };
  const r = JSON.parse(readFileSync(report, 'utf8'));
  rmSync(report, { force: true });
  return {
    code,
    counts: {
      passed: r.numPassedTests,
      failed: r.numFailedTests,
      skipped: r.numPendingTests + r.numTodoTests,
      total: r.numTotalTests,
    },
  };
}

function summarise(runs) {
  const sum = (k) => runs.reduce((n, r) => n + (r.counts?.[k] ?? 0), 0);
  if (!runs.some((r) => r.counts)) return;
  const skipped = sum('skipped');
  console.log(`\ntests: ${sum('passed')} passed, ${sum('failed')} failed${skipped ? `, ${skipped} skipped` : ''}`);
  if (sum('total') === 0) {
    console.error('no test ran');
    process.exit(1);
  }
}

// Long-running commands: pass signals on and exit with the child's code.
function node(file, argv = []) {
  const child = spawn(process.execPath, ['--enable-source-maps', join(root, file), ...argv], {
    cwd: root,
    stdio: 'inherit',
  });
  for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

// The jest projects (jest.config.js), one per tier: those without a global set-up need no server and
// run with none reachable (withoutServers); the others get the servers the set-up provides.
const projects = createRequire(import.meta.url)(join(root, 'jest.config.js')).projects;
const serverless = projects.filter((p) => !p.globalSetup).map((p) => p.displayName);
const withServers = projects.filter((p) => p.globalSetup).map((p) => p.displayName);

/**
 * One component's own tests (`npm test -w <folder>`): its test/unit as `npm run test:unit` runs it (no
 * server reachable), then, if that passed, its test/component with the servers, each picked out of its
 * tier's project by path.
 */
async function testFolder(folder, argv, env) {
  if (!folder || !existsSync(join(root, folder, 'package.json'))) {
    console.error('usage: node scripts/run.mjs test:folder <workspace folder, e.g. services/license> [jest args]');
    process.exit(2);
  }
  const tiers = [
    ['unit', await withoutServers()],
    ['component', env],
  ].filter(([tier]) => existsSync(join(root, folder, 'test', tier)));
  if (tiers.length === 0) {
    console.error(`${folder} has no test/unit or test/component`);
    return 1;
  }
  const runs = [];
  for (const [tier, tierEnv] of tiers) {
    if (runs.some((r) => r.code !== 0)) break;
    // A path pattern (a regular expression over absolute paths) for the folder's tests of this tier.
    const mine = `^${join(root, folder, 'test', tier).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/`;
    // --selectProjects last: it takes every word after it as a project name.
    runs.push(jest([...argv, mine, '--selectProjects', tier], tierEnv));
  }
  summarise(runs);
  return runs.find((r) => r.code !== 0)?.code ?? 0;
}

switch (command) {
  case 'start':
    node('scripts/dist/start.js', args);
    break;
  case 'admin':
    node('scripts/dist/admin.js', args);
    break;
  case 'bench':
    node('scripts/dist/bench.js', args);
    break;
  case 'build':
    // Installing and building (above) was the whole job.
    break;
  case 'bench:scale':
    node('scripts/dist/bench-scale.js', args);
    break;
  case 'bench:events':
    node('scripts/dist/bench-events.js', args);
    break;
  case 'bench:heartbeat':
    node('scripts/dist/bench-heartbeat.js', args);
    break;
  case 'bench:import':
    node('scripts/dist/bench-import.js', args);
    break;
  case 'bench:downloads':
    node('scripts/dist/bench-downloads.js', args);
    break;
  case 'docs':
    node('scripts/dist/docs-gen.js', args);
    break;
  case 'test:unit': {
    // The tests that need no server (every component's test/unit, test/repository): no lint, no
    // build, no server started or reachable (withoutServers).
    // --selectProjects last: it takes every word after it as a project name.
    const unit = jest([...args, '--selectProjects', ...serverless], await withoutServers());
    summarise([unit]);
    process.exit(unit.code);
    break;
  }
  case 'test': {
    // Lint and format first: the cheapest check, and the one a newcomer's change meets first (npm run format fixes most).
    timed('lint', () =>
      must(
        join(root, 'node_modules', '.bin', 'biome'),
        ['check', '.'],
        'lint (npm run lint; npm run format fixes formatting)',
      ),
    );
    timed('chromium', ensureChromium);
    timed('sdk toolchains', ensureSdkToolchains);
    timed('postgres', ensurePostgresConnections);
    // Contracts first (generated code matches the .proto files and the SDK's types the
    // OpenAPI document), then types, then the tiers.
    timed('contracts', () => {
      must(process.execPath, [join(root, 'scripts', 'proto-gen.mjs'), '--check'], 'proto check');
      must(process.execPath, [join(root, 'scripts', 'client-types.mjs'), '--check'], 'client types check');
      must(process.execPath, [join(root, 'scripts', 'sdk-vectors.mjs'), '--check'], 'SDK test vectors check');
    });
    timed('types', () => must(join(root, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json'], 'type check'));
    // The services record every query shape they send; afterwards each must have a declared index.
    const shapes = join(tmpdir(), `licensing-query-shapes-${process.pid}`);
    rmSync(shapes, { recursive: true, force: true });
    const env = { ...process.env, QUERY_SHAPES_DIR: shapes };
    // A whole run: the projects without servers first, as `npm run test:unit` runs them (no server
    // reachable, which keeps them honest), and the projects with servers after them only if they passed. With arguments (some
    // files, a -t pattern), one jest run: it starts the servers only if a selected test needs them.
    const runs = [];
    if (args.length === 0) {
      timed('sdk tests', sdkTests);
      const started = Date.now();
      runs.push(jest(['--selectProjects', ...serverless], await withoutServers()));
      phases.push(`unit tier ${Math.round((Date.now() - started) / 1000)} s`);
      if (runs[0].code === 0) runs.push(timed('server tiers', () => jest(['--selectProjects', ...withServers], env)));
    } else runs.push(jest(args, env));
    summarise(runs);
    let code = runs.find((r) => r.code !== 0)?.code ?? 0;
    // Only for a whole run: a run of a few files sees only some of the shapes, which is fine.
    if (code === 0 && args.length === 0 && existsSync(shapes))
      code = timed('index coverage', () =>
        run(process.execPath, [join(root, 'scripts', 'dist', 'check-query-shapes.js'), shapes]),
      );
    rmSync(shapes, { recursive: true, force: true });
    console.log(`steps: ${phases.join(', ')}`);
    process.exit(code);
    break;
  }
  case 'test:folder':
    // `npm test -w <folder>`: one component's own tests, without the repository-wide checks of npm test.
    process.exit(await testFolder(args[0], args.slice(1), { ...process.env }));
    break;
  default:
    console.error(
      'usage: node scripts/run.mjs start|test|test:unit|test:folder|bench|bench:scale|bench:events|bench:heartbeat|bench:import|admin|docs|build [args]',
    );
    process.exit(2);
}
