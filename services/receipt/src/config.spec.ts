import { ConfigError, SECRET_VARIABLES } from '@wallet/platform';
import { productionSecretFailures } from '@wallet/platform/testing';
import { loadConfig, receiptEnvSchema } from './config.js';

/** A production environment with everything the receipt service requires there. */
const PRODUCTION = { RECEIPT_SIGNING_P12_FILE: '/var/run/wallet/receipt-signing/receipt-signing.p12', RECEIPT_SIGNING_P12_PASSPHRASE: 'a-real-p12-passphrase' };

const problemsOf = (env: Record<string, string>): string[] => {
  try {
    loadConfig(env);
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
};

describe('receipt config', () => {
  it('has defaults; migrations at start outside production', () => {
    expect(loadConfig({})).toMatchObject({ RECEIPT_GRPC_PORT: 50055, RECEIPT_OPS_PORT: 9105, RECEIPT_MIGRATE_ON_START: true, RECEIPT_SIGNING_P12_FILE: '' });
    expect(loadConfig({ NODE_ENV: 'production', ...PRODUCTION }).RECEIPT_MIGRATE_ON_START).toBe(false);
  });

  it('the signing passphrase is a declared secret: never a development value in production, never shown', () => {
    expect(productionSecretFailures(loadConfig, receiptEnvSchema, PRODUCTION)).toEqual([]);
  });

  it('production requires the signing PKCS#12 (the development key is made outside production only), listed with the other problems', () => {
    expect(problemsOf({ NODE_ENV: 'production', RECEIPT_SIGNING_P12_PASSPHRASE: PRODUCTION.RECEIPT_SIGNING_P12_PASSPHRASE })).toEqual([
      expect.stringMatching(/^RECEIPT_SIGNING_P12_FILE: required in production/),
    ]);
    expect(problemsOf({ NODE_ENV: 'production', RECEIPT_SIGNING_P12_FILE: PRODUCTION.RECEIPT_SIGNING_P12_FILE })).toEqual([
      expect.stringMatching(/^RECEIPT_SIGNING_P12_PASSPHRASE: required in production/),
    ]);
    const all = problemsOf({ NODE_ENV: 'production', RECEIPT_GRPC_PORT: 'x' });
    expect(all).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^RECEIPT_GRPC_PORT:/),
        expect.stringMatching(/^RECEIPT_SIGNING_P12_PASSPHRASE: required in production/),
        expect.stringMatching(/^RECEIPT_SIGNING_P12_FILE: required in production/),
      ]),
    );
    // The commands that sign nothing (migrate, rebuild) need neither, and still refuse a development value.
    expect(() => loadConfig({ NODE_ENV: 'production' }, { signing: false })).not.toThrow();
    expect(() =>
      loadConfig({ NODE_ENV: 'production', RECEIPT_SIGNING_P12_PASSPHRASE: SECRET_VARIABLES.RECEIPT_SIGNING_P12_PASSPHRASE.dev }, { signing: false }),
    ).toThrow(/RECEIPT_SIGNING_P12_PASSPHRASE: contains a development secret/);
    // Outside production nothing is required: the service makes a development key at start.
    expect(problemsOf({ NODE_ENV: 'test' })).toEqual([]);
    expect(problemsOf({ NODE_ENV: 'test', RECEIPT_SIGNING_P12_PASSPHRASE: 'short' })).toEqual([
      expect.stringMatching(/^RECEIPT_SIGNING_P12_PASSPHRASE: must be at least 8/),
    ]);
  });
});
