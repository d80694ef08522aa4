import { productionSecretFailures } from '@wallet/platform/testing';
import { loadConfig, reconciliationEnvSchema } from './config.js';

describe('config', () => {
  it("defaults: the contract's ports and addresses, every rail at 06:00 Bogotá, 6 attempts from 60 s", () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      RECONCILIATION_GRPC_HOST: '0.0.0.0',
      RECONCILIATION_GRPC_PORT: 50057,
      RECONCILIATION_OPS_PORT: 9107,
      RECONCILIATION_MIGRATE_ON_START: true,
      LEDGER_GRPC_ADDR: '127.0.0.1:50051',
      TRANSFER_GRPC_ADDR: '127.0.0.1:50052',
      DEPOSIT_GRPC_ADDR: '127.0.0.1:50053',
      COLLECT_KEY_GRPC_ADDR: '127.0.0.1:50054',
      RECON_REPORTS_URL: 'http://127.0.0.1:8090/sandbox/reports',
      RECON_TIMEZONE: 'America/Bogota',
      RECON_RAILS: ['breb', 'ach', 'pse', 'breb-inbound'],
      RECON_RETRY_ATTEMPTS: 6,
      RECON_RETRY_BASE_MS: 60_000,
      schedules: { breb: '0 6 * * *', ach: '0 6 * * *', pse: '0 6 * * *', 'breb-inbound': '0 6 * * *' },
    });
    expect(c.RECON_REPORTS_TOKEN).toBeUndefined();
    expect(c.RECON_WORK_DIR).toMatch(/\S/);
  });

  it('per-rail schedules override RECON_SCHEDULE; "off" disables a rail; RECON_RAILS limits the rails', () => {
    const c = loadConfig({
      RECON_SCHEDULE: '30 5 * * *',
      RECON_SCHEDULE_PSE: 'off',
      RECON_SCHEDULE_BREB_INBOUND: '0 7 * * 1-5',
      RECON_RAILS: 'pse, breb-inbound,breb',
    });
    expect(c.RECON_RAILS).toEqual(['pse', 'breb-inbound', 'breb']);
    expect(c.schedules).toEqual({ pse: 'off', 'breb-inbound': '0 7 * * 1-5', breb: '30 5 * * *' });
    expect(loadConfig({ RECON_SCHEDULE: 'off' }).schedules.ach).toBe('off');
  });

  it('refuses a bad cron, an unknown rail, a bad time zone and bad numbers, naming each variable', () => {
    const problems = (env: Record<string, string>) => {
      try {
        loadConfig(env);
        return '';
      } catch (e) {
        return (e as Error).message;
      }
    };
    expect(problems({ RECON_SCHEDULE_ACH: 'every day' })).toMatch(/RECON_SCHEDULE_ACH: not a cron pattern/);
    expect(problems({ RECON_SCHEDULE: '61 * * * *' })).toMatch(/RECON_SCHEDULE: not a cron pattern/);
    expect(problems({ RECON_RAILS: 'breb,swift' })).toMatch(/RECON_RAILS: .*not swift/);
    expect(problems({ RECON_TIMEZONE: 'Mars/Olympus' })).toMatch(/RECON_TIMEZONE/);
    expect(problems({ RECON_RETRY_ATTEMPTS: '0', RECONCILIATION_GRPC_PORT: 'x', RECON_REPORTS_URL: 'not a url' })).toMatch(
      /RECON_RETRY_ATTEMPTS[\s\S]*RECONCILIATION_GRPC_PORT|RECONCILIATION_GRPC_PORT[\s\S]*RECON_RETRY_ATTEMPTS/,
    );
  });

  it('the reports token is optional and never echoed in an error', () => {
    expect(loadConfig({ RECON_REPORTS_TOKEN: 's3cret-token' }).RECON_REPORTS_TOKEN).toBe('s3cret-token');
    try {
      loadConfig({ RECON_REPORTS_TOKEN: 's3cret-token', RECON_RAILS: 'x' });
    } catch (e) {
      expect((e as Error).message).not.toContain('s3cret-token');
    }
  });

  it('production: migrations not applied at start unless asked; no development secret accepted', () => {
    expect(loadConfig({ NODE_ENV: 'production' }).RECONCILIATION_MIGRATE_ON_START).toBe(false);
    expect(loadConfig({ NODE_ENV: 'production', RECONCILIATION_MIGRATE_ON_START: 'true' }).RECONCILIATION_MIGRATE_ON_START).toBe(true);
    // RECON_REPORTS_TOKEN is the contract's OPTIONAL secret (a provider may need none), so it is not a
    // dev-secrets.ts variable (those are required in production); parseConfig still refuses a
    // development secret in it, like in any variable, and never shows its value.
    expect(productionSecretFailures(loadConfig, reconciliationEnvSchema, {})).toEqual([
      'RECON_REPORTS_TOKEN looks like a secret but is not declared in platform dev-secrets.ts',
    ]);
    let message = '';
    try {
      loadConfig({ NODE_ENV: 'production', RECON_REPORTS_TOKEN: 'x-dev-admin-token-x' });
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toMatch(/RECON_REPORTS_TOKEN: contains a development secret/);
    expect(message).not.toContain('x-dev-admin-token-x');
  });
});
