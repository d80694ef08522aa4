import { ERRORS } from '@wallet/platform';
import { ApiKeySchema, CreatedApiKeySchema } from '../src/api/admin/api-keys/schemas.js';
import { CompanySchema } from '../src/api/admin/companies/schemas.js';
import { FeeConfigSchema } from '../src/api/admin/ledger/schemas.js';
import { MovementSchema } from '../src/api/wallets/schemas.js';
import { startStack, type Stack } from './support/stack.js';
import { adminOf, client, expectNoInternals, type Client } from './support/http.js';
import { sql } from './support/sql.js';

let stack: Stack;
let api: Client;
let admin: ReturnType<typeof adminOf>;
let token: string;

beforeAll(async () => {
  stack = await startStack({ RATE_LIMIT_READS: '100000' });
  api = client(stack.gw.url);
  token = stack.gw.adminToken;
  admin = adminOf(api, token);
});
afterAll(() => stack?.stop());

const UNKNOWN_ID = '6f1c2c1e-0000-4000-8000-000000000001';

function expectInvalid(r: { status: number; body: any; text: string }, ...paths: string[]): void {
  expect(r.status).toBe(400);
  expect(r.body.error).toBe('INVALID_REQUEST');
  expect(r.body.message).toBe(ERRORS.INVALID_REQUEST.message);
  expect(Array.isArray(r.body.details.fields)).toBe(true);
  for (const f of r.body.details.fields) expect(f).toEqual({ path: expect.any(String), message: expect.any(String) });
  for (const p of paths) expect(r.body.details.fields.map((f: any) => f.path)).toContain(p);
  expectNoInternals(r.text);
}

