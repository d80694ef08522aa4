import pg from 'pg';
import { ERRORS } from '@wallet/platform';
import { eventually } from '@wallet/platform/testing';
import { startStack, type Stack } from './support/stack.js';
import { adminOf, client, type Client } from './support/http.js';

let stack: Stack;
let api: Client;
let admin: ReturnType<typeof adminOf>;

beforeAll(async () => {
  stack = await startStack({ RATE_LIMIT_READS: '100000' });
  api = client(stack.gw.url);
  admin = adminOf(api, stack.gw.adminToken);
});
afterAll(() => stack?.stop());

function expectError(r: { status: number; body: any }, status: number, code: keyof typeof ERRORS): void {
  expect({ status: r.status, error: r.body?.error }).toEqual({ status, error: code });
  expect(r.body.message).toBe(ERRORS[code].message);
}

/** A second gateway (cache TTL `ttlMs`) that has already cached a fresh READ key of a new company. */
async function keyCachedOnAnotherReplica(ttlMs: number) {
  const other = await stack.extraGateway({ API_KEY_CACHE_TTL_MS: String(ttlMs) });
  const otherApi = client(other.url);
  const company = await admin.createCompany();
  const key = await admin.issueKey(company.id, 'READ');
  expect((await otherApi.get('/wallets/balance', { token: key.key })).status).toBe(200);
  return { otherApi, company, key };
}

describe('client API key authentication', () => {
  it('no Authorization → 401 AUTH_REQUIRED', async () => {
    expectError(await api.get('/wallets/balance'), 401, 'AUTH_REQUIRED');
  });

  it('malformed, unknown or wrong-environment keys → 401 INVALID_API_KEY', async () => {
    for (const token of ['nope', 'wk_test_short', `wk_test_${'A'.repeat(40)}`, `wk_live_${'A'.repeat(40)}`]) {
      expectError(await api.get('/wallets/balance', { token }), 401, 'INVALID_API_KEY');
    }
    expectError(await api.get('/wallets/balance', { headers: { authorization: 'Basic dXNlcjpwYXNz' } }), 401, 'INVALID_API_KEY');
    expectError(await api.get('/wallets/balance', { headers: { authorization: 'Bearer' } }), 401, 'INVALID_API_KEY');
  });

  it('a valid key reads its company; last use is recorded for audit', async () => {
    const company = await admin.createCompany();
    const key = await admin.issueKey(company.id, 'READ');
    expect(key.key).toMatch(/^wk_test_[0-9A-Za-z]{40}$/);
    expect(key.prefix).toBe(key.key.slice(0, 12));
    const r = await api.get('/wallets/balance', { token: key.key });
    expect(r.status).toBe(200);
    // last_used_at is written off the request path: poll for it.
    let lastUsedAt: string | null = null;
    for (let i = 0; i < 50 && !lastUsedAt; i++) {
      const list = await api.get(`/admin/companies/${company.id}/api-keys`, { token: stack.gw.adminToken });
      lastUsedAt = list.body.items.find((k: any) => k.id === key.id)?.lastUsedAt ?? null;
      if (!lastUsedAt) await new Promise((res) => setTimeout(res, 50));
    }
    expect(lastUsedAt).toEqual(expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/));
  });

  it('a revoked key stops working at once', async () => {
    const company = await admin.createCompany();
    const key = await admin.issueKey(company.id, 'WRITE');
    expect((await api.get('/wallets/balance', { token: key.key })).status).toBe(200); // now cached
    const revoked = await api.del(`/admin/companies/${company.id}/api-keys/${key.id}`, { token: stack.gw.adminToken });
    expect(revoked.status).toBe(200);
    expect(revoked.body.revokedAt).toEqual(expect.any(String));
    expectError(await api.get('/wallets/balance', { token: key.key }), 401, 'INVALID_API_KEY');
  });

  it('a suspended company → 403 COMPANY_INACTIVE (at once), and back when reactivated', async () => {
    const company = await admin.createCompany();
    const key = await admin.issueKey(company.id, 'READ');
    expect((await api.get('/wallets/balance', { token: key.key })).status).toBe(200);
    expect((await admin.patch(company.id, { status: 'SUSPENDED' })).body.status).toBe('SUSPENDED');
    expectError(await api.get('/wallets/balance', { token: key.key }), 403, 'COMPANY_INACTIVE');
    await admin.patch(company.id, { status: 'ACTIVE' });
    expect((await api.get('/wallets/balance', { token: key.key })).status).toBe(200);
  });

  it('a revoked key of a suspended company is still INVALID_API_KEY (key checked first)', async () => {
    const company = await admin.createCompany();
    const key = await admin.issueKey(company.id, 'READ');
    await api.del(`/admin/companies/${company.id}/api-keys/${key.id}`, { token: stack.gw.adminToken });
    await admin.patch(company.id, { status: 'SUSPENDED' });
    expectError(await api.get('/wallets/balance', { token: key.key }), 401, 'INVALID_API_KEY');
  });

  it('revocation on another replica is seen within the cache TTL', async () => {
    const { otherApi, company, key } = await keyCachedOnAnotherReplica(300);
    await api.del(`/admin/companies/${company.id}/api-keys/${key.id}`, { token: stack.gw.adminToken });
    await new Promise((res) => setTimeout(res, 350));
    expectError(await otherApi.get('/wallets/balance', { token: key.key }), 401, 'INVALID_API_KEY');
  });
});

