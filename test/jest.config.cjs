const preset = require('./jest.preset.cjs');
module.exports = { ...preset, testMatch: ['<rootDir>/e2e/**/*.test.ts'], testTimeout: 60000 };
