import { ConfigError, SECRET_VARIABLES } from '@wallet/platform';
import { productionSecretFailures } from '@wallet/platform/testing';
import { loadConfig, webhookEnvSchema } from './config.js';

const DEV_SECRET_KEY = SECRET_VARIABLES.WEBHOOK_SECRET_KEY.dev;

describe('webhook config', () => {
  const key = 'k'.repeat(40);

  it('outside production: loopback targets allowed, the dev key, migrations on start', () => {
    const c = loadConfig({ NODE_ENV: 'development' });
    expect(c.WEBHOOK_ALLOW_PRIVATE_TARGETS).toBe(true);
    expect(c.WEBHOOK_SECRET_KEY).toBe(DEV_SECRET_KEY);
    expect(c.WEBHOOK_MIGRATE_ON_START).toBe(true);
    expect(c).toMatchObject({ WEBHOOK_GRPC_PORT: 50056, WEBHOOK_OPS_PORT: 9106, WEBHOOK_TIMEOUT_MS: 5000, WEBHOOK_RETRY_HORIZON_SECONDS: 86400 });
    expect(loadConfig({ NODE_ENV: 'test', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' }).WEBHOOK_ALLOW_PRIVATE_TARGETS).toBe(false);
  });

  it('in production: production target rules, a real key required, private targets cannot be allowed', () => {
    const c = loadConfig({ NODE_ENV: 'production', WEBHOOK_SECRET_KEY: key });
    expect(c.WEBHOOK_ALLOW_PRIVATE_TARGETS).toBe(false);
    expect(c.WEBHOOK_MIGRATE_ON_START).toBe(false);
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(ConfigError);
    expect(() => loadConfig({ NODE_ENV: 'production', WEBHOOK_SECRET_KEY: DEV_SECRET_KEY })).toThrow(/WEBHOOK_SECRET_KEY/);
    expect(() => loadConfig({ NODE_ENV: 'production', WEBHOOK_SECRET_KEY: 'short' })).toThrow(/WEBHOOK_SECRET_KEY/);
    expect(() => loadConfig({ NODE_ENV: 'production', WEBHOOK_SECRET_KEY: key, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' })).toThrow(
      /WEBHOOK_ALLOW_PRIVATE_TARGETS/,
    );
  });

  it('refuses every development secret in production, naming the variable and never the value', () => {
    expect(productionSecretFailures(loadConfig, webhookEnvSchema, { WEBHOOK_SECRET_KEY: key })).toEqual([]);
  });
});
