import { ConfigError } from '@wallet/platform';
import { productionSecretFailures } from '@wallet/platform/testing';
import { gatewayEnvSchema, loadConfig } from './config.js';

const MAIL = { SMTP_URL: 'smtp://mailer:secret@mail.example.co:587', MAIL_FROM: 'Pagos <no-reply@pagos.example.co>' };

describe('gateway config', () => {
  it('has development defaults outside production', () => {
    const c = loadConfig({});
    expect(c.adminToken).toBe('dev-admin-token');
    expect(c.apiKeyPrefix).toBe('wk_test_');
    expect(c.port).toBe(8080);
    expect(c.opsPort).toBe(9100);
    expect(c.dbPoolMax).toBe(10);
    expect(loadConfig({ GATEWAY_DB_POOL_MAX: '2' }).dbPoolMax).toBe(2);
    expect(c.ledgerAddress).toBe('127.0.0.1:50051');
    expect(c.redisUrl).toBe('redis://127.0.0.1:6379');
    expect(c.rateLimit.perMinute).toEqual({
      READS: 100,
      QUOTES: 30,
      RESOLVE_KEY: 30,
      FINANCIAL: 10,
      COLLECT_KEY_WRITES: 60,
      AUTHENTICATION: 5,
      ADMIN: 300,
      ADMIN_LOGIN: 5,
      RECEIPT_VERIFICATION: 30,
    });
    // /admin stays on the public port; no admin listener unless asked for.
    expect(c.admin).toEqual({ port: undefined, host: '0.0.0.0', alsoOnPublicPort: true });
    expect(loadConfig({ GATEWAY_ADMIN_PORT: '8181' }).admin).toEqual({ port: 8181, host: '0.0.0.0', alsoOnPublicPort: true });
    expect(c.creditDualControlCents).toBe(100_000_000);
    expect(c.adminSessionTtlSeconds).toBe(1800);
    expect(c.rateLimit.windowSeconds).toBe(60);
    // Loopback only: no private range (an in-cluster or VPN caller could rotate X-Forwarded-For).
    expect(c.trustedProxies).toEqual(['127.0.0.0/8', '::1/128']);
    expect(c.rateLimit.perKeyFactor).toBe(1);
    expect(c.migrateOnStart).toBe(true);
    expect(loadConfig({ GATEWAY_MIGRATE_ON_START: 'false' }).migrateOnStart).toBe(false);
  });

  it('refuses to start in production without its pepper and encryption key, naming both; the bootstrap token is optional there', () => {
    try {
      loadConfig({ NODE_ENV: 'production' });
      throw new Error('expected a ConfigError');
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const text = (err as ConfigError).problems.join('\n');
      expect(text).not.toMatch(/ADMIN_TOKEN/);
      expect(text).toMatch(/API_KEY_PEPPER/);
      expect(text).toMatch(/GATEWAY_ENCRYPTION_KEY/);
      expect(text).toMatch(/SMTP_URL/);
      expect(text).toMatch(/MAIL_FROM/);
    }
    expect(() => loadConfig({ NODE_ENV: 'production', ADMIN_TOKEN: 'dev-admin-token', API_KEY_PEPPER: 'p'.repeat(32) })).toThrow(ConfigError);
    const prod = loadConfig({
      NODE_ENV: 'production',
      ADMIN_TOKEN: 'a-long-operator-token',
      API_KEY_PEPPER: 'p'.repeat(32),
      GATEWAY_ENCRYPTION_KEY: 'k'.repeat(32),
      ...MAIL,
    });
    expect(prod.apiKeyPrefix).toBe('wk_live_');
    expect(prod.migrateOnStart).toBe(false);
    expect(prod.dashboard.enrolment).toBe('invitation');
    // Production: /admin only on its own listener (8081 unless set).
    expect(prod.admin).toEqual({ port: 8081, host: '0.0.0.0', alsoOnPublicPort: false });
    expect(prod.approvals).toEqual({ delaySeconds: 86_400, ttlSeconds: 7 * 86_400 });
    // Production runs without the bootstrap token once the first operators exist — and then has none,
    // not the development default.
    const tokenless = loadConfig({ NODE_ENV: 'production', API_KEY_PEPPER: 'p'.repeat(32), GATEWAY_ENCRYPTION_KEY: 'k'.repeat(32), ...MAIL });
    expect(tokenless.adminToken).toBeUndefined();
    expect(loadConfig({}).adminToken).toBe('dev-admin-token');
    expect(loadConfig({}).approvals.delaySeconds).toBe(0);
  });

  it('dashboard enrolment: direct by default outside production, invitation when asked, never direct in production', () => {
    expect(loadConfig({}).dashboard).toEqual({
      enrolment: 'direct',
      invitationTtlSeconds: 259_200,
      publicUrl: undefined,
      lockout: { windowSeconds: 900, lockSeconds: 900 },
    });
    expect(loadConfig({ DASHBOARD_ENROLMENT: 'invitation' }).dashboard.enrolment).toBe('invitation');
    const secrets = {
      NODE_ENV: 'production',
      ADMIN_TOKEN: 'a-long-operator-token',
      API_KEY_PEPPER: 'p'.repeat(32),
      GATEWAY_ENCRYPTION_KEY: 'k'.repeat(32),
      ...MAIL,
    };
    expect(loadConfig({ ...secrets, DASHBOARD_ENROLMENT: 'invitation' }).dashboard.enrolment).toBe('invitation');
    expect(() => loadConfig({ ...secrets, DASHBOARD_ENROLMENT: 'direct' })).toThrow(/DASHBOARD_ENROLMENT/);
    expect(() => loadConfig({ DASHBOARD_ENROLMENT: 'maybe' })).toThrow(ConfigError);
    const c = loadConfig({
      DASHBOARD_PUBLIC_URL: 'https://pagos.example.co',
      DASHBOARD_LOCKOUT_SECONDS: '5',
      DASHBOARD_LOCKOUT_WINDOW_SECONDS: '7',
      DASHBOARD_INVITATION_TTL_SECONDS: '60',
    });
    expect(c.dashboard).toEqual({
      enrolment: 'direct',
      invitationTtlSeconds: 60,
      publicUrl: 'https://pagos.example.co',
      lockout: { windowSeconds: 7, lockSeconds: 5 },
    });
    expect(() => loadConfig({ DASHBOARD_PUBLIC_URL: 'javascript:alert(1)' })).toThrow(ConfigError);
    expect(() => loadConfig({ DASHBOARD_LOCKOUT_SECONDS: '0' })).toThrow(ConfigError);
  });

  it('reads the admin settings and refuses contradictions', () => {
    const prod = {
      NODE_ENV: 'production',
      ADMIN_TOKEN: 'a-long-operator-token',
      API_KEY_PEPPER: 'p'.repeat(32),
      GATEWAY_ENCRYPTION_KEY: 'k'.repeat(32),
      ...MAIL,
    };
    expect(() => loadConfig({ ...prod, GATEWAY_ADMIN_PORT: '8080' })).toThrow(/GATEWAY_ADMIN_PORT/);
    expect(loadConfig({ ...prod, GATEWAY_ADMIN_PORT: '9443', GATEWAY_ADMIN_HOST: '10.1.2.3' }).admin).toEqual({
      port: 9443,
      host: '10.1.2.3',
      alsoOnPublicPort: false,
    });
    expect(loadConfig({ ADMIN_CREDIT_DUAL_CONTROL_CENTS: '500' }).creditDualControlCents).toBe(500);
    expect(loadConfig({ ADMIN_CREDIT_APPROVAL_THRESHOLD_CENTS: '700' }).creditDualControlCents).toBe(700);
    expect(() => loadConfig({ ADMIN_CREDIT_DUAL_CONTROL_CENTS: '500', ADMIN_CREDIT_APPROVAL_THRESHOLD_CENTS: '700' })).toThrow(
      /ADMIN_CREDIT_APPROVAL_THRESHOLD_CENTS/,
    );
    expect(() => loadConfig({ ADMIN_CREDIT_DUAL_CONTROL_CENTS: '1.5' })).toThrow(ConfigError);
    expect(() => loadConfig({ ADMIN_SESSION_TTL_SECONDS: '86400' })).toThrow(/ADMIN_SESSION_TTL_SECONDS/);
  });

  it('refuses every development secret in production, naming the variable and never the value', () => {
    for (const [name, dev] of [
      ['API_KEY_PEPPER', 'dev-api-key-pepper-not-for-production'],
      ['GATEWAY_ENCRYPTION_KEY', 'dev-gateway-encryption-key-not-for-production'],
    ]) {
      const env = {
        NODE_ENV: 'production',
        ADMIN_TOKEN: 'a-long-operator-token',
        API_KEY_PEPPER: 'p'.repeat(32),
        GATEWAY_ENCRYPTION_KEY: 'k'.repeat(32),
        ...MAIL,
        [name!]: dev,
      };
      expect(() => loadConfig(env)).toThrow(new RegExp(name!)); // once accepted: only their absence was refused
    }
    expect(
      productionSecretFailures(loadConfig, gatewayEnvSchema, {
        ADMIN_TOKEN: 'a-long-operator-token',
        API_KEY_PEPPER: 'p'.repeat(32),
        GATEWAY_ENCRYPTION_KEY: 'k'.repeat(32),
        ...MAIL,
      }),
    ).toEqual([]);
  });

  it('mail (SMTP_URL, MAIL_FROM) is required in production; elsewhere the sandbox sink; NATS from the shared variables', () => {
    const dev = loadConfig({});
    expect(dev.mail).toMatchObject({ smtpUrl: 'smtp://127.0.0.1:2525', timeoutMs: 10_000, maxAttempts: 20 });
    expect(dev.mail.from).toMatch(/@/);
    expect(dev.nats).toEqual({ url: 'nats://127.0.0.1:4222', namespace: '', streamReplicas: 1 });
    expect(loadConfig({ NATS_URL: 'nats://nats:4222', BUS_NAMESPACE: 'x1' }).nats).toMatchObject({ url: 'nats://nats:4222', namespace: 'x1' });
    const prod = {
      NODE_ENV: 'production',
      ADMIN_TOKEN: 'a-long-operator-token',
      API_KEY_PEPPER: 'p'.repeat(32),
      GATEWAY_ENCRYPTION_KEY: 'k'.repeat(32),
      ...MAIL,
    };
    for (const missing of ['SMTP_URL', 'MAIL_FROM'] as const) {
      const env: Record<string, string> = { ...prod, ...MAIL };
      delete env[missing];
      expect(() => loadConfig(env)).toThrow(new RegExp(`${missing}: is required in production`));
    }
    expect(loadConfig({ ...prod, ...MAIL }).mail).toMatchObject({ smtpUrl: MAIL.SMTP_URL, from: MAIL.MAIL_FROM });
    expect(() => loadConfig({ SMTP_URL: 'http://mail.example.co' })).toThrow(/SMTP_URL/);
  });

  it('reads limits, proxies and cache TTL from the environment and rejects bad values', () => {
    const c = loadConfig({ RATE_LIMIT_READS: '7', TRUSTED_PROXIES: '10.0.0.0/8, 192.0.2.1', API_KEY_CACHE_TTL_MS: '1000' });
    expect(c.rateLimit.perMinute.READS).toBe(7);
    expect(c.trustedProxies).toEqual(['10.0.0.0/8', '192.0.2.1']);
    expect(loadConfig({ TRUSTED_PROXIES: '' }).trustedProxies).toEqual([]);
    expect(() => loadConfig({ TRUSTED_PROXIES: '10.0.0.0/99' })).toThrow(ConfigError);
    expect(() => loadConfig({ API_KEY_CACHE_TTL_MS: '60000' })).toThrow(ConfigError);
    expect(() => loadConfig({ RATE_LIMIT_FINANCIAL: '0' })).toThrow(ConfigError);
    expect(loadConfig({ RATE_LIMIT_PER_KEY_FACTOR: '3' }).rateLimit.perKeyFactor).toBe(3);
    expect(() => loadConfig({ RATE_LIMIT_PER_KEY_FACTOR: '0' })).toThrow(ConfigError);
  });

  it('Idempotency-Key answers: 30 days unless set; 1 s to 90 days; never under the documented 30 days in production', () => {
    expect(loadConfig({}).idempotencyKeyTtlSeconds).toBe(2_592_000);
    expect(loadConfig({ IDEMPOTENCY_KEY_TTL_SECONDS: '1' }).idempotencyKeyTtlSeconds).toBe(1);
    expect(loadConfig({ IDEMPOTENCY_KEY_TTL_SECONDS: '7776000' }).idempotencyKeyTtlSeconds).toBe(7_776_000);
    for (const bad of ['0', '-5', '1.5', 'thirty', '7776001']) {
      expect(() => loadConfig({ IDEMPOTENCY_KEY_TTL_SECONDS: bad })).toThrow(/IDEMPOTENCY_KEY_TTL_SECONDS/);
    }
    const prod = {
      NODE_ENV: 'production',
      API_KEY_PEPPER: 'p'.repeat(32),
      GATEWAY_ENCRYPTION_KEY: 'k'.repeat(32),
      ...MAIL,
    };
    expect(loadConfig(prod).idempotencyKeyTtlSeconds).toBe(2_592_000);
    expect(loadConfig({ ...prod, IDEMPOTENCY_KEY_TTL_SECONDS: '5184000' }).idempotencyKeyTtlSeconds).toBe(5_184_000);
    expect(() => loadConfig({ ...prod, IDEMPOTENCY_KEY_TTL_SECONDS: '86400' })).toThrow(
      /IDEMPOTENCY_KEY_TTL_SECONDS: must be at least 2592000 \(30 days\) in production/,
    );
  });

  describe('trusted proxies in production', () => {
    const prod = {
      NODE_ENV: 'production',
      ADMIN_TOKEN: 'a-long-operator-token',
      API_KEY_PEPPER: 'p'.repeat(32),
      GATEWAY_ENCRYPTION_KEY: 'k'.repeat(32),
      ...MAIL,
    };

    it('trusts no proxy unless told which', () => {
      expect(loadConfig(prod).trustedProxies).toEqual([]);
      expect(loadConfig({ ...prod, TRUSTED_PROXIES: '10.12.0.16/28, 10.12.0.40' }).trustedProxies).toEqual(['10.12.0.16/28', '10.12.0.40']);
    });

    it.each(['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', 'fc00::/7', '0.0.0.0/0', '::/0', '8.0.0.0/6', '172.0.0.0/8'])(
      'refuses %s, which covers a whole private range, naming the variable',
      (entry) => {
        try {
          loadConfig({ ...prod, TRUSTED_PROXIES: `10.12.0.16/28,${entry}` });
          throw new Error('expected a ConfigError');
        } catch (err) {
          expect(err).toBeInstanceOf(ConfigError);
          expect((err as ConfigError).problems.join('\n')).toMatch(new RegExp(`TRUSTED_PROXIES.*${entry.replace(/[.:/]/g, '\\$&')} covers all of`));
        }
      },
    );

    it('accepts part of a private range, and any list outside production', () => {
      expect(loadConfig({ ...prod, TRUSTED_PROXIES: '10.0.0.0/9,192.168.1.0/24,fd00:1::/64' }).trustedProxies).toHaveLength(3);
      expect(loadConfig({ TRUSTED_PROXIES: '10.0.0.0/8' }).trustedProxies).toEqual(['10.0.0.0/8']);
    });
  });

  it('GATEWAY_PUBLIC_URL: the API base URL of the OpenAPI servers (no trailing slash); outside production localhost on the port, in production none unless set', () => {
    expect(loadConfig({}).publicUrl).toBe('http://localhost:8080');
    expect(loadConfig({ GATEWAY_PORT: '0' }).publicUrl).toBeUndefined();
    expect(loadConfig({ GATEWAY_PUBLIC_URL: 'https://api.pagos.example.co/' }).publicUrl).toBe('https://api.pagos.example.co');
    expect(() => loadConfig({ GATEWAY_PUBLIC_URL: 'ftp://api.example.co' })).toThrow(ConfigError);
  });
});
