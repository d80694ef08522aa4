import { ConfigError } from '@wallet/platform';
import { productionSecretFailures } from '@wallet/platform/testing';
import { gatewayEnvSchema, loadConfig } from './config.js';

describe('gateway config', () => {
  it('has development defaults outside production', () => {
    const c = loadConfig({});
    expect(c.adminToken).toBe('dev-admin-token');
    expect(c.apiKeyPrefix).toBe('wk_test_');
    expect(c.port).toBe(8080);
    expect(c.opsPort).toBe(9100);
    expect(c.ledgerAddress).toBe('127.0.0.1:50051');
    expect(c.redisUrl).toBe('redis://127.0.0.1:6379');
    expect(c.rateLimit.perMinute).toEqual({ READS: 100, QUOTES: 30, RESOLVE_KEY: 30, FINANCIAL: 10, COLLECT_KEY_WRITES: 60, AUTHENTICATION: 5 });
    expect(c.rateLimit.windowSeconds).toBe(60);
    expect(c.trustedProxies).toContain('127.0.0.0/8');
    expect(c.migrateOnStart).toBe(true);
    expect(loadConfig({ GATEWAY_MIGRATE_ON_START: 'false' }).migrateOnStart).toBe(false);
  });

  it('refuses to start in production without an admin token and pepper, naming both', () => {
    try {
      loadConfig({ NODE_ENV: 'production' });
      throw new Error('expected a ConfigError');
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const text = (err as ConfigError).problems.join('\n');
      expect(text).toMatch(/ADMIN_TOKEN/);
      expect(text).toMatch(/API_KEY_PEPPER/);
      expect(text).toMatch(/GATEWAY_ENCRYPTION_KEY/);
    }
    expect(() => loadConfig({ NODE_ENV: 'production', ADMIN_TOKEN: 'dev-admin-token', API_KEY_PEPPER: 'p'.repeat(32) })).toThrow(ConfigError);
    const prod = loadConfig({ NODE_ENV: 'production', ADMIN_TOKEN: 'a-long-operator-token', API_KEY_PEPPER: 'p'.repeat(32), GATEWAY_ENCRYPTION_KEY: 'k'.repeat(32) });
    expect(prod.apiKeyPrefix).toBe('wk_live_');
    expect(prod.migrateOnStart).toBe(false);
  });

  it('refuses every development secret in production, naming the variable and never the value', () => {
    for (const [name, dev] of [['API_KEY_PEPPER', 'dev-api-key-pepper-not-for-production'], ['GATEWAY_ENCRYPTION_KEY', 'dev-gateway-encryption-key-not-for-production']]) {
      const env = { NODE_ENV: 'production', ADMIN_TOKEN: 'a-long-operator-token', API_KEY_PEPPER: 'p'.repeat(32), GATEWAY_ENCRYPTION_KEY: 'k'.repeat(32), [name!]: dev };
      expect(() => loadConfig(env)).toThrow(new RegExp(name!)); // once accepted: only their absence was refused
    }
    expect(productionSecretFailures(loadConfig, gatewayEnvSchema, {
      ADMIN_TOKEN: 'a-long-operator-token', API_KEY_PEPPER: 'p'.repeat(32), GATEWAY_ENCRYPTION_KEY: 'k'.repeat(32),
    })).toEqual([]);
  });

  it('reads limits, proxies and cache TTL from the environment and rejects bad values', () => {
    const c = loadConfig({ RATE_LIMIT_READS: '7', TRUSTED_PROXIES: '10.0.0.0/8, 192.0.2.1', API_KEY_CACHE_TTL_MS: '1000' });
    expect(c.rateLimit.perMinute.READS).toBe(7);
    expect(c.trustedProxies).toEqual(['10.0.0.0/8', '192.0.2.1']);
    expect(loadConfig({ TRUSTED_PROXIES: '' }).trustedProxies).toEqual([]);
    expect(() => loadConfig({ TRUSTED_PROXIES: '10.0.0.0/99' })).toThrow(ConfigError);
    expect(() => loadConfig({ API_KEY_CACHE_TTL_MS: '60000' })).toThrow(ConfigError);
    expect(() => loadConfig({ RATE_LIMIT_FINANCIAL: '0' })).toThrow(ConfigError);
  });
});
