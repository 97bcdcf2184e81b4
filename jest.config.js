// One jest run for the whole repository, one project per tier (docs/architecture.md, "Tests"):
// - each component (gateway/, proto/, services/<name>/, packages/<name>/, examples/<name>/) owns its
//   tests: its test/unit (pure logic, no server) is a root of the `unit` project, its test/component
//   (the component running for real against real FerretDB, NATS and Redis, its gRPC peers faked with
//   packages/test-support) a root of the `component` project;
// - test/<tier> holds what belongs to no single component, in the project named after its folder:
//   test/system (what only the whole system shows), test/e2e (single features through the whole
//   system, on their way to component tests), test/deploy (compose and manifest checks),
//   test/integration (several services together); the server-free ones, test/repository (checks of
//   the repository as a whole: docs, layout, scripts/, deploy files) and test/unit (tests that have
//   not found their component yet), are roots of `unit`.
// One project per tier, not per component: jest keys its transform cache by project, so a source
// that every component's tests import is compiled once, not once per component. `npm test -w <folder>`
// (scripts/run.mjs test:folder) picks one component's files out of the tiers by path.
// Only the projects that talk to servers have the global set-up (NATS and Redis reachable, a FerretDB
// and a stripe-mock of the run's own): `npm run test:unit` runs every project without it and starts
// none of them. Jest runs one global set-up shared by several projects once, and only when one of
// their tests runs.
const { existsSync, readdirSync } = require('node:fs');
const { join } = require('node:path');

const swc = [
  '@swc/jest',
  { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } },
];

// OpenTelemetry's OTLP exporter loads node:http with a dynamic import(), which jest's CommonJS
// runtime cannot run (it would need --experimental-vm-modules): its files are compiled to require()
// like ours. Node itself runs them as they are.
const swcJs = [
  '@swc/jest',
  { jsc: { parser: { syntax: 'ecmascript' }, target: 'es2022' }, module: { type: 'commonjs' } },
];

const testTimeout = 30000;

/** The folders of test/ whose tests need no server: roots of `unit`, run by `npm run test:unit`. */
const SERVERLESS_TIERS = ['unit', 'repository'];

const project = (name, roots, servers) => ({
  displayName: name,
  rootDir: __dirname,
  testEnvironment: 'node',
  roots: roots.map((folder) => `<rootDir>/${folder}`),
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': swc, '/node_modules/@opentelemetry/otlp-exporter-base/.+\\.js$': swcJs },
  transformIgnorePatterns: ['/node_modules/(?!@opentelemetry/otlp-exporter-base/)'],
  moduleNameMapper: {
    '^@licensing/proto$': '<rootDir>/proto/index.ts',
    '^@licensing/runtime$': '<rootDir>/packages/runtime/src/index.ts',
    '^@licensing/client$': '<rootDir>/packages/client/src/index.ts',
    '^@licensing/test-support$': '<rootDir>/packages/test-support/src/index.ts',
  },
  testTimeout,
  ...(servers
    ? {
        globalSetup: '<rootDir>/test/support/global-setup.ts',
        globalTeardown: '<rootDir>/test/support/global-teardown.ts',
      }
    : {}),
});

const subfolders = (dir) =>
  existsSync(join(__dirname, dir))
    ? readdirSync(join(__dirname, dir), { withFileTypes: true })
        .filter((d) => d.isDirectory() && d.name !== 'node_modules')
        .map((d) => d.name)
    : [];

/** The folders that own code, and so their tests: the workspaces of package.json. */
const componentFolders = [
  'gateway',
  'web',
  'proto',
  ...['services', 'packages', 'examples'].flatMap((group) => subfolders(group).map((name) => `${group}/${name}`)),
];

/** The existing folders among `folders`. */
const existing = (folders) => folders.filter((folder) => existsSync(join(__dirname, folder)));

/**
 * The projects: `unit` (every component's test/unit, and the folders of test/ that need no server),
 * `component` (every component's test/component), and each other folder of test/ but support/ under
 * its own name. The server-free tests share one project, so one transform cache.
 */
const topLevel = subfolders('test').filter((name) => name !== 'support');
const unitRoots = existing([
  ...componentFolders.map((folder) => `${folder}/test/unit`),
  ...SERVERLESS_TIERS.map((name) => `test/${name}`),
]);
const componentRoots = existing(componentFolders.map((folder) => `${folder}/test/component`));

const projects = [
  project('unit', unitRoots, false),
  ...(componentRoots.length ? [project('component', componentRoots, true)] : []),
  ...topLevel.filter((name) => !SERVERLESS_TIERS.includes(name)).map((name) => project(name, [`test/${name}`], true)),
];

module.exports = {
  projects,
  testTimeout,
  maxWorkers: 2,
  // Longest files first, by this machine's last run or else the committed table (a fresh clone has no
  // timings of its own): test/support/sequencer.js.
  testSequencer: join(__dirname, 'test', 'support', 'sequencer.js'),
};
