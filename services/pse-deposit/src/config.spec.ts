import { productionSecretFailures } from '@wallet/platform/testing';
import { depositEnvSchema, loadConfig } from './config.js';

describe('config', () => {
  it('defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      DEPOSIT_GRPC_PORT: 50053,
      DEPOSIT_OPS_PORT: 9103,
      PSE_PROVIDER_URL: 'http://127.0.0.1:8090',
      PSE_INFLOW_ENABLED: true,
      PSE_LINK_TTL_SECONDS: 86400,
      PSE_CALLBACK_URL: 'http://127.0.0.1:8080/webhooks/pse',
      PSE_CALLBACK_SECRET: 'dev-rail-callback-secret',
      SMTP_URL: 'smtp://127.0.0.1:2525',
      MAIL_FROM: 'Pagos <no-reply@pagos.example.co>',
      DEPOSIT_MIGRATE_ON_START: true,
    });
  });

  it('empty provider URL, kill switch, production secret', () => {
    expect(loadConfig({ PSE_PROVIDER_URL: '', PSE_INFLOW_ENABLED: 'false' })).toMatchObject({ PSE_PROVIDER_URL: '', PSE_INFLOW_ENABLED: false });
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/PSE_CALLBACK_SECRET/);
    expect(() => loadConfig({ NODE_ENV: 'production', PSE_CALLBACK_SECRET: 'dev-rail-callback-secret' })).toThrow(/PSE_CALLBACK_SECRET/);
    expect(loadConfig({ NODE_ENV: 'production', PSE_CALLBACK_SECRET: 'a-real-secret-of-32-characters!!' }).DEPOSIT_MIGRATE_ON_START).toBe(false);
  });

  it('refuses every development secret in production, naming the variable and never the value', () => {
    expect(productionSecretFailures(loadConfig, depositEnvSchema, { PSE_CALLBACK_SECRET: 'a-real-secret-of-32-characters!!' })).toEqual([]);
  });
});
