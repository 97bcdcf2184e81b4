// The tiers, one jest project each, one run: test/unit (pure logic, no server),
// test/integration (one piece against real FerretDB and NATS), test/e2e
// (everything through the gateway) and test/deploy (compose and manifest checks).
// Only the tiers that talk to servers have the global set-up (NATS and Redis
// reachable, a FerretDB and a stripe-mock of the run's own): `npm run test:unit`
// (--selectProjects unit) starts and needs none of them. Jest runs one global
// set-up shared by several projects once, and only when one of their tests runs.
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

// The web component's own tests (web/test/unit, web/test/component) run in the unit and integration tiers
// (a folder not there yet is left out: jest refuses a root that does not exist).
const { existsSync } = require('node:fs');
const ownRoots = (...folders) => folders.filter((f) => existsSync(`${__dirname}/${f}`)).map((f) => `<rootDir>/${f}`);
const componentRoots = { unit: ownRoots('web/test/unit'), integration: ownRoots('web/test/component') };

const tier = (name, servers) => ({
  displayName: name,
  rootDir: __dirname,
  testEnvironment: 'node',
  roots: [`<rootDir>/test/${name}`, ...(componentRoots[name] ?? [])],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': swc, '/node_modules/@opentelemetry/otlp-exporter-base/.+\\.js$': swcJs },
  transformIgnorePatterns: ['/node_modules/(?!@opentelemetry/otlp-exporter-base/)'],
  moduleNameMapper: {
    '^@licensing/proto$': '<rootDir>/proto/index.ts',
    '^@licensing/runtime$': '<rootDir>/packages/runtime/src/index.ts',
    '^@licensing/client$': '<rootDir>/packages/client/src/index.ts',
  },
  testTimeout,
  ...(servers
    ? {
        globalSetup: '<rootDir>/test/support/global-setup.ts',
        globalTeardown: '<rootDir>/test/support/global-teardown.ts',
      }
    : {}),
});

/** The tiers by name; test/unit/test-tiers.test.ts checks that only `unit` has no global set-up. */
const tiers = [tier('unit', false), tier('integration', true), tier('e2e', true), tier('deploy', true)];

module.exports = {
  projects: tiers,
  testTimeout,
  maxWorkers: 2,
};
