const preset = require('./jest.preset.cjs');
module.exports = { ...preset, testMatch: ['<rootDir>/e2e/**/*.test.ts', '<rootDir>/deploy/**/*.test.ts', '<rootDir>/faults/**/*.test.ts', '<rootDir>/scripts/**/*.test.ts'], testTimeout: 60000 };
