// Three tiers, one run: test/unit (pure logic), test/integration (one piece
// against real FerretDB and NATS), test/e2e (everything through the gateway).
const swc = [
  '@swc/jest',
  { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } },
];

module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': swc },
  moduleNameMapper: {
    '^@licensing/proto$': '<rootDir>/proto/index.ts',
    '^@licensing/runtime$': '<rootDir>/packages/runtime/src/index.ts',
    '^@licensing/client$': '<rootDir>/packages/client/src/index.ts',
  },
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 30000,
  maxWorkers: 2,
};
