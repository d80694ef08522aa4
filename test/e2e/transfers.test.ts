import { createHmac } from 'node:crypto';
import { eventually } from '@wallet/platform/testing';
import { startStack } from '../support/stack.js';
import { fetchDocumented } from '../support/openapi-check.js';
import { SANDBOX_ACH_ACCOUNT } from '../support/fixtures.js';

type Stack = Awaited<ReturnType<typeof startStack>>;

/** Transfers through the real gateway, transfer service, ledger and sandbox rails (CONTRACT §8). */
describe('transfers end to end', () => {
  let stack: Stack;
  let co: Awaited<ReturnType<Stack['provision']>>;

  const balance = async (key = co.readKey) => {
    const r = await stack.http('GET', '/wallets/balance', { token: key });
    return Object.fromEntries(r.body.wallets.map((w: any) => [w.rail, w])) as Record<'BREB' | 'ACH', any>;
  };
  const tx = async (id: string, key = co.readKey) => stack.http('GET', `/wallets/transactions/${id}`, { token: key });
  const settled = (id: string, key = co.readKey) =>
    eventually(
      async () => {
        const r = await tx(id, key);
        return ['COMPLETED', 'FAILED'].includes(r.body?.status) ? r.body : undefined;
      },
      15_000,
      100,
    );
  const resolve = (keyValue: string) => stack.http('POST', '/transfers/resolve-key', { token: co.writeKey, body: { keyValue } });
  async function brebBody(keyValue: string, amount: number, extra: Record<string, unknown> = {}) {
    const r = await resolve(keyValue);
    expect(r.status).toBe(200);
    return {
      amount,
      destination: { brebKey: { type: r.body.keyType, value: r.body.keyValue } },
      targetName: r.body.recipient.fullName,
      targetDocument: r.body.recipient.idValue,
      ...extra,
    };
  }
  const achBody = (amount: number, extra: Record<string, unknown> = {}) => ({
    amount,
    destination: {
      bankAccount: SANDBOX_ACH_ACCOUNT,
    },
    description: 'Pago proveedor',
    ...extra,
  });
  const send = (body: unknown, key = co.writeKey) => stack.http('POST', '/transfers/send', { token: key, body });

  beforeAll(async () => {
    stack = await startStack({ transfers: true });
    co = await stack.provision('Transfers S.A.S.', { taxRegime: 'COMMON' });
    // One client IP runs the whole suite: lift this company's limits (a per-company setting).
    await stack.admin('PATCH', `/admin/companies/${co.id}`, { rateLimitMultiplier: 1000 });
    await stack.admin('PUT', '/admin/fees/BREB_OUTFLOW', { fixedFeeCents: 100, variableBps: 10, companyId: co.id });
    await stack.admin('PUT', '/admin/fees/ACH_OUTFLOW', { fixedFeeCents: 300, variableBps: 0, companyId: co.id });
    await stack.admin('POST', `/admin/companies/${co.id}/wallets/BREB/credit`, { amountCents: 10_000_000, reference: 'seed-breb' });
    await stack.admin('POST', `/admin/companies/${co.id}/wallets/ACH/credit`, { amountCents: 10_000_000, reference: 'seed-ach' });
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
  });
  afterEach(async () => {
    const report = await stack.invariants();
    expect(report.violations).toEqual([]);
  });

  it('resolve-key: holder on 200, the 422 found:false body otherwise, never cached', async () => {
    const ok = await resolve('3001234567');
    expect(ok.status).toBe(200);
    expect(ok.headers.get('cache-control')).toBe('no-store');
    expect(ok.body).toMatchObject({ found: true, keyType: 'PHONE', keyValue: '3001234567' });
    expect(ok.body.recipient.fullName).toBe(`${ok.body.recipient.firstName} ${ok.body.recipient.lastName}`);
    expect((await resolve('3001234567')).body).toEqual(ok.body); // deterministic directory
    const nf = await resolve('3009999999');
    expect(nf.status).toBe(422);
    expect(nf.body).toEqual({ found: false, error: 'KEY_NOT_FOUND', message: expect.any(String) });
    expect((await resolve('@inactive')).body.error).toBe('KEY_INACTIVE');
    expect((await resolve('no valid key!')).body.error).toBe('INVALID_KEY');
    const short = await resolve('ab');
    expect(short.status).toBe(400);
    expect(short.body.error).toBe('INVALID_REQUEST');
    const readKey = await stack.http('POST', '/transfers/resolve-key', { token: co.readKey, body: { keyValue: '3001234567' } });
    expect(readKey.status).toBe(403);
    expect(readKey.body).toMatchObject({ error: 'INSUFFICIENT_SCOPE', required: 'WRITE', granted: 'READ' });
  });

  it('quotes: fee, IVA and total exactly as §2.3; caps and bad input', async () => {
    const q = await stack.http('POST', '/transfers/quote', { token: co.writeKey, body: { amount: 1_000_000, keyValue: '3001234567', keyType: 'PHONE' } });
    expect(q.status).toBe(200);
    // fixed 100 + 10 bps of 1,000,000 = 1,000 → subtotal 1,100; IVA 19% = 209
    expect(q.body).toEqual({
      amount: 1_000_000,
      currentBalance: expect.any(Number),
      feeBreakdown: { fixedFee: 100, variableFee: 1000, subtotalFee: 1100, ivaApplicable: true, ivaAmount: 209, totalCharged: 1309 },
      totalCost: 1_001_309,
      canAfford: true,
      message: null,
      // No approval policy: the threshold (none) decides, as version 0 (docs/policies.md).
      policyDecision: { policyVersion: 0, ruleId: null, action: 'ALLOW', approvals: 0, roles: [] },
    });
    const ach = await stack.http('POST', '/transfers/quote/ach', { token: co.writeKey, body: { amount: 500_000_000 } });
    expect(ach.status).toBe(200);
    expect(ach.body.canAfford).toBe(false);
    expect(typeof ach.body.message).toBe('string');
    const cap = await stack.http('POST', '/transfers/quote', { token: co.writeKey, body: { amount: 1_200_000_001, keyValue: '3001234567' } });
    expect(cap.status).toBe(422);
    expect(cap.body.error).toBe('AMOUNT_EXCEEDS_BREB_CAP');
    const achCap = await stack.http('POST', '/transfers/quote/ach', { token: co.writeKey, body: { amount: 200_000_000_001 } });
    expect(achCap.body.error).toBe('AMOUNT_EXCEEDS_ACH_CAP');
    for (const amount of [99, 1.5, '1000', -5, 2 ** 53]) {
      const bad = await stack.http('POST', '/transfers/quote/ach', { token: co.writeKey, body: { amount } });
      expect(bad.status).toBe(400);
      expect(bad.body.error).toBe('INVALID_REQUEST');
    }
  });

  it('a quote reports a balance above 2^53 centavos exactly (no float on the way)', async () => {
    const big = await stack.provision('Saldo Grande S.A.S.', { taxRegime: 'SIMPLE' });
    for (const ref of ['big-1', 'big-2']) {
      expect(
        (await stack.admin('POST', `/admin/companies/${big.id}/wallets/ACH/credit`, { amountCents: Number.MAX_SAFE_INTEGER, reference: ref })).status,
      ).toBe(201);
    }
    const q = await stack.http('POST', '/transfers/quote/ach', { token: big.writeKey, body: { amount: 100_000 } });
    expect(q.status).toBe(200);
    const exact = (2n * BigInt(Number.MAX_SAFE_INTEGER)).toString(); // 18014398509481982
    expect(q.text).toContain(`"currentBalance":${exact}`);
    expect(q.body.canAfford).toBe(true);
    const bal = await stack.http('GET', '/wallets/balance', { token: big.readKey });
    expect(bal.body.wallets.find((w: any) => w.rail === 'ACH').availableCents).toBe(exact);
  });

  it('a BREB send goes PENDING → COMPLETED with the hold committed', async () => {
    const before = await balance();
    const body = await brebBody('3001112233', 250_000, { reference: 'breb-ok-1', description: 'Factura 1' });
    const r = await send(body);
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      status: 'PENDING',
      amount: 250_000,
      totalFee: 350,
      ivaAmount: 67,
      netAmount: 250_000 - 350,
      currency: 'COP',
      rail: 'BREB',
      targetName: body.targetName,
      targetDocument: body.targetDocument,
      reference: 'breb-ok-1',
      createdAt: expect.any(String),
      policyDecision: { policyVersion: 0, ruleId: null, action: 'ALLOW', approvals: 0, roles: [] },
    });
    const total = 250_000 + 350 + 67;
    const during = await balance();
    expect(BigInt(during.BREB.availableCents)).toBe(BigInt(before.BREB.availableCents) - BigInt(total));
    expect(BigInt(during.BREB.pendingOutCents)).toBe(BigInt(before.BREB.pendingOutCents) + BigInt(total));
    const done = await settled(r.body.id);
    expect(done).toMatchObject({
      id: r.body.id,
      type: 'TRANSFER_OUT',
      rail: 'BREB',
      status: 'COMPLETED',
      amount: '250000',
      totalFee: '350',
      ivaAmount: '67',
      description: 'Factura 1',
    });
    expect(done.completedAt).toEqual(expect.any(String));
    const after = await balance();
    expect(BigInt(after.BREB.availableCents)).toBe(BigInt(before.BREB.availableCents) - BigInt(total));
    expect(after.BREB.pendingOutCents).toBe(before.BREB.pendingOutCents);
  });

  it('an ACH send the rail fails (amount ending in 13) ends FAILED with the hold released', async () => {
    const before = await balance();
    const r = await send(achBody(100_013));
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      status: 'PENDING',
      rail: 'ACH',
      totalFee: 300,
      ivaAmount: 57,
      targetName: 'Ana María Pérez Gómez',
      targetDocument: '1020304050',
    });
    const done = await settled(r.body.id);
    expect(done.status).toBe('FAILED');
    expect(done.errorMessage).toEqual(expect.any(String));
    expect(done.bankAccountNumber).toBe('****8901');
    expect(done.bankName).toBe('Bancolombia');
    const after = await balance();
    expect(after.ACH.availableCents).toBe(before.ACH.availableCents);
    expect(after.ACH.pendingOutCents).toBe(before.ACH.pendingOutCents);
  });

  it('ACH accounts of 21 to 32 digits (the reference allows 4 to 32) are accepted and paid', async () => {
    for (const accountNumber of ['123456789012345678901234', '12345678901234567890123456789012']) {
      const body = achBody(10_000);
      const r = await send({ ...body, destination: { bankAccount: { ...body.destination.bankAccount, accountNumber } } });
      expect(r.status).toBe(201);
      expect(r.body).toMatchObject({ status: 'PENDING', rail: 'ACH' });
      const done = await settled(r.body.id);
      expect(done).toMatchObject({ status: 'COMPLETED', bankAccountNumber: `****${accountNumber.slice(-4)}` });
    }
    const tooLong = achBody(10_000);
    const r33 = await send({ ...tooLong, destination: { bankAccount: { ...tooLong.destination.bankAccount, accountNumber: '1'.repeat(33) } } });
    expect(r33.status).toBe(400);
  });

  it('refuses bad sends with the documented codes, in order', async () => {
    const good = await brebBody('3005556677', 10_000);
    const cases: Array<[unknown, number, string]> = [
      [{ ...good, destination: { brebKey: good.destination.brebKey, bankAccount: achBody(1).destination.bankAccount } }, 400, 'INVALID_REQUEST'],
      [{ amount: 10_000, targetName: 'X' }, 400, 'INVALID_REQUEST'],
      [{ ...good, amount: 10.5 }, 400, 'INVALID_REQUEST'],
      [{ ...good, amount: 1_200_000_001 }, 422, 'AMOUNT_EXCEEDS_BREB_CAP'],
      [{ ...good, targetDocument: undefined }, 422, 'TARGET_DOCUMENT_REQUIRED'],
      [{ ...good, targetName: 'Otra Persona Distinta' }, 422, 'NAME_MISMATCH'],
      [achBody(10_000, { destination: { bankAccount: { ...achBody(1).destination.bankAccount, accountNumber: '0000000000' } } }), 422, 'INVALID_BANK_ACCOUNT'],
      [{ ...good, amount: 9_900_000 }, 422, 'INSUFFICIENT_BALANCE'],
    ];
    for (const [body, status, code] of cases) {
      const r = await send(body);
      expect({ code: r.body?.error, status: r.status }).toEqual({ code, status });
    }
    // Accent, case and spacing do not matter for the holder name.
    const loose = { ...good, targetName: `  ${good.targetName.toLowerCase().normalize('NFD')}  ` };
    expect((await send(loose)).status).toBe(201);
    // AML: the destination document on the list.
    const entry = await stack.admin('POST', '/admin/aml/blacklist', { documentNumber: good.targetDocument, reason: 'Lista restrictiva' });
    expect(entry.status).toBe(201);
    expect((await send(good)).body.error).toBe('RECIPIENT_BLACKLISTED');
    expect((await stack.admin('DELETE', `/admin/aml/blacklist/${entry.body.id}`)).status).toBe(200);
    expect((await send(good)).status).toBe(201);
  });

  it('AML list administration: bad input, unknown ids, credentials', async () => {
    for (const body of [
      {},
      { documentNumber: '12', reason: 'x' },
      { documentNumber: '900123456', reason: '' },
      { documentNumber: '900123456', reason: 'x', extra: 1 },
    ]) {
      const r = await stack.admin('POST', '/admin/aml/blacklist', body);
      expect({ status: r.status, error: r.body.error }).toEqual({ status: 400, error: 'INVALID_REQUEST' });
    }
    expect((await stack.admin('DELETE', '/admin/aml/blacklist/00000000-0000-4000-8000-000000000000')).body.error).toBe('AML_ENTRY_NOT_FOUND');
    expect((await stack.admin('DELETE', '/admin/aml/blacklist/nope')).body.error).toBe('AML_ENTRY_NOT_FOUND');
    const asClient = await stack.http('POST', '/admin/aml/blacklist', { token: co.writeKey, body: { documentNumber: '900123456', reason: 'x' } });
    expect(asClient.body.error).toBe('API_KEY_AUTH_NOT_ALLOWED');
  });

  it('reference idempotency: replay, conflict, concurrent duplicates → one transfer', async () => {
    const body = await brebBody('3007778899', 1_000, { reference: 'idem-1' });
    const first = await send(body);
    const again = await send(body);
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body.id).toBe(first.body.id);
    const conflict = await send({ ...body, amount: 1_001 });
    expect(conflict.status).toBe(409);
    expect(conflict.body.error).toBe('REFERENCE_CONFLICT');
    const concurrent = await Promise.all(Array.from({ length: 10 }, async () => send({ ...(await brebBody('3007778899', 2_000)), reference: 'idem-2' })));
    expect(concurrent.map((r) => r.status)).toEqual(Array(10).fill(201));
    expect(new Set(concurrent.map((r) => r.body.id)).size).toBe(1);
    // A request refused before dispatch does not hold its reference.
    const refused = await send({ ...body, amount: 9_900_000, reference: 'idem-3' });
    expect(refused.body.error).toBe('INSUFFICIENT_BALANCE');
    expect((await send({ ...body, reference: 'idem-3' })).status).toBe(201);
  });

  it('30 parallel sends against a balance covering exactly 11: exactly 11 accepted', async () => {
    const c = await stack.provision('Race S.A.S.', { taxRegime: 'SIMPLE' });
    await stack.admin('PATCH', `/admin/companies/${c.id}`, { rateLimitMultiplier: 1000 });
    await stack.admin('POST', `/admin/companies/${c.id}/wallets/ACH/credit`, { amountCents: 11 * 10_000, reference: 'race' });
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => send(achBody(10_000, { reference: `race-${i}` }), c.writeKey)));
    expect(results.filter((r) => r.status === 201)).toHaveLength(11);
    expect(results.filter((r) => r.status !== 201).every((r) => r.body.error === 'INSUFFICIENT_BALANCE')).toBe(true);
    const b = await stack.http('GET', '/wallets/balance', { token: c.readKey });
    expect(b.body.wallets.find((w: any) => w.rail === 'ACH').availableCents).toBe('0');
  });

  it('lists transactions with page and cursor pagination, filters and isolation', async () => {
    const page = await stack.http('GET', '/wallets/transactions?limit=2', { token: co.readKey });
    expect(page.status).toBe(200);
    expect(page.body.items).toHaveLength(2);
    expect(page.body.hasMore).toBe(true);
    expect(typeof page.body.items[0].amount).toBe('string');
    const next = await stack.http('GET', `/wallets/transactions?limit=2&cursor=${encodeURIComponent(page.body.nextCursor)}`, { token: co.readKey });
    expect(next.body.items[0].id).not.toBe(page.body.items[0].id);
    const byPage = await stack.http('GET', '/wallets/transactions?limit=2&page=1', { token: co.readKey });
    expect(byPage.body.items.map((m: any) => m.id)).toEqual(next.body.items.map((m: any) => m.id));
    const credits = await stack.http('GET', '/wallets/transactions?type=BALANCE_ADD&limit=100', { token: co.readKey });
    expect(credits.body.items.every((m: any) => m.type === 'BALANCE_ADD' && m.status === 'COMPLETED')).toBe(true);
    expect(credits.body.items.length).toBeGreaterThanOrEqual(2);
    for (const q of ['limit=101', 'type=NOPE', 'from=yesterday', 'page=-1', 'limit=1.5']) {
      const bad = await stack.http('GET', `/wallets/transactions?${q}`, { token: co.readKey });
      expect({ q, status: bad.status }).toEqual({ q, status: 400 });
    }
    const other = await stack.provision('Other S.A.S.');
    const mine = page.body.items[0].id;
    const foreign = await tx(mine, other.readKey);
    const unknown = await tx('00000000-0000-4000-8000-000000000000');
    const malformed = await tx('not-a-uuid');
    for (const r of [foreign, unknown, malformed]) {
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ error: 'TRANSACTION_NOT_FOUND', message: expect.any(String) });
    }
    expect((await stack.http('GET', '/wallets/transactions', { token: other.readKey })).body.items).toEqual([]);
  });

  it('rejects a forged or stale rail callback and changes nothing', async () => {
    const body = JSON.stringify({
      eventId: 'evt-forged',
      transactionId: '00000000-0000-4000-8000-000000000001',
      providerTransferId: 'x',
      rail: 'BREB',
      status: 'COMPLETED',
      occurredAt: new Date().toISOString(),
    });
    const forged = await fetchDocumented(`${stack.gateway.url}/webhooks/rails/breb`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-provider-signature': `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}` },
      body,
    });
    expect(forged.status).toBe(401);
    const t = Math.floor(Date.now() / 1000) - 3600;
    const sig = createHmac('sha256', 'dev-rail-callback-secret').update(`${t}.${body}`).digest('hex');
    const stale = await fetchDocumented(`${stack.gateway.url}/webhooks/rails/breb`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-provider-signature': `t=${t},v1=${sig}` },
      body,
    });
    expect(stale.status).toBe(401);
  });
});
