import { SECRET_VARIABLES } from '@wallet/platform';
import { productionSecretFailures } from '@wallet/platform/testing';
import { loadConfig, sandboxEnvSchema } from './config.js';

describe('sandbox config', () => {
  it('signs with the development callback secret outside production', () => {
    expect(loadConfig({}).SANDBOX_CALLBACK_SECRET).toBe(SECRET_VARIABLES.RAIL_CALLBACK_SECRET.dev);
    expect(loadConfig({ SANDBOX_CALLBACK_SECRET: 'test-callback-secret' }).SANDBOX_CALLBACK_SECRET).toBe('test-callback-secret');
  });

  it('refuses every development secret in production, naming the variable and never the value', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/SANDBOX_CALLBACK_SECRET/);
    expect(productionSecretFailures(loadConfig, sandboxEnvSchema, { SANDBOX_CALLBACK_SECRET: 'a-real-secret-of-32-characters!!' })).toEqual([]);
  });
});
