import { ConfigError } from '@wallet/platform';
import { productionSecretFailures } from '@wallet/platform/testing';
import { loadConfig, transferEnvSchema } from './config.js';

const DATA_KEY = 'a-production-transfer-data-key-32-chars';

describe('transfer config', () => {
  it('has defaults for every variable; a dev callback secret only outside production', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      TRANSFER_GRPC_PORT: 50052,
      TRANSFER_OPS_PORT: 9102,
      LEDGER_GRPC_ADDR: '127.0.0.1:50051',
      LEDGER_DEADLINE_MS: 5000,
      BREB_DIRECTORY_URL: 'http://127.0.0.1:8090',
      BREB_RAIL_URL: 'http://127.0.0.1:8090',
      ACH_RAIL_URL: 'http://127.0.0.1:8090',
      RAIL_CALLBACK_BASE_URL: 'http://127.0.0.1:8080/webhooks/rails',
      RAIL_CALLBACK_SECRET: 'dev-rail-callback-secret',
      IDEMPOTENCY_WINDOW_SECONDS: 60,
      RAIL_DISPATCH_TIMEOUT_SECONDS: 300,
      RAIL_CONFIRM_TIMEOUT_SECONDS: 60,
      COUNTERPARTY_DAILY_LIMIT_CENTS: 5_000_000_000n,
      COUNTERPARTY_MONTHLY_LIMIT_CENTS: 50_000_000_000n,
      TRANSFER_MIGRATE_ON_START: true,
    });
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(ConfigError);
    const prod = loadConfig({ NODE_ENV: 'production', RAIL_CALLBACK_SECRET: 'a-production-secret-value', TRANSFER_DATA_KEY: DATA_KEY });
    expect(prod).toMatchObject({ RAIL_CALLBACK_SECRET: 'a-production-secret-value', TRANSFER_DATA_KEY: DATA_KEY, TRANSFER_MIGRATE_ON_START: false });
    expect(() => loadConfig({ NODE_ENV: 'production', RAIL_CALLBACK_SECRET: 'a-production-secret-value' })).toThrow(/TRANSFER_DATA_KEY/);
  });

  it('refuses every development secret in production (the public callback secret was once accepted here)', () => {
    expect(() => loadConfig({ NODE_ENV: 'production', RAIL_CALLBACK_SECRET: 'dev-rail-callback-secret', TRANSFER_DATA_KEY: DATA_KEY })).toThrow(
      /RAIL_CALLBACK_SECRET/,
    );
    expect(productionSecretFailures(loadConfig, transferEnvSchema, { RAIL_CALLBACK_SECRET: 'a-production-secret-value', TRANSFER_DATA_KEY: DATA_KEY })).toEqual(
      [],
    );
  });

  it('names every bad variable in one error', () => {
    try {
      loadConfig({ TRANSFER_GRPC_PORT: 'abc', IDEMPOTENCY_WINDOW_SECONDS: '0', COUNTERPARTY_DAILY_LIMIT_CENTS: '1.5', BREB_RAIL_URL: 'nope' });
      throw new Error('expected a ConfigError');
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).problems.map((p) => p.split(':')[0]).sort()).toEqual([
        'BREB_RAIL_URL',
        'COUNTERPARTY_DAILY_LIMIT_CENTS',
        'IDEMPOTENCY_WINDOW_SECONDS',
        'TRANSFER_GRPC_PORT',
      ]);
    }
  });
});
