import { SECRET_VARIABLES } from '@wallet/platform';
import { productionSecretFailures } from '@wallet/platform/testing';
import { loadConfig, sandboxEnvSchema } from './config.js';

describe('sandbox config', () => {
  it('signs with the development callback secret outside production', () => {
    expect(loadConfig({}).SANDBOX_CALLBACK_SECRET).toBe(SECRET_VARIABLES.RAIL_CALLBACK_SECRET.dev);
    expect(loadConfig({ SANDBOX_CALLBACK_SECRET: 'test-callback-secret' }).SANDBOX_CALLBACK_SECRET).toBe('test-callback-secret');
  });

  it('sends outcome callbacks in bulk unless SANDBOX_BULK_CALLBACKS turns bulk outcomes off', () => {
    expect(loadConfig({}).SANDBOX_BULK_CALLBACKS).toBe(true);
    for (const on of ['true', '1', 'yes']) expect(loadConfig({ SANDBOX_BULK_CALLBACKS: on }).SANDBOX_BULK_CALLBACKS).toBe(true);
    for (const off of ['false', '0', 'no']) expect(loadConfig({ SANDBOX_BULK_CALLBACKS: off }).SANDBOX_BULK_CALLBACKS).toBe(false);
    expect(() => loadConfig({ SANDBOX_BULK_CALLBACKS: 'maybe' })).toThrow(/SANDBOX_BULK_CALLBACKS/);
  });

  it('refuses every development secret in production, naming the variable and never the value', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/SANDBOX_CALLBACK_SECRET/);
    expect(productionSecretFailures(loadConfig, sandboxEnvSchema, { SANDBOX_CALLBACK_SECRET: 'a-real-secret-of-32-characters!!' })).toEqual([]);
  });
});
