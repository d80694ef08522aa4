import { productionSecretFailures } from '@wallet/platform/testing';
import { collectKeyEnvSchema, loadConfig } from './config.js';

describe('config', () => {
  it('defaults', () => {
    expect(loadConfig({})).toMatchObject({
      COLLECT_KEY_GRPC_PORT: 50054,
      COLLECT_KEY_OPS_PORT: 9104,
      LEDGER_GRPC_ADDR: '127.0.0.1:50051',
      BREB_DIRECTORY_URL: 'http://127.0.0.1:8090',
      BREB_INCOMING_CALLBACK_URL: 'http://127.0.0.1:8080/webhooks/breb/incoming',
      BREB_CALLBACK_SECRET: 'dev-rail-callback-secret',
      COLLECT_KEY_MIGRATE_ON_START: true,
      QR_MERCHANT_CITY: 'BOGOTA',
    });
  });

  it('production needs a real secret', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/BREB_CALLBACK_SECRET/);
    expect(() => loadConfig({ NODE_ENV: 'production', BREB_CALLBACK_SECRET: 'dev-rail-callback-secret' })).toThrow(/BREB_CALLBACK_SECRET/);
    expect(loadConfig({ NODE_ENV: 'production', BREB_CALLBACK_SECRET: 'a-real-secret-of-32-characters!!' }).COLLECT_KEY_MIGRATE_ON_START).toBe(false);
  });

  it('refuses every development secret in production, naming the variable and never the value', () => {
    expect(productionSecretFailures(loadConfig, collectKeyEnvSchema, { BREB_CALLBACK_SECRET: 'a-real-secret-of-32-characters!!' })).toEqual([]);
  });
});
