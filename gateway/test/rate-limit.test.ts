import { ERRORS } from '@wallet/platform';
import type { StartedGateway } from '../src/testing.js';
import { startStack, type Stack } from './support/stack.js';
import { adminOf, client, type Client } from './support/http.js';

/**
 * Small limits so the tests can reach them. Each test uses its own client IP (through
 * X-Forwarded-For, honoured because the socket peer 127.0.0.1 is a trusted proxy by default: only
 * loopback is, outside production) and its own keys, so counters do not leak between tests. Every
 * request counts per client IP and per credential (the API key): a test of the IP counter uses a
 * fresh key per request, a test of the key budget a fresh IP per request.
 */
let stack: Stack;
let api: Client;
let admin: ReturnType<typeof adminOf>;
let ipSeq = 0;
const nextIp = () => `198.51.100.${++ipSeq}`;

beforeAll(async () => {
  stack = await startStack({ RATE_LIMIT_READS: '3' });
  api = client(stack.gw.url);
  admin = adminOf(api, stack.gw.adminToken);
});
afterAll(() => stack?.stop());

async function readKey(body: Record<string, unknown> = {}): Promise<string> {
  const c = await admin.createCompany(body);
  return (await admin.issueKey(c.id, 'READ')).key;
}

const getBalance = (g: Client, key: string, ip?: string) => g.get('/wallets/balance', { token: key, headers: ip ? { 'x-forwarded-for': ip } : {} });

