// Unit specs beside the code (src/**/*.spec.ts) against a real HTTP server on loopback; the package
// checks (test/**/*.test.ts: what `npm pack` ships). The whole flow against the real stack, and the
// examples, run in the e2e workspace (test/e2e/sdk*.test.ts).
module.exports = { ...require('../test/jest.preset.cjs') };
