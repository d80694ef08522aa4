import { productionSecretFailures } from '@wallet/platform/testing';
import { loadConfig, receiptEnvSchema } from './config.js';

describe('receipt config', () => {
  it('has defaults; migrations at start outside production', () => {
    expect(loadConfig({})).toMatchObject({ RECEIPT_GRPC_PORT: 50055, RECEIPT_OPS_PORT: 9105, RECEIPT_MIGRATE_ON_START: true });
    expect(loadConfig({ NODE_ENV: 'production' }).RECEIPT_MIGRATE_ON_START).toBe(false);
  });

  it('reads no secret of its own, and refuses a development secret inside any variable in production', () => {
    expect(productionSecretFailures(loadConfig, receiptEnvSchema, {})).toEqual([]);
  });
});
