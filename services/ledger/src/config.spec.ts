import { ConfigError } from '@wallet/platform';
import { productionSecretFailures } from '@wallet/platform/testing';
import { ledgerEnvSchema, loadConfig } from './config.js';

describe('ledger config', () => {
  it('has defaults for every variable; migrations run at start outside production', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      LEDGER_GRPC_HOST: '0.0.0.0',
      LEDGER_GRPC_PORT: 50051,
      LEDGER_OPS_PORT: 9101,
      LEDGER_MIGRATE_ON_START: true,
      LEDGER_DB_POOL_MAX: 10,
      BALANCE_ALERT_INTERVAL_MS: 1000,
      JOURNAL_SEAL_INTERVAL_MS: 1000,
      BALANCE_CHECKPOINT_INTERVAL_MS: 60_000,
      BALANCE_CHECKPOINT_MARGIN_SECONDS: 300,
      LEDGER_SELF_CHECK_INTERVAL_MS: 3_600_000,
      NATS_URL: 'nats://127.0.0.1:4222',
      BUS_NAMESPACE: '',
    });
    expect(loadConfig({ NODE_ENV: 'production' }).LEDGER_MIGRATE_ON_START).toBe(false);
    expect(loadConfig({ NODE_ENV: 'production', LEDGER_MIGRATE_ON_START: 'true' }).LEDGER_MIGRATE_ON_START).toBe(true);
    expect(loadConfig({ LEDGER_MIGRATE_ON_START: 'no' }).LEDGER_MIGRATE_ON_START).toBe(false);
  });

  it('reads no secret of its own, and refuses a development secret inside any variable in production', () => {
    expect(productionSecretFailures(loadConfig, ledgerEnvSchema, {})).toEqual([]);
  });

  it('names every bad variable in one error', () => {
    try {
      loadConfig({ LEDGER_GRPC_PORT: 'abc', LEDGER_OPS_PORT: '-1', LEDGER_MIGRATE_ON_START: 'maybe', DATABASE_URL: 'nope' });
      throw new Error('expected a ConfigError');
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).problems.map((p) => p.split(':')[0]).sort()).toEqual([
        'DATABASE_URL',
        'LEDGER_GRPC_PORT',
        'LEDGER_MIGRATE_ON_START',
        'LEDGER_OPS_PORT',
      ]);
    }
  });
});
