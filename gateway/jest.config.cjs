// Unit specs sit beside the code (src/**/*.spec.ts); integration tests run against real
// Postgres, Redis and a real ledger (test/**/*.test.ts).
module.exports = { ...require('../test/jest.preset.cjs') };
