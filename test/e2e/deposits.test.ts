import { eventually } from '@wallet/platform/testing';
import { startStack } from '../support/stack.js';
import { fetchDocumented } from '../support/openapi-check.js';
import { PSE_PAYER } from '../support/fixtures.js';

type Stack = Awaited<ReturnType<typeof startStack>>;

/** PSE collections through the real gateway, pse-deposit service, ledger and sandbox PSE gateway. */
describe('PSE deposits end to end', () => {
  let stack: Stack;
  let co: Awaited<ReturnType<Stack['provision']>>;
  const payer = PSE_PAYER;
  const create = (body: Record<string, unknown>, key = co.writeKey) => stack.http('POST', '/deposits/pse', { token: key, body });
  const achBalance = async () => {
    const r = await stack.http('GET', '/wallets/balance', { token: co.readKey });
    return BigInt(r.body.wallets.find((w: any) => w.rail === 'ACH').availableCents);
  };
  const listed = async (id: string) => {
    const r = await stack.http('GET', '/deposits?limit=100', { token: co.readKey });
    return r.body.deposits.find((d: any) => d.id === id);
  };
  const pay = (id: string, outcome: 'APPROVED' | 'REJECTED') =>
    fetch(`${stack.sandbox!.url}/sandbox/pse/${id}/pay`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ outcome, payerBank: 'Bancolombia' }),
    });

  beforeAll(async () => {
    stack = await startStack({ transfers: true, deposits: true });
    co = await stack.provision('Colecta S.A.S.', { taxRegime: 'COMMON' });
    await stack.admin('PATCH', `/admin/companies/${co.id}`, { rateLimitMultiplier: 1000 });
    await stack.admin('PUT', '/admin/fees/PSE_INFLOW', { fixedFeeCents: 1000, variableBps: 100, companyId: co.id });
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
  });
  afterEach(async () => {
    expect((await stack.invariants()).violations).toEqual([]);
  });

  it('creates a link (201 §2.6.1) and credits the net to the ACH wallet once paid', async () => {
    const before = await achBalance();
    const r = await create({ amountCents: 500_000, ...payer, internalRef: 'pedido-77' });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      id: expect.stringMatching(/^dep_/),
      status: 'PENDING_CONFIRM',
      amountCents: 500_000,
      currency: 'COP',
      paygatewayUrl: expect.stringContaining(r.body.id),
      expiresAt: expect.any(String),
      internalRef: 'pedido-77',
      createdAt: expect.any(String),
    });
    expect((await pay(r.body.id, 'APPROVED')).status).toBe(200);
    const d = await eventually(
      async () => {
        const x = await listed(r.body.id);
        return x?.status === 'ASSIGNED' ? x : undefined;
      },
      15_000,
      100,
    );
    // fee 1,000 + 1% of 500,000 = 6,000; IVA 19% = 1,140; net = 492,860
    expect(d).toMatchObject({
      amountCents: '500000',
      feeAmountCents: '6000',
      ivaAmountCents: '1140',
      netAmountCents: '492860',
      netCreditedCents: '492860',
      source: 'PSE',
      brebKey: null,
      payerBank: 'Bancolombia',
      payerEmail: 'laura@example.com',
      internalRef: 'pedido-77',
      currency: 'COP',
    });
    expect(d.providerTransferId).toEqual(expect.any(String));
    expect(d.paidAt).toBe(d.providerConfirmedAt);
    expect(await achBalance()).toBe(before + 492_860n);
    const movements = await stack.http('GET', '/wallets/transactions?type=TRANSFER_IN', { token: co.readKey });
    expect(movements.body.items.some((m: any) => m.rail === 'PSE' && m.amount === '500000')).toBe(true);
  });

  it('a rejected payment fails and credits nothing; PAID filters as ASSIGNED', async () => {
    const before = await achBalance();
    const r = await create({ amountCents: 20_000, ...payer });
    expect((await pay(r.body.id, 'REJECTED')).status).toBe(200);
    await eventually(async () => (await listed(r.body.id))?.status === 'FAILED', 15_000, 100);
    expect(await achBalance()).toBe(before);
    const paid = await stack.http('GET', '/deposits?status=PAID', { token: co.readKey });
    expect(paid.body.deposits.length).toBeGreaterThan(0);
    expect(paid.body.deposits.every((d: any) => d.status === 'ASSIGNED')).toBe(true);
  });

  it('refuses bad input and a fee at or above the amount', async () => {
    for (const bad of [
      { ...payer, amountCents: 99 },
      { ...payer, amountCents: 1.5 },
      { ...payer, amountCents: '1000' },
      { amountCents: 1000, ...payer, payerDocumentTypeId: 2 },
      { amountCents: 1000, ...payer, payerDocumentNumber: '12' },
      { amountCents: 1000, ...payer, payerEmail: 'not-an-email' },
      { amountCents: 1000, ...payer, payerPhone: '2101234567' },
      { amountCents: 1000, payerFirstName: 'x' },
    ]) {
      const r = await create(bad);
      expect({ status: r.status, error: r.body?.error }).toEqual({ status: 400, error: 'INVALID_REQUEST' });
    }
    // fee(amount) + IVA == amount exactly: 1,000 + 1% → with amount 1,190: fee 1,012, IVA 192 → 1,204 ≥ 1,190
    const r = await create({ amountCents: 1_190, ...payer });
    expect(r.status).toBe(422);
    expect(r.body.error).toBe('FEE_EXCEEDS_AMOUNT');
    expect(r.body.details).toEqual({ grossCents: 1190, totalFee: expect.any(Number), ivaAmount: expect.any(Number), totalCharged: expect.any(Number) });
  });

  it('shares the link by e-mail with the custom message escaped', async () => {
    const r = await create({ amountCents: 75_000, ...payer });
    const to = `cliente+${Date.now()}@example.com`;
    const s = await stack.http('POST', `/deposits/${r.body.id}/share-email`, {
      token: co.writeKey,
      body: { recipientEmail: to, recipientName: 'Carlos', customMessage: '<b>hola</b> & gracias' },
    });
    expect(s.status).toBe(200);
    expect(s.body).toEqual({ success: true, messageId: expect.any(String) });
    const mail = await eventually(
      async () => {
        const m = (await (await fetch(`${stack.sandbox!.url}/sandbox/emails?to=${encodeURIComponent(to)}`)).json()) as any;
        return m.items[0];
      },
      10_000,
      100,
    );
    expect(mail.html).toContain(r.body.paygatewayUrl);
    expect(mail.html).toContain('&lt;b&gt;hola&lt;/b&gt;');
    expect(mail.html).not.toContain('<b>hola</b>');
    expect(mail.text).toContain(r.body.paygatewayUrl);
    const other = await stack.provision('Ajena S.A.S.');
    // Rate limits count per client IP and class; this suite is one IP, so lift this company's too.
    await stack.admin('PATCH', `/admin/companies/${other.id}`, { rateLimitMultiplier: 1000 });
    const foreign = await stack.http('POST', `/deposits/${r.body.id}/share-email`, { token: other.writeKey, body: { recipientEmail: to } });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error).toBe('DEPOSIT_NOT_FOUND');
    expect((await stack.http('POST', '/deposits/dep_doesnotexist00/share-email', { token: co.writeKey, body: { recipientEmail: to } })).body.error).toBe(
      'DEPOSIT_NOT_FOUND',
    );
  });

  it('refuses a forged PSE notification at the gateway and changes nothing', async () => {
    const r = await create({ amountCents: 30_000, ...payer });
    const res = await fetchDocumented(`${stack.gateway.url}/webhooks/pse`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-provider-signature': `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}` },
      body: JSON.stringify({ eventId: 'forged', depositId: r.body.id, providerTransferId: 'x', status: 'PAID', occurredAt: new Date().toISOString() }),
    });
    expect(res.status).toBe(401);
    expect((await listed(r.body.id)).status).toBe('PENDING_CONFIRM');
  });

  it('lists in both pagination styles and keeps companies apart', async () => {
    for (let i = 0; i < 3; i++) await create({ amountCents: 10_000 + i, ...payer });
    const page = await stack.http('GET', '/deposits?limit=2&page=0', { token: co.readKey });
    expect(page.body.deposits).toHaveLength(2);
    expect(page.body.pagination).toMatchObject({ page: 0, limit: 2 });
    expect(page.body.pagination.total).toBeGreaterThanOrEqual(5);
    const c1 = await stack.http('GET', '/deposits?limit=2&cursor=', { token: co.readKey });
    expect(c1.body.items.map((d: any) => d.id)).toEqual(page.body.deposits.map((d: any) => d.id));
    const c2 = await stack.http('GET', `/deposits?limit=2&cursor=${encodeURIComponent(c1.body.nextCursor)}`, { token: co.readKey });
    const p2 = await stack.http('GET', '/deposits?limit=2&page=1', { token: co.readKey });
    expect(c2.body.items.map((d: any) => d.id)).toEqual(p2.body.deposits.map((d: any) => d.id));
    for (const q of ['status=NOPE', 'limit=101', 'rail=ACH', 'page=x']) {
      expect((await stack.http('GET', `/deposits?${q}`, { token: co.readKey })).status).toBe(400);
    }
    const other = await stack.provision('Vacía S.A.S.');
    expect((await stack.http('GET', '/deposits', { token: other.readKey })).body.deposits).toEqual([]);
  });
});
