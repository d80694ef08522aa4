import { loadConfig } from '../config.js';
import { ClientIpResolver, normalize } from './client-ip.js';

describe('ClientIpResolver', () => {
  // A wide list (not the default: development trusts loopback only, production none), to exercise hop resolution behind several proxies.
  const defaults = new ClientIpResolver(['127.0.0.0/8', '::1/128', '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7']);

  it('uses the socket peer when it is not a trusted proxy (X-Forwarded-For ignored)', () => {
    expect(defaults.resolve('203.0.113.9', '198.51.100.1')).toBe('203.0.113.9');
  });

  it('takes the right-most untrusted hop when the peer is trusted', () => {
    expect(defaults.resolve('127.0.0.1', '198.51.100.1')).toBe('198.51.100.1');
    // The client forged a left-most entry; the proxies appended the real address and themselves.
    expect(defaults.resolve('10.0.0.5', '1.1.1.1, 198.51.100.7, 10.0.0.4')).toBe('198.51.100.7');
    expect(defaults.resolve('::ffff:127.0.0.1', ['9.9.9.9', '198.51.100.8'])).toBe('198.51.100.8');
  });

  it('falls back to the left-most hop when every hop is trusted, and to the peer without the header', () => {
    expect(defaults.resolve('127.0.0.1', '10.1.1.1, 192.168.1.1')).toBe('10.1.1.1');
    expect(defaults.resolve('127.0.0.1', undefined)).toBe('127.0.0.1');
  });

  it('stops at a malformed hop and keeps the last address a trusted proxy vouched for', () => {
    expect(defaults.resolve('127.0.0.1', 'garbage')).toBe('127.0.0.1');
    expect(defaults.resolve('127.0.0.1', '198.51.100.1, not-an-ip, 10.0.0.1')).toBe('10.0.0.1');
  });

  it('trusts nobody with an empty list', () => {
    const none = new ClientIpResolver([]);
    expect(none.resolve('127.0.0.1', '198.51.100.1')).toBe('127.0.0.1');
  });

  it('handles IPv6 peers and hops', () => {
    expect(defaults.resolve('::1', '2001:db8::1')).toBe('2001:db8::1');
    expect(defaults.resolve('fd00::2', '[2001:db8::5]:443')).toBe('2001:db8::5');
  });
});

describe('normalize', () => {
  it('canonicalises addresses and rejects junk', () => {
    expect(normalize('::ffff:10.0.0.1')).toBe('10.0.0.1');
    expect(normalize(' 198.51.100.2:8080 ')).toBe('198.51.100.2');
    expect(normalize('fe80::1%eth0')).toBe('fe80::1');
    expect(normalize('2001:DB8::1')).toBe('2001:db8::1');
    expect(normalize('unknown')).toBe('');
  });
});

describe('the default trusted proxies (docs/security.md "Operator lockouts and trusted proxies")', () => {
  const rotating = Array.from({ length: 20 }, (_, i) => `198.51.100.${i + 1}`);
  const production = {
    NODE_ENV: 'production',
    ADMIN_TOKEN: 'a-long-operator-token',
    API_KEY_PEPPER: 'p'.repeat(32),
    GATEWAY_ENCRYPTION_KEY: 'k'.repeat(32),
    SMTP_URL: 'smtp://mail.example.co:587',
    MAIL_FROM: 'Pagos <no-reply@pagos.example.co>',
  };

  it.each([
    ['development', {}],
    ['production', production],
  ] as const)('%s: an in-cluster or VPN caller rotating X-Forwarded-For is counted by its socket address', (_, env) => {
    const ips = new ClientIpResolver(loadConfig(env).trustedProxies);
    for (const peer of ['10.4.7.21', '172.20.0.9', '192.168.1.50', 'fd12::7', '100.64.3.3']) {
      expect(new Set(rotating.map((xff) => ips.resolve(peer, xff)))).toEqual(new Set([peer]));
    }
  });

  it('development trusts loopback (a proxy on the same host; the tests), production nothing', () => {
    expect(new ClientIpResolver(loadConfig({}).trustedProxies).resolve('127.0.0.1', '198.51.100.1')).toBe('198.51.100.1');
    expect(new ClientIpResolver(loadConfig(production).trustedProxies).resolve('127.0.0.1', '198.51.100.1')).toBe('127.0.0.1');
  });

  it('an ingress controller named explicitly is believed, and only it', () => {
    const ips = new ClientIpResolver(loadConfig({ ...production, TRUSTED_PROXIES: '10.12.0.16/28' }).trustedProxies);
    expect(ips.resolve('10.12.0.17', '198.51.100.1')).toBe('198.51.100.1');
    expect(ips.resolve('10.12.0.99', '198.51.100.1')).toBe('10.12.0.99');
  });
});
