const preset = require('./jest.preset.cjs');
module.exports = {
  ...preset,
  testMatch: [
    '<rootDir>/e2e/**/*.test.ts',
    '<rootDir>/rules/**/*.test.ts',
    '<rootDir>/deploy/**/*.test.ts',
    '<rootDir>/faults/**/*.test.ts',
    '<rootDir>/scripts/**/*.test.ts',
    '<rootDir>/support/**/*.spec.ts',
    '<rootDir>/contract/**/*.spec.ts',
  ],
  // Which operations of GET /openapi.json the run saw answer 2xx (support/openapi-check.ts).
  globalSetup: '<rootDir>/support/openapi-coverage.setup.mjs',
  globalTeardown: '<rootDir>/support/openapi-coverage.teardown.mjs',
};