describe('POST /admin/companies', () => {
  it('creates an ACTIVE company with both wallets at zero by default', async () => {
    const r = await api.post('/admin/companies', { token, body: { name: 'Comercializadora Andina S.A.S.', nit: '900123456-7', taxRegime: 'COMMON' } });
    expect(r.status).toBe(201);
    expect(CompanySchema.parse(r.body)).toBeTruthy();
    expect(r.body).toMatchObject({ name: 'Comercializadora Andina S.A.S.', nit: '900123456-7', taxRegime: 'COMMON', status: 'ACTIVE', multiSigThreshold: 0 });
    expect(r.body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.body.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    const key = await admin.issueKey(r.body.id, 'READ');
    const bal = await api.get('/wallets/balance', { token: key.key });
    expect(bal.body.wallets.map((w: any) => [w.rail, w.availableCents])).toEqual([
      ['BREB', '0'],
      ['ACH', '0'],
    ]);
  });

  it('takes multiSigThreshold and the wallets to open', async () => {
    const c = await admin.createCompany({ taxRegime: 'SIMPLE', multiSigThreshold: 2, wallets: ['BREB'] });
    expect(c).toMatchObject({ taxRegime: 'SIMPLE', multiSigThreshold: 2 });
    const key = await admin.issueKey(c.id, 'READ');
    expect((await api.get('/wallets/balance', { token: key.key })).body.wallets.map((w: any) => w.rail)).toEqual(['BREB']);
  });

  it('rejects bad bodies with the fields named', async () => {
    expectInvalid(await api.post('/admin/companies', { token, body: {} }), 'name', 'nit', 'taxRegime');
    expectInvalid(await api.post('/admin/companies', { token, body: { name: 'X', nit: '900123456', taxRegime: 'OTHER' } }), 'taxRegime');
    expectInvalid(await api.post('/admin/companies', { token, body: { name: 'X', nit: 'abc', taxRegime: 'COMMON' } }), 'nit');
    expectInvalid(
      await api.post('/admin/companies', { token, body: { name: 'X', nit: '900123456', taxRegime: 'COMMON', multiSigThreshold: 1.5 } }),
      'multiSigThreshold',
    );
    expectInvalid(
      await api.post('/admin/companies', { token, body: { name: 'X', nit: '900123456', taxRegime: 'COMMON', multiSigThreshold: '2' } }),
      'multiSigThreshold',
    );
    expectInvalid(
      await api.post('/admin/companies', { token, body: { name: 'X', nit: '900123456', taxRegime: 'COMMON', wallets: ['BREB', 'BREB'] } }),
      'wallets',
    );
    expectInvalid(await api.post('/admin/companies', { token, body: { name: 'X', nit: '900123456', taxRegime: 'COMMON', wallets: ['PSE'] } }), 'wallets.0');
    expectInvalid(await api.post('/admin/companies', { token, body: { name: 'X', nit: '900123456', taxRegime: 'COMMON', extra: true } }), 'extra');
    expectInvalid(await api.post('/admin/companies', { token, body: { name: '   ', nit: '900123456', taxRegime: 'COMMON' } }), 'name');
    expectInvalid(await api.post('/admin/companies', { token, body: [1, 2] }), '');
    expectInvalid(await api.post('/admin/companies', { token }), '');
  });

  it('creates nothing when the ledger is unreachable (no half-created company)', async () => {
    const broken = await stack.extraGateway({ LEDGER_GRPC_ADDR: '127.0.0.1:1', GRPC_DEADLINE_MS: '500' });
    const b = client(broken.url);
    const nit = '811999888-1';
    const r = await b.post('/admin/companies', { token: broken.adminToken, body: { name: 'Sin Ledger', nit, taxRegime: 'COMMON' } });
    expect(r.status).toBe(503);
    expect(r.body).toEqual({ error: 'SERVICE_UNAVAILABLE', message: ERRORS.SERVICE_UNAVAILABLE.message });
    // Same database: nothing was written.
    expect(await sql(stack.db.url, 'select 1 from gateway.companies where nit = $1', [nit])).toHaveLength(0);
  });
});

describe('GET/PATCH /admin/companies/{id}', () => {
  it('reads and changes every patchable field', async () => {
    const c = await admin.createCompany();
    const got = await api.get(`/admin/companies/${c.id}`, { token });
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({
      id: c.id,
      counterpartyDailyLimitCents: 5_000_000_000,
      counterpartyMonthlyLimitCents: 50_000_000_000,
      rateLimitMultiplier: 1,
    });
    const r = await admin.patch(c.id, {
      status: 'SUSPENDED',
      taxRegime: 'SIMPLE',
      multiSigThreshold: 3,
      counterpartyDailyLimitCents: 1_000_000,
      counterpartyMonthlyLimitCents: 9_000_000,
      rateLimitMultiplier: 2.5,
    });
    expect(r.status).toBe(200);
    expect(CompanySchema.parse(r.body)).toBeTruthy();
    expect(r.body).toMatchObject({
      id: c.id,
      status: 'SUSPENDED',
      taxRegime: 'SIMPLE',
      multiSigThreshold: 3,
      counterpartyDailyLimitCents: 1_000_000,
      counterpartyMonthlyLimitCents: 9_000_000,
      rateLimitMultiplier: 2.5,
    });
    expect((await api.get(`/admin/companies/${c.id}`, { token })).body).toEqual(r.body);
  });

  it('validates the patch', async () => {
    const c = await admin.createCompany();
    expectInvalid(await admin.patch(c.id, {}), '');
    expectInvalid(await admin.patch(c.id, { status: 'DELETED' }), 'status');
    expectInvalid(await admin.patch(c.id, { counterpartyDailyLimitCents: -1 }), 'counterpartyDailyLimitCents');
    expectInvalid(await admin.patch(c.id, { counterpartyDailyLimitCents: 2 ** 53 }), 'counterpartyDailyLimitCents');
    expectInvalid(await admin.patch(c.id, { counterpartyMonthlyLimitCents: '100' }), 'counterpartyMonthlyLimitCents');
    expectInvalid(await admin.patch(c.id, { rateLimitMultiplier: 0 }), 'rateLimitMultiplier');
  });

  it('unknown or malformed ids → 404 COMPANY_NOT_FOUND', async () => {
    for (const id of [UNKNOWN_ID, 'not-a-uuid', '1']) {
      const g = await api.get(`/admin/companies/${id}`, { token });
      expect(g.status).toBe(404);
      expect(g.body).toEqual({ error: 'COMPANY_NOT_FOUND', message: ERRORS.COMPANY_NOT_FOUND.message });
      expect((await admin.patch(id, { status: 'ACTIVE' })).body.error).toBe('COMPANY_NOT_FOUND');
      expect((await api.post(`/admin/companies/${id}/api-keys`, { token, body: { scope: 'READ', label: 'x' } })).body.error).toBe('COMPANY_NOT_FOUND');
      expect((await api.get(`/admin/companies/${id}/api-keys`, { token })).body.error).toBe('COMPANY_NOT_FOUND');
      expect((await admin.credit(id, 'BREB', 100, 'r')).body.error).toBe('COMPANY_NOT_FOUND');
    }
  });
});

describe('API keys', () => {
  it('issues (key shown once), lists without secrets, revokes idempotently', async () => {
    const c = await admin.createCompany();
    const created = await api.post(`/admin/companies/${c.id}/api-keys`, { token, body: { scope: 'WRITE', label: 'produccion' } });
    expect(created.status).toBe(201);
    expect(CreatedApiKeySchema.parse(created.body)).toBeTruthy();
    expect(Object.keys(created.body).sort()).toEqual(['apiVersion', 'createdAt', 'id', 'key', 'label', 'prefix', 'scope']);
    const second = await admin.issueKey(c.id, 'READ', 'staging');

    const list = await api.get(`/admin/companies/${c.id}/api-keys`, { token });
    expect(list.status).toBe(200);
    expect(list.body.items).toHaveLength(2);
    for (const k of list.body.items) expect(ApiKeySchema.parse(k)).toBeTruthy();
    expect(list.body.items.map((k: any) => [k.id, k.scope, k.label, k.revokedAt])).toEqual([
      [created.body.id, 'WRITE', 'produccion', null],
      [second.id, 'READ', 'staging', null],
    ]);
    expect(list.text).not.toContain(created.body.key);
    expect(list.text).not.toContain(second.key);

    const r1 = await api.del(`/admin/companies/${c.id}/api-keys/${second.id}`, { token });
    expect(r1.status).toBe(200);
    expect(r1.body).toMatchObject({ id: second.id, revokedAt: expect.any(String) });
    const r2 = await api.del(`/admin/companies/${c.id}/api-keys/${second.id}`, { token });
    expect(r2.status).toBe(200);
    expect(r2.body.revokedAt).toBe(r1.body.revokedAt);
  });

  it('stores only a hash of the key', async () => {
    const c = await admin.createCompany();
    const k = await admin.issueKey(c.id, 'READ');
    const rows = await sql(stack.db.url, 'select * from gateway.api_keys where id = $1', [k.id]);
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(k.key);
    expect(JSON.stringify(rows)).not.toContain(k.key.slice(12));
    expect(rows[0].key_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('validates scope and label; another company cannot revoke the key', async () => {
    const a = await admin.createCompany();
    const b = await admin.createCompany();
    expectInvalid(await api.post(`/admin/companies/${a.id}/api-keys`, { token, body: { scope: 'ADMIN', label: 'x' } }), 'scope');
    expectInvalid(await api.post(`/admin/companies/${a.id}/api-keys`, { token, body: { scope: 'READ' } }), 'label');
    const k = await admin.issueKey(a.id, 'READ');
    const wrong = await api.del(`/admin/companies/${b.id}/api-keys/${k.id}`, { token });
    expect(wrong.status).toBe(404);
    expect(wrong.body.error).toBe('API_KEY_NOT_FOUND');
    expect((await api.del(`/admin/companies/${a.id}/api-keys/nope`, { token })).body.error).toBe('API_KEY_NOT_FOUND');
    // Still valid: the wrong company's attempt changed nothing.
    expect((await api.get('/wallets/balance', { token: k.key })).status).toBe(200);
  });
});

describe('POST /admin/companies/{id}/wallets/{rail}/credit', () => {
  it('credits a wallet with a COMPLETED BALANCE_ADD movement (strings for money)', async () => {
    const c = await admin.createCompany();
    const r = await admin.credit(c.id, 'BREB', 1_500_000, 'fondeo-1');
    expect(r.status).toBe(201);
    expect(MovementSchema.parse(r.body)).toBeTruthy();
    expect(r.body).toMatchObject({
      type: 'BALANCE_ADD',
      rail: 'BREB',
      status: 'COMPLETED',
      amount: '1500000',
      totalFee: '0',
      ivaAmount: '0',
      netAmount: '1500000',
      reference: 'fondeo-1',
    });
    expect(r.body.completedAt).toEqual(expect.any(String));
    const key = await admin.issueKey(c.id, 'READ');
    const bal = await api.get('/wallets/balance', { token: key.key });
    expect(bal.body.wallets[0]).toMatchObject({ rail: 'BREB', availableCents: '1500000', version: expect.any(Number) });
  });

  it('is idempotent on reference: same body → same movement; different body → 409 REFERENCE_CONFLICT', async () => {
    const c = await admin.createCompany();
    const first = await admin.credit(c.id, 'ACH', 50_000, 'ref-idem');
    const again = await admin.credit(c.id, 'ACH', 50_000, 'ref-idem');
    expect(again.status).toBe(201);
    expect(again.body.id).toBe(first.body.id);
    const conflict = await admin.credit(c.id, 'ACH', 60_000, 'ref-idem');
    expect(conflict.status).toBe(409);
    expect(conflict.body).toEqual({ error: 'REFERENCE_CONFLICT', message: ERRORS.REFERENCE_CONFLICT.message });
    expect((await admin.credit(c.id, 'BREB', 50_000, 'ref-idem')).status).toBe(409);
    const key = await admin.issueKey(c.id, 'READ');
    expect((await api.get('/wallets/balance', { token: key.key })).body.consolidated.availableCents).toBe('50000');
  });

  it('concurrent identical credits create one movement', async () => {
    const c = await admin.createCompany();
    const results = await Promise.all(Array.from({ length: 8 }, () => admin.credit(c.id, 'BREB', 777, 'ref-concurrent')));
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(201));
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    const key = await admin.issueKey(c.id, 'READ');
    expect((await api.get('/wallets/balance', { token: key.key })).body.wallets[0].availableCents).toBe('777');
  });

  it('the same reference on two companies is two credits', async () => {
    const a = await admin.createCompany();
    const b = await admin.createCompany();
    const ra = await admin.credit(a.id, 'BREB', 100, 'shared-ref');
    const rb = await admin.credit(b.id, 'BREB', 200, 'shared-ref');
    expect(ra.status).toBe(201);
    expect(rb.status).toBe(201);
    expect(ra.body.id).not.toBe(rb.body.id);
  });

  it('rejects bad amounts and references', async () => {
    const c = await admin.createCompany();
    for (const amountCents of [1.5, '100', -5, 0, 2 ** 53, 1e21, null]) {
      expectInvalid(await api.post(`/admin/companies/${c.id}/wallets/BREB/credit`, { token, body: { amountCents, reference: 'r' } }), 'amountCents');
    }
    // 2^53 written literally, beyond what a double holds exactly.
    expectInvalid(
      await api.post(`/admin/companies/${c.id}/wallets/BREB/credit`, {
        token,
        raw: '{"amountCents": 9007199254740993, "reference": "r"}',
        headers: { 'content-type': 'application/json' },
      }),
      'amountCents',
    );
    expectInvalid(await api.post(`/admin/companies/${c.id}/wallets/BREB/credit`, { token, body: { amountCents: 100 } }), 'reference');
    expectInvalid(
      await api.post(`/admin/companies/${c.id}/wallets/BREB/credit`, { token, body: { amountCents: 100, reference: 'x'.repeat(101) } }),
      'reference',
    );
    expectInvalid(await api.post(`/admin/companies/${c.id}/wallets/PSE/credit`, { token, body: { amountCents: 100, reference: 'r' } }), 'params.rail');
  });

  it('a rail the company has no wallet for is refused by the ledger', async () => {
    const c = await admin.createCompany({ wallets: ['BREB'] });
    const r = await admin.credit(c.id, 'ACH', 100, 'no-ach');
    expect(r.status).toBe(404);
    expect(['WALLET_NOT_PROVISIONED', 'FAST_WALLET_MISSING']).toContain(r.body.error);
  });
});

describe('PUT /admin/fees/{operation}', () => {
  it('sets the default and a per-company fee', async () => {
    const c = await admin.createCompany();
    const d = await admin.setFee('ACH_OUTFLOW', { fixedFeeCents: 300, variableBps: 0 });
    expect(d.status).toBe(200);
    expect(FeeConfigSchema.parse(d.body)).toBeTruthy();
    expect(d.body).toMatchObject({ operation: 'ACH_OUTFLOW', companyId: null, fixedFeeCents: 300, variableBps: 0 });
    const own = await admin.setFee('ACH_OUTFLOW', { fixedFeeCents: 100, variableBps: 25, companyId: c.id });
    expect(own.body).toMatchObject({ operation: 'ACH_OUTFLOW', companyId: c.id, fixedFeeCents: 100, variableBps: 25 });
  });

  it('validates operation, amounts and company', async () => {
    expectInvalid(await admin.setFee('WIRE', { fixedFeeCents: 1, variableBps: 1 }), 'params.operation');
    expectInvalid(await admin.setFee('PSE_INFLOW', { fixedFeeCents: -1, variableBps: 1 }), 'fixedFeeCents');
    expectInvalid(await admin.setFee('PSE_INFLOW', { fixedFeeCents: 1, variableBps: 10_001 }), 'variableBps');
    expectInvalid(await admin.setFee('PSE_INFLOW', { fixedFeeCents: 1, variableBps: 2.5 }), 'variableBps');
    expectInvalid(await admin.setFee('PSE_INFLOW', { fixedFeeCents: 1, variableBps: 1, companyId: 'x' }), 'companyId');
    const r = await admin.setFee('PSE_INFLOW', { fixedFeeCents: 1, variableBps: 1, companyId: UNKNOWN_ID });
    expect(r.status).toBe(404);
    expect(r.body.error).toBe('COMPANY_NOT_FOUND');
  });
});
