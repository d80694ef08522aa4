import { ERRORS } from '@wallet/platform';
import { AchBankSchema } from '../src/api/dictionaries/schemas.js';
import { BalanceSchema } from '../src/api/wallets/schemas.js';
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

async function companyWithKey(body: Record<string, unknown> = {}) {
  const company = await admin.createCompany(body);
  const key = await admin.issueKey(company.id, 'READ');
  return { company, key: key.key as string };
}

describe('GET /wallets/balance', () => {
  it('answers the §4.1 shape: strings for balances, numbers for version and maxTransferAmount', async () => {
    const { company, key } = await companyWithKey({ taxRegime: 'SIMPLE' });
    await admin.credit(company.id, 'BREB', 250_000, 'f1');
    await admin.credit(company.id, 'ACH', 1_000_000, 'f2');
    await admin.credit(company.id, 'ACH', 5, 'f3');
    const r = await api.get('/wallets/balance', { token: key });
    expect(r.status).toBe(200);
    expect(r.headers.get('cache-control')).toBe('private, max-age=10');
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expect(BalanceSchema.strict().parse(r.body)).toBeTruthy();
    expect(r.body.currency).toBe('COP');
    expect(r.body.wallets).toHaveLength(2);
    const [breb, ach] = r.body.wallets;
    expect(breb).toEqual({
      rail: 'BREB',
      type: 'FAST',
      availableCents: '250000',
      pendingOutCents: '0',
      totalCents: '250000',
      version: expect.any(Number),
      maxTransferAmount: expect.any(Number),
    });
    expect(ach).toEqual({
      rail: 'ACH',
      type: 'ACH',
      availableCents: '1000005',
      pendingOutCents: '0',
      totalCents: '1000005',
      version: expect.any(Number),
      maxTransferAmount: expect.any(Number),
    });
    expect(ach.version).toBeGreaterThan(breb.version);
    expect(r.body.consolidated).toEqual({ availableCents: '1250005', pendingOutCents: '0', totalCents: '1250005', currency: 'COP' });
  });

  it('maxTransferAmount leaves room for the fee and, in the common regime, the IVA on it', async () => {
    const common = await companyWithKey({ taxRegime: 'COMMON' });
    const simple = await companyWithKey({ taxRegime: 'SIMPLE' });
    for (const c of [common, simple]) {
      await admin.setFee('BREB_OUTFLOW', { fixedFeeCents: 1_000, variableBps: 0, companyId: c.company.id });
      await admin.credit(c.company.id, 'BREB', 100_000, 'fund');
    }
    const [wc] = (await api.get('/wallets/balance', { token: common.key })).body.wallets;
    const [ws] = (await api.get('/wallets/balance', { token: simple.key })).body.wallets;
    // Fee 1,000; IVA 19% of it = 190 only in the common regime.
    expect(ws.maxTransferAmount).toBe(100_000 - 1_000);
    expect(wc.maxTransferAmount).toBe(100_000 - 1_000 - 190);
    // A tax-regime change reaches the next request (cached principal dropped).
    await admin.patch(simple.company.id, { taxRegime: 'COMMON' });
    expect((await api.get('/wallets/balance', { token: simple.key })).body.wallets[0].maxTransferAmount).toBe(100_000 - 1_190);
  });

  it('maxTransferAmount with a variable fee is the largest amount that fits', async () => {
    const c = await companyWithKey({ taxRegime: 'COMMON' });
    await admin.setFee('ACH_OUTFLOW', { fixedFeeCents: 500, variableBps: 100, companyId: c.company.id }); // 500 + 1%
    await admin.credit(c.company.id, 'ACH', 1_000_000, 'fund');
    const ach = (await api.get('/wallets/balance', { token: c.key })).body.wallets[1];
    const cost = (a: number) => {
      const fee = 500 + Math.floor((a * 100 + 5_000) / 10_000);
      return a + fee + Math.floor((fee * 19 + 50) / 100);
    };
    expect(cost(ach.maxTransferAmount)).toBeLessThanOrEqual(1_000_000);
    expect(cost(ach.maxTransferAmount + 1)).toBeGreaterThan(1_000_000);
  });

  it('no wallets → 404 WALLET_NOT_PROVISIONED; ACH only → 404 FAST_WALLET_MISSING', async () => {
    const none = await companyWithKey({ wallets: [] });
    const r1 = await api.get('/wallets/balance', { token: none.key });
    expect(r1.status).toBe(404);
    expect(r1.body).toEqual({ error: 'WALLET_NOT_PROVISIONED', message: ERRORS.WALLET_NOT_PROVISIONED.message });
    const achOnly = await companyWithKey({ wallets: ['ACH'] });
    const r2 = await api.get('/wallets/balance', { token: achOnly.key });
    expect(r2.status).toBe(404);
    expect(r2.body).toEqual({ error: 'FAST_WALLET_MISSING', message: ERRORS.FAST_WALLET_MISSING.message });
  });

  it('BREB only lists the BREB wallet', async () => {
    const c = await companyWithKey({ wallets: ['BREB'] });
    const r = await api.get('/wallets/balance', { token: c.key });
    expect(r.body.wallets.map((w: any) => w.rail)).toEqual(['BREB']);
  });

  it("isolates companies: each key sees only its own company's balance", async () => {
    const a = await companyWithKey();
    const b = await companyWithKey();
    await admin.credit(a.company.id, 'BREB', 111, 'a');
    await admin.credit(b.company.id, 'BREB', 222, 'b');
    expect((await api.get('/wallets/balance', { token: a.key })).body.consolidated.availableCents).toBe('111');
    expect((await api.get('/wallets/balance', { token: b.key })).body.consolidated.availableCents).toBe('222');
    // Headers cannot switch company: only the key decides.
    const spoof = await api.get('/wallets/balance', { token: b.key, headers: { 'x-company-id': a.company.id } });
    expect(spoof.body.consolidated.availableCents).toBe('222');
  });

  it('the ledger being down → 503 SERVICE_UNAVAILABLE', async () => {
    const c = await companyWithKey();
    const broken = await stack.extraGateway({ LEDGER_GRPC_ADDR: '127.0.0.1:1', GRPC_DEADLINE_MS: '500' });
    const r = await client(broken.url).get('/wallets/balance', { token: c.key });
    expect(r.status).toBe(503);
    expect(r.body).toEqual({ error: 'SERVICE_UNAVAILABLE', message: ERRORS.SERVICE_UNAVAILABLE.message });
  });
});

describe('GET /dictionaries/banks/ach', () => {
  it('lists Colombian ACH participants with stable ids and compensation codes', async () => {
    const { key } = await companyWithKey();
    const r = await api.get('/dictionaries/banks/ach', { token: key });
    expect(r.status).toBe(200);
    for (const b of r.body.items) expect(AchBankSchema.strict().parse(b)).toBeTruthy();
    const byName = new Map(r.body.items.map((b: any) => [b.name, b.achCode]));
    expect(byName.get('Bancolombia')).toBe('1007');
    expect(byName.get('Banco de Bogotá')).toBe('1001');
    expect(byName.get('Banco Davivienda')).toBe('1051');
    expect(byName.get('BBVA Colombia')).toBe('1013');
    expect(byName.get('Nequi')).toBe('1507');
    expect(byName.get('Daviplata')).toBe('1551');
    const ids = r.body.items.map((b: any) => b.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(r.body.items.map((b: any) => b.achCode)).size).toBe(ids.length);
    expect(r.body.items.length).toBeGreaterThanOrEqual(35);
  });

  it('needs a key', async () => {
    expect((await api.get('/dictionaries/banks/ach')).body.error).toBe('AUTH_REQUIRED');
  });
});