describe("the API-key cache's change feed (every replica forgets a changed key or company at once)", () => {
  /** Polls `f` (every 20 ms, up to `ms`); the platform's `eventually`, whose time-out fails the test. */
  const waitFor = (f: () => Promise<boolean>, ms = 1_500) => eventually(f, ms, 20);
  const sql = async (text: string, params: unknown[] = []) => {
    const c = new pg.Client({ connectionString: stack.db.url });
    await c.connect();
    try {
      return (await c.query(text, params)).rows;
    } finally {
      await c.end();
    }
  };

  it('a key revoked on one replica, or a company suspended by SQL, stops working on another long before its cache would expire', async () => {
    // Five minutes of cache while the feed is up: only the feed can make the other replica forget in time.
    const other = await stack.extraGateway({ API_KEY_CACHE_TTL_MS: '5000' });
    const otherApi = client(other.url);
    const company = await admin.createCompany();
    const key = await admin.issueKey(company.id, 'READ');
    const second = await admin.issueKey(company.id, 'READ');
    expect(
      await waitFor(
        async () => (await sql(`select 1 from pg_stat_activity where datname = current_database() and query ilike 'listen gateway_auth%'`)).length >= 2,
        5_000,
      ),
    ).toBe(true);
    expect((await otherApi.get('/wallets/balance', { token: key.key })).status).toBe(200); // cached there
    expect((await otherApi.get('/wallets/balance', { token: second.key })).status).toBe(200);
    await api.del(`/admin/companies/${company.id}/api-keys/${key.id}`, { token: stack.gw.adminToken });
    expect(await waitFor(async () => (await otherApi.get('/wallets/balance', { token: key.key })).status === 401)).toBe(true);
    // Not through the API at all: the database trigger notifies whoever writes.
    await sql(`update gateway.companies set status = 'SUSPENDED' where id = $1`, [company.id]);
    expect(await waitFor(async () => (await otherApi.get('/wallets/balance', { token: second.key })).status !== 200)).toBe(true);
  });

  it('with the feed lost, the cache is emptied and entries live the short TTL until it is back', async () => {
    const { otherApi, key } = await keyCachedOnAnotherReplica(300);
    await sql(`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and query ilike 'listen gateway_auth%'`);
    // A change nobody is listening for: each replica learns nothing, yet forgets within the short TTL.
    await sql(`update gateway.api_keys set revoked_at = now() where id = $1`, [key.id]);
    expect(await waitFor(async () => (await otherApi.get('/wallets/balance', { token: key.key })).status === 401, 2_000)).toBe(true);
    // and it listens again
    expect(
      await waitFor(
        async () => (await sql(`select 1 from pg_stat_activity where datname = current_database() and query ilike 'listen gateway_auth%'`)).length >= 2,
        5_000,
      ),
    ).toBe(true);
  });
});

describe('scopes', () => {
  it('READ and WRITE keys both read; WRITE includes READ', async () => {
    const company = await admin.createCompany();
    for (const scope of ['READ', 'WRITE'] as const) {
      const key = await admin.issueKey(company.id, scope);
      expect((await api.get('/wallets/balance', { token: key.key })).status).toBe(200);
      expect((await api.get('/dictionaries/banks/ach', { token: key.key })).status).toBe(200);
    }
  });
});

describe('areas closed to API keys', () => {
  it('an API key on /admin, /auth or /dashboard → 403 API_KEY_AUTH_NOT_ALLOWED', async () => {
    const company = await admin.createCompany();
    const key = await admin.issueKey(company.id, 'WRITE');
    expectError(await api.get(`/admin/companies/${company.id}`, { token: key.key }), 403, 'API_KEY_AUTH_NOT_ALLOWED');
    expectError(
      await api.post('/admin/companies', { token: key.key, body: { name: 'x', nit: '900123456', taxRegime: 'COMMON' } }),
      403,
      'API_KEY_AUTH_NOT_ALLOWED',
    );
    expectError(await api.post('/auth/login', { token: key.key, body: { email: 'a@b.co', password: 'x' } }), 403, 'API_KEY_AUTH_NOT_ALLOWED');
    expectError(await api.get('/dashboard/approvals', { token: key.key }), 403, 'API_KEY_AUTH_NOT_ALLOWED');
    // Even a revoked or made-up key: the area rule does not depend on the key being valid.
    expectError(await api.get('/admin/companies', { token: `wk_live_${'x'.repeat(40)}` }), 403, 'API_KEY_AUTH_NOT_ALLOWED');
  });

  it('/admin without a token → 401 AUTH_REQUIRED; with a wrong one → 401 INVALID_ADMIN_TOKEN', async () => {
    expectError(await api.post('/admin/companies', { body: { name: 'x', nit: '900123456', taxRegime: 'COMMON' } }), 401, 'AUTH_REQUIRED');
    expectError(await api.get('/admin/companies/6f1c2c1e-0000-4000-8000-000000000001', { token: 'wrong-token' }), 401, 'INVALID_ADMIN_TOKEN');
    expectError(await api.get('/admin/companies/6f1c2c1e-0000-4000-8000-000000000001', { token: `${stack.gw.adminToken}x` }), 401, 'INVALID_ADMIN_TOKEN');
    expectError(
      await api.get('/admin/companies/6f1c2c1e-0000-4000-8000-000000000001', { headers: { authorization: stack.gw.adminToken } }),
      401,
      'INVALID_ADMIN_TOKEN',
    );
  });

  it('the admin token is not a client credential', async () => {
    expectError(await api.get('/wallets/balance', { token: stack.gw.adminToken }), 401, 'INVALID_API_KEY');
  });
});
