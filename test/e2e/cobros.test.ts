import { eventually } from '@wallet/platform/testing';
import { startStack } from '../support/stack.js';
import { fetchDocumented } from '../support/openapi-check.js';
import { crc16, decodeQrPng } from '../support/qr.js';
import { verifyWebhook, WebhookReceiver } from '../support/webhook-receiver.js';

type Stack = Awaited<ReturnType<typeof startStack>>;

/**
 * Cobros end to end: the gateway, pse-deposit (the cobro and its matching), collect-key (the
 * dynamic key, the QR, the inbound payments), the sandbox network playing the payer (pay the QR by
 * its payload, pay the key, pay another amount, pay twice, pay after the cobro closed), the ledger
 * and the webhook service, whose deliveries are verified with the Standard Webhooks library.
 */
describe('cobros end to end', () => {
  let stack: Stack;
  let co: Awaited<ReturnType<Stack['provision']>>;
  let other: Awaited<ReturnType<Stack['provision']>>;
  const rx = new WebhookReceiver('/cobros-events');
  const of = (cobroId: string) => rx.hits.filter((h) => h.body.data?.id === cobroId);
  let secret = '';
  const post = (path: string, body: unknown, key = co.writeKey) => stack.http('POST', path, { token: key, body });
  const get = (path: string, key = co.readKey) => stack.http('GET', path, { token: key });
  const payer = { payerName: 'Pedro Pérez', payerDocument: 'CC 79123456', payerBank: 'Nequi' };
  const incoming = async (body: Record<string, unknown>) => {
    const res = await fetch(`${stack.sandbox!.url}/sandbox/breb/incoming`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...payer, ...body }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const inAnHour = () => new Date(Date.now() + 3600_000).toISOString();
  const cobro = async (id: string) => (await get(`/cobros/${id}`)).body;

  beforeAll(async () => {
    // A short minimum life and no grace, so a cobro can expire within the test.
    stack = await startStack({ deposits: true, webhooks: true, depositEnv: { COBRO_MIN_TTL_SECONDS: '1', COBRO_EXPIRY_GRACE_SECONDS: '0' } });
    co = await stack.provision('Cobros S.A.S.', { taxRegime: 'COMMON' });
    other = await stack.provision('Ajena S.A.S.');
    for (const c of [co, other]) await stack.admin('PATCH', `/admin/companies/${c.id}`, { rateLimitMultiplier: 1000 });
    await rx.start();
    const ep = await post('/webhooks/endpoints', {
      url: rx.url,
      events: ['cobro.created', 'cobro.partially_paid', 'cobro.paid', 'cobro.expired', 'cobro.cancelled', 'cobro.payment_reversed'],
    });
    expect(ep.status).toBe(201);
    secret = ep.body.secret;
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    await rx.stop();
  });
  afterEach(async () => {
    expect((await stack.invariants()).violations).toEqual([]);
  });

  it('a cobro with its dynamic QR and key: paid in part by the QR, in full by the key, then an excess; every webhook verified', async () => {
    const created = await post('/cobros', {
      reference: 'FAC-1001',
      amountCents: 100_000_00,
      expiresAt: inAnHour(),
      description: 'Factura 1001',
      metadata: { pedido: '77' },
      methods: ['BREB_QR', 'BREB_KEY'],
    });
    expect(created.status).toBe(201);
    const c = created.body;
    expect(c).toMatchObject({
      id: expect.stringMatching(/^cob_[a-z0-9]{24}$/),
      reference: 'FAC-1001',
      status: 'OPEN',
      amountType: 'FIXED',
      amountCents: 100_000_00,
      paidAmountCents: 0,
      metadata: { pedido: '77' },
      overpaymentPolicy: 'accept',
      payments: [],
      breb: { keyValue: expect.stringMatching(/^@/), qrPayload: expect.any(String), qrPngUrl: `/cobros/${c.id}/qr.png` },
    });
    // The same request again is the same cobro; the reference with another request is a conflict.
    const again = await post('/cobros', {
      reference: 'FAC-1001',
      amountCents: 100_000_00,
      expiresAt: c.expiresAt,
      description: 'Factura 1001',
      metadata: { pedido: '77' },
      methods: ['BREB_QR', 'BREB_KEY'],
    });
    expect([again.status, again.body.id]).toEqual([200, c.id]);
    const clash = await post('/cobros', { reference: 'FAC-1001', amountCents: 5_000_00, expiresAt: inAnHour(), methods: ['BREB_KEY'] });
    expect([clash.status, clash.body.error]).toEqual([409, 'REFERENCE_CONFLICT']);

    // The QR: a dynamic EMVCo payload (01 = 12) with the amount, the transaction id and a valid CRC; the PNG decodes to it.
    const payload: string = c.breb.qrPayload;
    expect(payload.startsWith('000201010212')).toBe(true);
    expect(payload).toContain('5409100000.00');
    expect(payload).toContain(c.transactionId);
    expect(payload).toContain(c.breb.keyValue);
    expect(payload.slice(-4)).toBe(crc16(payload.slice(0, -4)));
    const png = await fetchDocumented(`${stack.gateway.url}/cobros/${c.id}/qr.png`, { headers: { authorization: `Bearer ${co.readKey}` } });
    expect(png.status).toBe(200);
    expect(decodeQrPng(Buffer.from(await png.arrayBuffer()))).toBe(payload);

    // Pay part of it by the QR (the payer changes the amount), the rest by typing the key.
    expect((await incoming({ qrPayload: payload, amountCents: 40_000_00 })).status).toBe(202);
    await eventually(async () => (await cobro(c.id)).status === 'PARTIALLY_PAID', 20_000, 100);
    expect((await incoming({ keyValue: c.breb.keyValue, amountCents: 60_000_00 })).status).toBe(202);
    await eventually(async () => (await cobro(c.id)).status === 'PAID', 20_000, 100);
    // Paid twice: the excess is accepted (the default policy) and shown, not counted.
    expect((await incoming({ qrPayload: payload })).status).toBe(202);
    await eventually(async () => (await cobro(c.id)).payments.length === 3, 20_000, 100);
    const paid = await cobro(c.id);
    expect(paid).toMatchObject({ status: 'PAID', paidAmountCents: 100_000_00, paidAt: expect.any(String) });
    expect(paid.payments.map((p: any) => [p.amountCents, p.matchedBy, p.disposition])).toEqual([
      [40_000_00, 'TRANSACTION_ID', 'COUNTED'],
      [60_000_00, 'DYNAMIC_KEY', 'COUNTED'],
      [100_000_00, 'TRANSACTION_ID', 'EXCESS'],
    ]);
    // Each payment is a deposit of the company, credited to its BREB wallet.
    const listed = (await get('/deposits?rail=BREB&cursor=&limit=100')).body.items;
    for (const p of paid.payments) {
      const d = listed.find((x: any) => x.id === p.depositId);
      expect([d?.status, d?.source, d?.brebKey?.value]).toEqual(['ASSIGNED', 'BREB', c.breb.keyValue]);
    }

    // The webhooks, in order for the cobro, each verified by the Standard Webhooks library.
    const hits = await eventually(
      async () => {
        const h = of(c.id);
        return h.length >= 3 ? h : null;
      },
      20_000,
      100,
    );
    expect(hits.map((h) => h.body.type)).toEqual(['cobro.created', 'cobro.partially_paid', 'cobro.paid']);
    for (const h of hits) expect(verifyWebhook(secret, h)).toBe(true);
    expect(hits[2]!.body.data).toMatchObject({ id: c.id, status: 'PAID', paidAmountCents: 100_000_00, depositId: paid.payments[1].depositId });
  });

  it('a cobro with a PSE link: paid through PSE (matched by its link), then reversed by the provider (OPEN again); a PSE link of yours carrying a cobro reference matches by reference', async () => {
    const psePay = (depositId: string) =>
      fetch(`${stack.sandbox!.url}/sandbox/pse/${depositId}/pay`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ outcome: 'APPROVED', payerBank: 'Bancolombia' }),
      });
    const created = await post('/cobros', {
      reference: 'FAC-5001',
      amountCents: 250_000_00,
      methods: ['BREB_QR', 'PSE'],
      psePayer: { documentTypeId: 1, documentNumber: '1020304050', firstName: 'Laura', lastName: 'Gómez Ruiz', email: 'laura@example.com' },
    });
    expect(created.status).toBe(201);
    const c = created.body;
    expect(c.pse).toEqual({ depositId: expect.stringMatching(/^dep_/), paygatewayUrl: expect.stringContaining(c.pse.depositId) });
    expect(c.breb).not.toBeNull();
    expect((await psePay(c.pse.depositId)).status).toBe(200);
    await eventually(async () => (await cobro(c.id)).status === 'PAID', 20_000, 100);
    expect((await cobro(c.id)).payments).toMatchObject([{ depositId: c.pse.depositId, source: 'PSE', matchedBy: 'PSE_LINK', amountCents: 250_000_00 }]);

    // The provider reverses the payment (debited back from the ACH wallet): the cobro no longer counts it and, before its
    // expiry, is OPEN again; the payment shows the reversal; webhook cobro.payment_reversed.
    const reversed = await fetch(`${stack.sandbox!.url}/sandbox/pse/${c.pse.depositId}/reverse`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(reversed.status).toBe(200);
    const reopened = await eventually(
      async () => {
        const b = await cobro(c.id);
        return b.status === 'OPEN' && b;
      },
      20_000,
      100,
    );
    expect(reopened).toMatchObject({
      paidAmountCents: 0,
      paidAt: null,
      payments: [{ depositId: c.pse.depositId, disposition: 'COUNTED', reversedCents: 250_000_00, returnedCents: 0 }],
    });
    const reversedDeposits = (await get('/deposits?status=REVERSED&cursor=&limit=100')).body.items;
    expect(reversedDeposits.map((d: any) => d.id)).toContain(c.pse.depositId);
    const hit = await eventually(async () => of(c.id).find((x) => x.body.type === 'cobro.payment_reversed'), 20_000, 100);
    expect(verifyWebhook(secret, hit)).toBe(true);
    expect(hit.body.data).toMatchObject({ id: c.id, status: 'OPEN', paidAmountCents: 0, depositId: c.pse.depositId });
    expect(of(c.id).map((x) => x.body.type)).toEqual(['cobro.created', 'cobro.paid', 'cobro.payment_reversed']);

    // PSE needs a fixed amount and its payer.
    const noPayer = await post('/cobros', { reference: 'FAC-5002', amountCents: 1_000_00, methods: ['PSE'] });
    expect([noPayer.status, noPayer.body.details?.fields?.[0]?.path]).toEqual([400, 'psePayer']);

    // A link made with POST /deposits/pse whose internalRef is a cobro's reference pays that cobro.
    const byRef = (await post('/cobros', { reference: 'FAC-5003', amountCents: 90_000_00, methods: ['BREB_KEY'] })).body;
    const link = await post('/deposits/pse', {
      amountCents: 90_000_00,
      payerDocumentTypeId: 1,
      payerDocumentNumber: '1020304050',
      payerFirstName: 'Laura',
      payerLastName: 'Gómez Ruiz',
      payerEmail: 'laura@example.com',
      internalRef: 'FAC-5003',
    });
    expect(link.status).toBe(201);
    expect((await psePay(link.body.id)).status).toBe(200);
    await eventually(async () => (await cobro(byRef.id)).status === 'PAID', 20_000, 100);
    expect((await cobro(byRef.id)).payments).toMatchObject([{ depositId: link.body.id, matchedBy: 'REFERENCE', source: 'PSE' }]);
  });

  it('matches a payment to a customer key by the expected payer, when the cobro names that payer and the amount fits the range', async () => {
    const key = (await post('/breb/collect-keys', { externalId: 'cliente-7', name: 'Tienda Siete' })).body;
    const c = (
      await post('/cobros', {
        reference: 'FAC-2001',
        minAmountCents: 10_000_00,
        maxAmountCents: 20_000_00,
        expiresAt: inAnHour(),
        expectedPayer: { document: '79.123.456', name: 'Pedro Pérez' },
        methods: ['BREB_KEY'],
      })
    ).body;
    expect(c).toMatchObject({ status: 'OPEN', amountType: 'RANGE', minAmountCents: 10_000_00, maxAmountCents: 20_000_00 });
    expect((await incoming({ keyValue: key.key.value, amountCents: 15_000_00 })).status).toBe(202);
    await eventually(async () => (await cobro(c.id)).status === 'PAID', 20_000, 100);
    expect((await cobro(c.id)).payments).toMatchObject([{ amountCents: 15_000_00, matchedBy: 'PAYER_RULE', payerDocument: 'CC 79123456' }]);
  });

  it('the policy return: an overpayment counted up to the amount, the rest returned to the payer automatically through the network; a second payment returned whole', async () => {
    const c = (
      await post('/cobros', { reference: 'FAC-RET-1', amountCents: 50_000_00, expiresAt: inAnHour(), methods: ['BREB_KEY'], overpaymentPolicy: 'return' })
    ).body;
    expect(c).toMatchObject({ status: 'OPEN', overpaymentPolicy: 'return' });
    const brebBalance = async () => BigInt((await get('/wallets/balance')).body.wallets.find((w: any) => w.rail === 'BREB').availableCents);
    expect((await incoming({ keyValue: c.breb.keyValue, amountCents: 80_000_00 })).status).toBe(202);
    const paid = await eventually(
      async () => {
        const x = await cobro(c.id);
        return x.status === 'PAID' && x.payments[0]?.autoReturn?.status === 'REQUESTED' ? x : undefined;
      },
      20_000,
      100,
    );
    expect(paid).toMatchObject({
      paidAmountCents: 50_000_00,
      payments: [{ amountCents: 80_000_00, disposition: 'COUNTED', autoReturn: { amountCents: 30_000_00, error: null } }],
    });
    const depositId = paid.payments[0].depositId;
    const back = await eventually(
      async () => {
        const r = await get(`/deposits/${depositId}/returns`);
        return r.body.items?.[0]?.status === 'RETURNED' ? r.body.items[0] : undefined;
      },
      20_000,
      100,
    );
    expect(back).toMatchObject({
      id: paid.payments[0].autoReturn.returnId,
      rail: 'BREB',
      amountCents: '3000000',
      reason: 'OVERPAYMENT',
      depositAmountCents: '8000000',
    });
    // The deposit listing names the cobro the payment was matched to.
    const listed = await eventually(
      async () => ((await get('/deposits?rail=BREB&limit=100')).body.deposits ?? []).find((d: any) => d.id === depositId),
      10_000,
    );
    expect(listed.cobroId).toBe(c.id);

    // Paid twice: the second payment goes back whole (RETURNED); the wallet keeps only what the cobro counted.
    const before = await brebBalance();
    expect((await incoming({ keyValue: c.breb.keyValue, amountCents: 5_000_00 })).status).toBe(202);
    const twice = await eventually(
      async () => {
        const x = await cobro(c.id);
        return x.payments[1]?.autoReturn?.status === 'REQUESTED' ? x : undefined;
      },
      20_000,
      100,
    );
    expect(twice).toMatchObject({ paidAmountCents: 50_000_00, payments: [{}, { disposition: 'RETURNED', autoReturn: { amountCents: 5_000_00 } }] });
    const second = await eventually(async () => {
      const r = await get(`/deposits/${twice.payments[1].depositId}/returns`);
      return r.body.items?.[0]?.status === 'RETURNED' ? r.body.items[0] : undefined;
    }, 20_000);
    expect(second.amountCents).toBe('500000');
    // Credited net of its fee, then returned whole (the fee is not given back).
    expect((await brebBalance()) - before).toBe(BigInt(twice.payments[1].netAmountCents) - 5_000_00n);
  });

  it('lists a payment that matched no cobro, and attaches it by hand', async () => {
    const key = (await post('/breb/collect-keys', { externalId: 'cliente-8', name: 'Tienda Ocho' })).body;
    const c = (await post('/cobros', { reference: 'FAC-4001', amountCents: 8_000_00, methods: ['BREB_KEY'] })).body;
    expect((await incoming({ keyValue: key.key.value, amountCents: 8_000_00, payerDocument: 'CC 11111111' })).status).toBe(202);
    const listed = await eventually(
      async () => (await get('/cobros/unmatched-payments')).body.items.find((u: any) => u.reason === 'NO_MATCH' && u.amountCents === 8_000_00),
      20_000,
      100,
    );
    expect(listed).toMatchObject({ cobroId: null, source: 'BREB', payerDocument: 'CC 11111111' });
    const attached = await post(`/cobros/${c.id}/payments`, { depositId: listed.depositId });
    expect(attached.status).toBe(200);
    expect(attached.body).toMatchObject({
      status: 'PAID',
      paidAmountCents: 8_000_00,
      payments: [{ depositId: listed.depositId, matchedBy: 'MANUAL', disposition: 'COUNTED' }],
    });
    expect((await post(`/cobros/${c.id}/payments`, { depositId: listed.depositId })).body.payments).toHaveLength(1);
    expect((await get('/cobros/unmatched-payments')).body.items.map((u: any) => u.depositId)).not.toContain(listed.depositId);
    const elsewhere = (await post('/cobros', { reference: 'FAC-4002', amountCents: 8_000_00, methods: ['BREB_KEY'] })).body;
    const twice = await post(`/cobros/${elsewhere.id}/payments`, { depositId: listed.depositId });
    expect([twice.status, twice.body.error]).toEqual([409, 'INVALID_STATE_TRANSITION']);
    const foreign = await post(`/cobros/${elsewhere.id}/payments`, { depositId: listed.depositId }, other.writeKey);
    expect([foreign.status, foreign.body.error]).toEqual([404, 'DEPOSIT_NOT_FOUND']);
    const unknown = await post(`/cobros/${elsewhere.id}/payments`, { depositId: 'dep_000000000000000000000000' });
    expect([unknown.status, unknown.body.error]).toEqual([404, 'DEPOSIT_NOT_FOUND']);
    expect((await post(`/cobros/${elsewhere.id}/payments`, { depositId: 'nope' })).status).toBe(400);

    // Part of it returned to the payer: the cobro keeps what is left, and stays PAID.
    const back = await post(`/deposits/${listed.depositId}/returns`, { amountCents: 2_000_00, reason: 'CUSTOMER_REQUEST' });
    expect([back.status, back.body.status]).toEqual([201, 'RETURNED']);
    const after = await eventually(async () => {
      const b = await cobro(c.id);
      return b.returnedAmountCents === 2_000_00 && b;
    });
    expect(after).toMatchObject({ status: 'PAID', paidAmountCents: 8_000_00, payments: [{ depositId: listed.depositId, returnedCents: 2_000_00 }] });
  });

  it('cancels an open cobro: its key stops taking payments (a later one is held UNASSIGNED); a PAID one cannot be cancelled', async () => {
    const c = (await post('/cobros', { reference: 'FAC-3001', expiresAt: inAnHour(), methods: ['BREB_KEY'] })).body;
    expect(c).toMatchObject({ amountType: 'OPEN', amountCents: null });
    const cancelled = await post(`/cobros/${c.id}/cancel`, {});
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ status: 'CANCELLED', closedAt: expect.any(String) });
    expect((await post(`/cobros/${c.id}/cancel`, {})).body.status).toBe('CANCELLED');
    const late = await incoming({ keyValue: c.breb.keyValue, amountCents: 3_000_00 });
    expect(late.status).toBe(202);
    await eventually(
      async () => {
        const list = await get('/deposits?rail=BREB&status=UNASSIGNED&cursor=');
        return list.body.items.some((d: any) => d.brebKey?.value === c.breb.keyValue);
      },
      20_000,
      100,
    );
    expect((await cobro(c.id)).payments).toEqual([]);
    await eventually(async () => of(c.id).some((h) => h.body.type === 'cobro.cancelled'), 20_000, 100);

    // Without expiresAt: 24 hours.
    const open = (await post('/cobros', { reference: 'FAC-3002', methods: ['BREB_QR'] })).body;
    expect(Math.abs(Date.parse(open.expiresAt) - Date.parse(open.createdAt) - 24 * 3600_000)).toBeLessThan(1000);
    await incoming({ keyValue: open.breb.keyValue, amountCents: 1_234_00 });
    await eventually(async () => (await cobro(open.id)).status === 'PAID', 20_000, 100);
    const refused = await post(`/cobros/${open.id}/cancel`, {});
    expect([refused.status, refused.body.error]).toEqual([409, 'INVALID_STATE_TRANSITION']);
  });

  it('expires a partly paid cobro: cobro.expired, its key deleted, a payment of its QR after that held UNASSIGNED and never counted', async () => {
    const c = (
      await post('/cobros', { reference: 'FAC-6001', amountCents: 5_000_00, expiresAt: new Date(Date.now() + 2_500).toISOString(), methods: ['BREB_QR'] })
    ).body;
    expect(c.status).toBe('OPEN');
    expect((await incoming({ qrPayload: c.breb.qrPayload, amountCents: 2_000_00 })).status).toBe(202);
    await eventually(async () => (await cobro(c.id)).status === 'PARTIALLY_PAID', 20_000, 100);
    await eventually(async () => (await cobro(c.id)).status === 'EXPIRED', 20_000, 100);
    expect(await cobro(c.id)).toMatchObject({ status: 'EXPIRED', paidAmountCents: 2_000_00, closedAt: expect.any(String) });
    const hit = await eventually(async () => of(c.id).find((h) => h.body.type === 'cobro.expired'), 20_000, 100);
    expect(verifyWebhook(secret, hit)).toBe(true);
    // The payer's app refuses an expired QR; one that pays it anyway pays a deleted key.
    expect((await incoming({ qrPayload: c.breb.qrPayload })).status).toBe(422);
    expect((await incoming({ qrPayload: c.breb.qrPayload, ignoreExpiry: true })).status).toBe(202);
    await eventually(
      async () => (await get('/deposits?rail=BREB&status=UNASSIGNED&cursor=&limit=100')).body.items.some((d: any) => d.brebKey?.value === c.breb.keyValue),
      20_000,
      100,
    );
    expect(await cobro(c.id)).toMatchObject({ status: 'EXPIRED', paidAmountCents: 2_000_00 });
    expect((await cobro(c.id)).payments).toHaveLength(1);
  });

  it('lists newest first with a cursor and filters; another company reads nothing', async () => {
    const page1 = await get('/cobros?limit=2');
    expect(page1.status).toBe(200);
    expect(page1.body.items).toHaveLength(2);
    const page2 = await get(`/cobros?limit=2&cursor=${encodeURIComponent(page1.body.nextCursor)}`);
    expect(page2.body.items.map((x: any) => x.id)).not.toContain(page1.body.items[0].id);
    const byRef = await get('/cobros?reference=FAC-1001');
    expect(byRef.body.items.map((x: any) => x.reference)).toEqual(['FAC-1001']);
    const cancelled = await get('/cobros?status=CANCELLED');
    expect(cancelled.body.items.every((x: any) => x.status === 'CANCELLED')).toBe(true);
    const id = byRef.body.items[0].id;
    const foreign = await get(`/cobros/${id}`, other.readKey);
    expect([foreign.status, foreign.body.error]).toEqual([404, 'COBRO_NOT_FOUND']);
    expect((await post(`/cobros/${id}/cancel`, {}, other.writeKey)).status).toBe(404);
    expect((await get(`/cobros/${id}/qr.png`, other.readKey)).status).toBe(404);
    expect((await get('/cobros', other.readKey)).body).toEqual({ items: [], nextCursor: null });
    expect((await get('/cobros/cob_nope')).status).toBe(404);
  });

  it('refuses bad input: wrong types, missing fields, amount and range together, huge values, past expiry, malformed JSON', async () => {
    const ok = { reference: 'FAC-9', amountCents: 1_000_00, expiresAt: inAnHour(), methods: ['BREB_KEY'] };
    for (const bad of [
      {},
      { ...ok, amountCents: '100000' },
      { ...ok, amountCents: 99 },
      { ...ok, amountCents: 200_000_000_001 },
      { ...ok, minAmountCents: 100 },
      { ...ok, amountCents: undefined, minAmountCents: 5_000 },
      { ...ok, methods: [] },
      { ...ok, methods: ['CASH'] },
      { ...ok, methods: ['BREB_KEY', 'BREB_KEY'] },
      { ...ok, expiresAt: 'mañana' },
      { ...ok, reference: '' },
      { ...ok, overpaymentPolicy: 'return_all' },
      { ...ok, expectedPayer: {} },
      { ...ok, extra: true },
    ]) {
      const r = await post('/cobros', bad);
      expect({ bad, status: r.status, error: r.body.error }).toEqual({ bad, status: 400, error: 'INVALID_REQUEST' });
    }
    const past = await post('/cobros', { ...ok, expiresAt: new Date(Date.now() - 1000).toISOString() });
    expect([past.status, past.body.details?.fields?.[0]?.path]).toEqual([400, 'expiresAt']);
    const malformed = await fetch(`${stack.gateway.url}/cobros`, {
      method: 'POST',
      headers: { authorization: `Bearer ${co.writeKey}`, 'content-type': 'application/json' },
      body: '{"reference": ',
    });
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as any).error).toBe('INVALID_REQUEST');
    const byRead = await post('/cobros', ok, co.readKey);
    expect([byRead.status, byRead.body.error]).toEqual([403, 'INSUFFICIENT_SCOPE']);
  });

  it("the company's amount tolerance: set and read; a cobro made after it is PAID by a payment short by at most it; bad settings refused", async () => {
    const put = (body: unknown, key = co.writeKey) => stack.http('PUT', '/cobros/settings', { token: key, body });
    expect((await get('/cobros/settings')).body).toEqual({ amountToleranceCents: 0, amountToleranceBps: 0, updatedAt: null });
    const set = await put({ amountToleranceCents: 1_000_00, amountToleranceBps: 50 });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({ amountToleranceCents: 1_000_00, amountToleranceBps: 50, updatedAt: expect.any(String) });
    expect((await get('/cobros/settings')).body).toEqual(set.body);
    expect((await get('/cobros/settings', other.readKey)).body.amountToleranceCents).toBe(0);
    for (const bad of [
      {},
      { amountToleranceCents: -1, amountToleranceBps: 0 },
      { amountToleranceCents: 0, amountToleranceBps: 1001 },
      { amountToleranceCents: '5', amountToleranceBps: 0 },
    ]) {
      const r = await put(bad);
      expect({ bad, status: r.status, error: r.body.error }).toEqual({ bad, status: 400, error: 'INVALID_REQUEST' });
    }
    expect((await put({ amountToleranceCents: 0, amountToleranceBps: 0 }, co.readKey)).status).toBe(403);
    try {
      const c = (await post('/cobros', { reference: 'FAC-TOL-1', amountCents: 200_000_00, expiresAt: inAnHour(), methods: ['BREB_KEY'] })).body;
      // 0.5 % of 200,000 COP = 1,000 COP: the larger of the two.
      expect(c).toMatchObject({ status: 'OPEN', toleranceBelowCents: 1_000_00, toleranceAboveCents: 1_000_00 });
      expect((await incoming({ keyValue: c.breb.keyValue, amountCents: 199_200_00 })).status).toBe(202);
      await eventually(async () => (await cobro(c.id)).status === 'PAID', 20_000, 100);
      expect((await cobro(c.id)).paidAmountCents).toBe(199_200_00);
    } finally {
      expect((await put({ amountToleranceCents: 0, amountToleranceBps: 0 })).status).toBe(200);
    }
  });
});
