// Entry point of `npm start`, `npm test`, `npm run bench` and `npm run admin`.
// Plain Node with no dependencies, so it works on a fresh clone: it installs
// what is missing (npm ci), builds when sources changed, then does the job.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync, mkdirSync, rmSync } from 'node:fs';
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

function must(cmd, argv, what) {
  const code = run(cmd, argv);
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
    if (name === 'node_modules' || name === 'dist') continue;
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
  if (
    run('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { stdio: ['ignore', 'inherit', 'ignore'] }) !== 0
  ) {
    if (!quiet) console.log('npm ci refused the lockfile; installing the locked versions with npm install...');
    must('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], 'npm install');
  }
}

// 2. Build (swc, about a second) when any source is newer than the last build.
const stamp = join(root, 'node_modules', '.cache', 'licensing-build-stamp');
const sources = ['proto', 'packages', 'examples', 'services', 'gateway', 'scripts', 'components.json'].map((d) =>
  newest(join(root, d)),
);
if (!existsSync(stamp) || Math.max(...sources) > statSync(stamp).mtimeMs) {
  must(process.execPath, [join(root, 'scripts', 'build.mjs')], 'build');
  mkdirSync(dirname(stamp), { recursive: true });
  writeFileSync(stamp, new Date().toISOString());
}

// The dashboard's browser tests drive Debian's Chromium (never a downloaded browser).
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

// Long-running commands: pass signals on and exit with the child's code.
function node(file, argv = []) {
  const child = spawn(process.execPath, ['--enable-source-maps', join(root, file), ...argv], {
    cwd: root,
    stdio: 'inherit',
  });
  for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
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
  case 'docs':
    node('scripts/dist/docs-gen.js', args);
    break;
  case 'test': {
    // Lint and format first: the cheapest check, and the one a newcomer's change meets first (npm run format fixes most).
    must(
      join(root, 'node_modules', '.bin', 'biome'),
      ['check', '.'],
      'lint (npm run lint; npm run format fixes formatting)',
    );
    ensureChromium();
    // Contracts first (generated code matches the .proto files and the SDK's types the
    // OpenAPI document), then types, then the three tiers.
    must(process.execPath, [join(root, 'scripts', 'proto-gen.mjs'), '--check'], 'proto check');
    must(process.execPath, [join(root, 'scripts', 'client-types.mjs'), '--check'], 'client types check');
    must(join(root, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json'], 'type check');
    const report = join(tmpdir(), `licensing-jest-${process.pid}.json`);
    // The services record every query shape they send; afterwards each must have a declared index.
    const shapes = join(tmpdir(), `licensing-query-shapes-${process.pid}`);
    rmSync(shapes, { recursive: true, force: true });
    let code = run(join(root, 'node_modules', '.bin', 'jest'), ['--json', `--outputFile=${report}`, ...args], {
      env: { ...process.env, QUERY_SHAPES_DIR: shapes },
    });
    if (existsSync(report)) {
      const r = JSON.parse(readFileSync(report, 'utf8'));
      rmSync(report, { force: true });
      const skipped = r.numPendingTests + r.numTodoTests;
      console.log(
        `\ntests: ${r.numPassedTests} passed, ${r.numFailedTests} failed${skipped ? `, ${skipped} skipped` : ''}`,
      );
      if (r.numTotalTests === 0) {
        console.error('no test ran');
        process.exit(1);
      }
    }
    // Only for a whole run: a run of a few files sees only some of the shapes, which is fine.
    if (code === 0 && args.length === 0 && existsSync(shapes))
      code = run(process.execPath, [join(root, 'scripts', 'dist', 'check-query-shapes.js'), shapes]);
    rmSync(shapes, { recursive: true, force: true });
    process.exit(code);
    break;
  }
  default:
    console.error('usage: node scripts/run.mjs start|test|bench|bench:scale|admin|docs|build [args]');
    process.exit(2);
}
