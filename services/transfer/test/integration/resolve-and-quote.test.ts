import { transferV1 } from '@wallet/proto';
import { Rail, ctxOf, expectLedgerOk, failure, newCompany, resolve, setFaults, startHarness, type CompanySetup, type Harness } from './harness.js';

describe('resolve-key and quotes', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h?.stop();
  });
  afterEach(async () => {
    await expectLedgerOk(h);
  });

  it('resolves a key to its holder (§2.4) and remembers it 10 minutes for anchor-handle sends', async () => {
    const co = await newCompany(h);
    const r = await resolve(h, co.id, '3001234567');
    expect(r).toMatchObject({ found: true, keyType: 'PHONE', keyValue: '3001234567', errorCode: '', message: '' });
    expect(r.anchorHandle).toMatch(/^anh_/);
    const rc = r.recipient!;
    expect(rc.firstName).toBe(rc.firstName.toUpperCase());
    expect(rc.fullName).toBe(`${rc.firstName} ${rc.lastName}`);
    expect(rc.status).toBe('active');
    expect(['CC', 'CE', 'NIT']).toContain(rc.idType);
    expect(['Ahorros', 'Corriente']).toContain(rc.bankAccountType);
    expect(rc.idValue).toMatch(/^\d+$/);
    // Deterministic directory; each call asks it again.
    expect(await resolve(h, co.id, '3001234567')).toEqual(r);
    const rows = await h.ledger.db.query<{ company_id: string; anchor_handle: string }>(
      'select company_id, anchor_handle from transfer.resolved_keys where company_id = ?',
      [co.id],
    );
    expect(rows).toEqual([{ company_id: co.id, anchor_handle: r.anchorHandle }]);

    expect(await resolve(h, co.id, 'Ana@Example.com')).toMatchObject({ found: true, keyType: 'EMAIL' });
    expect(await resolve(h, co.id, '@tienda123')).toMatchObject({ found: true, keyType: 'ALPHANUM' });
    expect(await resolve(h, co.id, '1020304050')).toMatchObject({ found: true, keyType: 'NRIC' });
    expect(await resolve(h, co.id, '3001234567', 'NRIC')).toMatchObject({ found: true, keyType: 'NRIC' });
  });

  it('answers found:false with KEY_NOT_FOUND, KEY_INACTIVE or INVALID_KEY', async () => {
    const co = await newCompany(h);
    for (const v of ['3009999999', 'notfound@example.com', '@notfound']) {
      expect(await resolve(h, co.id, v)).toMatchObject({ found: false, errorCode: 'KEY_NOT_FOUND', message: expect.any(String) });
    }
    for (const v of ['3008888888', '@inactive']) {
      expect(await resolve(h, co.id, v)).toMatchObject({ found: false, errorCode: 'KEY_INACTIVE' });
    }
    for (const v of ['no valid key!', 'ana@', '+573001234567']) {
      expect(await resolve(h, co.id, v)).toMatchObject({ found: false, errorCode: 'INVALID_KEY' });
    }
    expect(await resolve(h, co.id, '12345', 'PHONE')).toMatchObject({ found: false, errorCode: 'INVALID_KEY' });
    const nf = await resolve(h, co.id, '3009999999');
    expect(nf.recipient).toBeUndefined();
  });

  it('a key outside 3-64 characters or an unknown key type is 400; the directory down is 503', async () => {
    const co = await newCompany(h);
    for (const [v, t] of [
      ['ab', 'AUTO'],
      ['x'.repeat(65), 'AUTO'],
      ['3001234567', 'IBAN'],
    ] as const) {
      const e = await failure(resolve(h, co.id, v, t));
      expect(e.code).toBe('INVALID_REQUEST');
    }
    expect((await failure(h.client.resolveKey({ keyValue: '3001234567', keyType: '' }, ctxOf()))).code).toBe('CALLER_NOT_ALLOWED');
    await setFaults(h, { directory: 'down' });
    try {
      expect((await failure(resolve(h, co.id, '3001234567'))).code).toBe('BREB_DIRECTORY_LOOKUP_FAILED');
    } finally {
      await setFaults(h, { directory: 'up' });
    }
  });

  const quote = (companyId: string, r: Partial<transferV1.QuoteRequest>, profile?: CompanySetup['profile']) =>
    h.client.quote(transferV1.QuoteRequest.fromPartial({ rail: Rail.BREB, ...r }), ctxOf(companyId, undefined, profile));

  it('quotes the fee with IVA (§2.3) on the rail wallet, and whether the balance covers the total', async () => {
    const co = await newCompany(h, { breb: 1_001_309n, ach: 50_000n, iva: true, brebFee: [100n, 10], achFee: [300n, 0] });
    // fixed 100 + 10 bps of 1,000,000 = 1,000 → subtotal 1,100; IVA 19% = 209 → 1,309
    const q = await quote(co.id, { amount: 1_000_000n, keyValue: '3001234567', keyType: 'PHONE' });
    expect(q).toEqual({
      amount: 1_000_000n,
      currentBalance: 1_001_309n,
      fee: { fixedFee: 100n, variableFee: 1_000n, subtotalFee: 1_100n, ivaApplicable: true, ivaAmount: 209n, totalCharged: 1_309n },
      totalCost: 1_001_309n,
      canAfford: true,
      // No approval policy: the threshold (none) decides, as version 0.
      policyDecision: { policyVersion: 0, action: 'ALLOW', approvals: 0, roles: [] },
    });
    const over = await quote(co.id, { amount: 1_000_001n });
    expect(over.canAfford).toBe(false);
    expect(over.message).toMatch(/Saldo insuficiente/);
    expect(over.message).toContain('$ 10.013,09'); // what the wallet holds
    // No IVA outside the common regime; rounding half up of the variable fee (10 bps of 1,005 = 1.005 → 1).
    const simple = await quote(co.id, { amount: 1_005n }, { ...co.profile, ivaApplicable: false });
    expect(simple.fee).toEqual({ fixedFee: 100n, variableFee: 1n, subtotalFee: 101n, ivaApplicable: false, ivaAmount: 0n, totalCharged: 101n });
    expect(simple.totalCost).toBe(1_106n);

    const ach = await quote(co.id, { rail: Rail.ACH, amount: 49_643n });
    expect(ach).toMatchObject({ currentBalance: 50_000n, totalCost: 49_643n + 357n, canAfford: true });
    expect(ach.message).toBeUndefined();
    const achShort = await quote(co.id, { rail: Rail.ACH, amount: 49_644n });
    expect(achShort.canAfford).toBe(false);
  });

  it('quote limits: minimum 100, the rail caps, the key shape, and missing wallets', async () => {
    const co = await newCompany(h, { iva: true });
    expect(await quote(co.id, { amount: 1_200_000_000n })).toMatchObject({ canAfford: false, currentBalance: 0n });
    expect((await failure(quote(co.id, { amount: 1_200_000_001n }))).code).toBe('AMOUNT_EXCEEDS_BREB_CAP');
    expect((await failure(quote(co.id, { rail: Rail.ACH, amount: 200_000_000_001n }))).code).toBe('AMOUNT_EXCEEDS_ACH_CAP');
    expect(await quote(co.id, { rail: Rail.ACH, amount: 200_000_000_000n })).toMatchObject({ canAfford: false });
    for (const amount of [0n, 99n]) {
      const e = await failure(quote(co.id, { amount }));
      expect(e.code).toBe('INVALID_REQUEST');
      expect(e.details).toEqual({ fields: [{ path: 'amount', message: 'must be at least 100' }] });
    }
    expect((await failure(quote(co.id, { rail: Rail.PSE, amount: 1_000n }))).code).toBe('INVALID_REQUEST');
    expect((await failure(quote(co.id, { amount: 1_000n, keyValue: 'ab' }))).code).toBe('INVALID_REQUEST');
    expect((await failure(quote(co.id, { amount: 1_000n, keyValue: 'no valid key!' }))).code).toBe('INVALID_KEY');
    expect((await failure(quote(co.id, { amount: 1_000n, keyValue: '12345', keyType: 'PHONE' }))).code).toBe('INVALID_KEY');

    const none = await newCompany(h, { rails: [] });
    expect((await failure(quote(none.id, { amount: 1_000n }))).code).toBe('WALLET_NOT_PROVISIONED');
    const achOnly = await newCompany(h, { rails: [Rail.ACH] });
    expect((await failure(quote(achOnly.id, { amount: 1_000n }))).code).toBe('FAST_WALLET_MISSING');
    const brebOnly = await newCompany(h, { rails: [Rail.BREB] });
    expect((await failure(quote(brebOnly.id, { rail: Rail.ACH, amount: 1_000n }))).code).toBe('WALLET_NOT_PROVISIONED');
  });
});