describe('rate limits', () => {
  it('Reads: N per window, then 429 with Retry-After, retryAfter and RateLimit-* headers', async () => {
    const key = await readKey();
    const ip = nextIp();
    const seen: Array<[number, string | null]> = [];
    for (let i = 0; i < 3; i++) {
      const r = await getBalance(api, key, ip);
      expect(r.status).toBe(200);
      expect(r.headers.get('ratelimit-limit')).toBe('3');
      expect(Number(r.headers.get('ratelimit-reset'))).toBeGreaterThanOrEqual(1);
      expect(Number(r.headers.get('ratelimit-reset'))).toBeLessThanOrEqual(60);
      seen.push([r.status, r.headers.get('ratelimit-remaining')]);
    }
    // Remaining counts the current request.
    expect(seen.map(([, rem]) => rem)).toEqual(['2', '1', '0']);
    const limited = await getBalance(api, key, ip);
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited.body).toEqual({ error: 'RATE_LIMIT_EXCEEDED', message: ERRORS.RATE_LIMIT_EXCEEDED.message, retryAfter });
    expect(limited.headers.get('ratelimit-remaining')).toBe('0');
    expect(limited.headers.get('ratelimit-limit')).toBe('3');
    expect(limited.headers.get('x-request-id')).toEqual(expect.any(String));
  });

  it('the counter is per class: dictionaries share Reads, admin routes count in their own class (Admin)', async () => {
    const key = await readKey();
    const ip = nextIp();
    await getBalance(api, key, ip);
    await api.get('/dictionaries/banks/ach', { token: key, headers: { 'x-forwarded-for': ip } });
    await getBalance(api, key, ip);
    expect((await api.get('/dictionaries/banks/ach', { token: key, headers: { 'x-forwarded-for': ip } })).status).toBe(429);
    const a = await api.get('/admin/companies/6f1c2c1e-0000-4000-8000-000000000001', { token: stack.gw.adminToken, headers: { 'x-forwarded-for': ip } });
    expect(a.status).toBe(404);
    // Not refused by the exhausted Reads counter: the admin class (300/min by default) has room.
    expect(a.headers.get('ratelimit-limit')).toBe('300');
  });

  it('the counter is per client IP: another key from the same IP is refused, from another IP it is not', async () => {
    const key = await readKey();
    const ip = nextIp();
    for (let i = 0; i < 3; i++) await getBalance(api, key, ip);
    expect((await getBalance(api, key, ip)).status).toBe(429);
    const other = await readKey();
    expect((await getBalance(api, other, ip)).status).toBe(429);
    expect((await getBalance(api, other, nextIp())).status).toBe(200);
  });

  it('one API key spread over many client IPs has its own budget: the documented allowance, not one per IP (issue 36)', async () => {
    const key = await readKey();
    for (let i = 0; i < 3; i++) {
      const r = await getBalance(api, key, nextIp());
      expect([i, r.status, r.headers.get('ratelimit-limit'), r.headers.get('ratelimit-remaining')]).toEqual([i, 200, '3', String(2 - i)]);
    }
    const ip = nextIp();
    const limited = await getBalance(api, key, ip);
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter >= 1 && retryAfter <= 60).toBe(true);
    expect(limited.body).toEqual({ error: 'RATE_LIMIT_EXCEEDED', message: ERRORS.RATE_LIMIT_EXCEEDED.message, retryAfter });
    expect([limited.headers.get('ratelimit-limit'), limited.headers.get('ratelimit-remaining')]).toEqual(['3', '0']);
    for (let i = 0; i < 5; i++) expect((await getBalance(api, key, nextIp())).status).toBe(429);
    // The refusal charged nothing to that IP (a 429 consumes no quota, in either counter).
    const other = await getBalance(api, await readKey(), ip);
    expect([other.status, other.headers.get('ratelimit-remaining')]).toEqual([200, '2']);
  });

  it('the key budget scales with the multiplier and with RATE_LIMIT_PER_KEY_FACTOR', async () => {
    const c = await admin.createCompany();
    const key = (await admin.issueKey(c.id, 'READ')).key;
    await admin.patch(c.id, { rateLimitMultiplier: 2 });
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await getBalance(api, key, nextIp())).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429]);
    const g = client((await stack.extraGateway({ RATE_LIMIT_READS: '2', RATE_LIMIT_PER_KEY_FACTOR: '2' })).url);
    const k2 = await readKey();
    const ip = nextIp();
    // Per IP still 2; per key 4 across IPs.
    expect([(await getBalance(g, k2, ip)).status, (await getBalance(g, k2, ip)).status, (await getBalance(g, k2, ip)).status]).toEqual([200, 200, 429]);
    expect([(await getBalance(g, k2, nextIp())).status, (await getBalance(g, k2, nextIp())).status, (await getBalance(g, k2, nextIp())).status]).toEqual([
      200, 200, 429,
    ]);
  });

  it('a dashboard user has a budget of its own too, whatever IPs the session comes from', async () => {
    const c = await admin.createCompany();
    const email = `presupuesto.${Date.now()}@empresa.co`;
    const password = 'Clave-de-presupuesto-2026';
    expect((await api.post(`/admin/companies/${c.id}/users`, { token: stack.gw.adminToken, body: { email, password, role: 'VIEWER' } })).status).toBe(201);
    const login = await api.post('/auth/login', { body: { email, password }, headers: { 'x-forwarded-for': nextIp() } });
    expect(login.status).toBe(200);
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++)
      statuses.push((await api.get('/dashboard/approvals', { token: login.body.token, headers: { 'x-forwarded-for': nextIp() } })).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
  });

  it('racing requests of one key from 20 IPs: exactly the budget is let through', async () => {
    const key = await readKey();
    const answers = await Promise.all(Array.from({ length: 20 }, () => getBalance(api, key, nextIp())));
    expect(answers.filter((r) => r.status === 200)).toHaveLength(3);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(17);
  });

  it('a 429 consumes no quota: the window frees exactly when the accepted requests age out', async () => {
    const g = await stack.extraGateway({ RATE_LIMIT_READS: '2', RATE_LIMIT_WINDOW_SECONDS: '2' });
    const gApi = client(g.url);
    const key = await readKey();
    const ip = nextIp();
    expect((await getBalance(gApi, key, ip)).status).toBe(200);
    expect((await getBalance(gApi, key, ip)).status).toBe(200);
    const t0 = Date.now();
    // Hammer while limited: if rejections counted, the window would never free.
    while (Date.now() - t0 < 1200) expect((await getBalance(gApi, key, ip)).status).toBe(429);
    await new Promise((r) => setTimeout(r, 2200 - (Date.now() - t0)));
    const after = await getBalance(gApi, key, ip);
    expect(after.status).toBe(200);
    expect(after.headers.get('ratelimit-remaining')).toBe('1');
  });

  it('the window rolls: a request frees its slot one window after it was made, not at a fixed boundary', async () => {
    const g = await stack.extraGateway({ RATE_LIMIT_READS: '2', RATE_LIMIT_WINDOW_SECONDS: '2' });
    const gApi = client(g.url);
    const key = await readKey();
    const ip = nextIp();
    expect((await getBalance(gApi, key, ip)).status).toBe(200); // t≈0
    await new Promise((r) => setTimeout(r, 1000));
    expect((await getBalance(gApi, key, ip)).status).toBe(200); // t≈1
    expect((await getBalance(gApi, key, ip)).status).toBe(429);
    await new Promise((r) => setTimeout(r, 1150));
    // t≈2.15: the first request left the window, the second (t≈1) has not.
    expect((await getBalance(gApi, key, ip)).status).toBe(200);
    expect((await getBalance(gApi, key, ip)).status).toBe(429);
  });

  it("limits scale with the company's rateLimitMultiplier", async () => {
    const c = await admin.createCompany();
    const key = (await admin.issueKey(c.id, 'READ')).key;
    await admin.patch(c.id, { rateLimitMultiplier: 2 });
    const ip = nextIp();
    const statuses: number[] = [];
    let limit: string | null = null;
    for (let i = 0; i < 7; i++) {
      const r = await getBalance(api, key, ip);
      statuses.push(r.status);
      limit ??= r.headers.get('ratelimit-limit');
    }
    expect(limit).toBe('6');
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429]);
  });
});

