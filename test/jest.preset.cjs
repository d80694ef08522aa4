// Shared Jest setup (ESM + @swc/jest); each workspace's jest.config.js spreads it.
module.exports = {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      {
        jsc: { parser: { syntax: 'typescript' }, target: 'es2023' },
        module: { type: 'es6' },
      },
    ],
  },
  testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/test/**/*.test.ts'],
  globalSetup: require.resolve('./jest.global-setup.cjs'),
  // Hooks and tests alike. A gateway stack (eight services in one process) starts in ~2 s alone,
  // ~12 s beside the fault suite's 17 processes (2 cores), and past 30 s in CI with two lanes of
  // suites at once: a start is not a timing assertion, so the limit leaves it room.
  testTimeout: 60000,
  maxWorkers: 2,
};