describe('client IP', () => {
  let untrusted: StartedGateway;
  let onlyOtherProxy: StartedGateway;
  beforeAll(async () => {
    untrusted = await stack.extraGateway({ RATE_LIMIT_READS: '2', TRUSTED_PROXIES: '' });
    onlyOtherProxy = await stack.extraGateway({ RATE_LIMIT_READS: '2', TRUSTED_PROXIES: '10.0.0.0/8' });
  });

  it('X-Forwarded-For is honoured when the peer is a trusted proxy (right-most untrusted hop)', async () => {
    const client1 = nextIp();
    for (let i = 0; i < 3; i++) await getBalance(api, await readKey(), client1);
    // A forged left-most entry does not change the client: the right-most untrusted hop decides.
    expect((await getBalance(api, await readKey(), `203.0.113.77, ${client1}`)).status).toBe(429);
    // 10.0.0.9 is not a trusted proxy by default (only loopback is): it is the client, not a hop.
    expect((await getBalance(api, await readKey(), `${client1}, 10.0.0.9`)).status).toBe(200);
  });

  for (const [name, gw] of [
    ['no trusted proxies', () => untrusted],
    ['a trust list without the peer', () => onlyOtherProxy],
  ] as const) {
    it(`X-Forwarded-For is ignored when the peer is not trusted (${name})`, async () => {
      const g = client(gw().url);
      // Different XFF (and another key) on every request, yet all count against the socket peer.
      expect((await getBalance(g, await readKey(), nextIp())).status).toBe(200);
      expect((await getBalance(g, await readKey(), nextIp())).status).toBe(200);
      expect((await getBalance(g, await readKey(), nextIp())).status).toBe(429);
    });
  }
});

describe('Redis outage', () => {
  it('keeps limiting in memory and reports not-ready', async () => {
    const g = await stack.extraGateway({ REDIS_URL: 'redis://127.0.0.1:1', RATE_LIMIT_READS: '2' });
    const gApi = client(g.url);
    const key = await readKey();
    const ip = nextIp();
    expect((await getBalance(gApi, key, ip)).status).toBe(200);
    const second = await getBalance(gApi, key, ip);
    expect(second.status).toBe(200);
    expect(second.headers.get('ratelimit-remaining')).toBe('0');
    const limited = await getBalance(gApi, key, ip);
    expect(limited.status).toBe(429);
    expect(limited.body.error).toBe('RATE_LIMIT_EXCEEDED');
    // The key budget holds in memory too: one key from many IPs gets the same 2.
    const spread = await readKey();
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await getBalance(gApi, spread, nextIp())).status);
    expect(statuses).toEqual([200, 200, 429, 429]);
    const ready = await fetch(`${g.opsUrl}/readyz`);
    expect(ready.status).toBe(503);
    const body = (await ready.json()) as { checks: Record<string, string> };
    expect(body.checks.redis).toMatch(/^fail/);
    expect(body.checks.postgres).toBe('ok');
    expect(body.checks.ledger).toBe('ok');
  });

  it('a healthy gateway is ready and live', async () => {
    const ready = await fetch(`${stack.gw.opsUrl}/readyz`);
    expect(ready.status).toBe(200);
    expect(((await ready.json()) as { checks: unknown }).checks).toEqual({
      postgres: 'ok',
      redis: 'ok',
      ledger: 'ok',
      transfer: 'ok',
      deposit: 'ok',
      collectKey: 'ok',
      receipt: 'ok',
      webhook: 'ok',
    });
    expect((await fetch(`${stack.gw.opsUrl}/healthz`)).status).toBe(200);
    const metrics = await (await fetch(`${stack.gw.opsUrl}/metrics`)).text();
    expect(metrics).toContain('http_server_request_duration_seconds');
  });
});
