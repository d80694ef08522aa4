import { eventually } from '@wallet/platform/testing';
import { instantMark } from '../support/fixtures.js';
import { startStack } from '../support/stack.js';
import { verifyWebhook, WebhookReceiver, type Hit } from '../support/webhook-receiver.js';

type Stack = Awaited<ReturnType<typeof startStack>>;

/**
 * Issue 40's "Done when", as one story through the gateway (docs/cobros.md, docs/returns.md): a cobro
 * offering QR, key and PSE paid once by each (partial, partial, then the rest, its excess returned to
 * the payer through PSE on its own); a Bre-B overpayment returned automatically; an unmatched payment
 * attached by hand; a return of the cobro's PSE payment; expiry; cancellation; Idempotency-Key replays
 * of POST /cobros and of a return; GET /cobros's `from`/`to` window. Every webhook received is verified
 * with the `standardwebhooks` library and its type and data checked; the cross-service invariants are
 * checked after each step.
 */
describe('a cobro from creation to return, expiry and cancellation', () => {
  let stack: Stack;
  let co: Awaited<ReturnType<Stack['provision']>>;
  const rx = new WebhookReceiver('/cobros-lifecycle-events');
  let secret = '';
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) => stack.http('POST', path, { token: co.writeKey, body, headers });
  const get = (path: string) => stack.http('GET', path, { token: co.readKey });
  const cobro = async (id: string) => (await get(`/cobros/${id}`)).body;
  /**
   * A cobro at rest (no payment on its way) adds up (docs/cobros.md "Money safety"): its paid total is what its
   * COUNTED payments count (less their automatic returns), its returned total what of them went back.
   */
  const addsUp = (x: any) => {
    const counted = x.payments.filter((p: any) => p.disposition === 'COUNTED' && p.reversedCents === 0);
    const sum = (f: (p: any) => number) => counted.reduce((t: number, p: any) => t + f(p), 0);
    expect({ paid: x.paidAmountCents, returned: x.returnedAmountCents }).toEqual({
      paid: sum((p) => p.amountCents - (p.autoReturn?.amountCents ?? 0)),
      returned: sum((p) => p.returnedCents),
    });
  };
  const payer = { payerName: 'Pedro Pérez', payerDocument: 'CC 79123456', payerBank: 'Nequi' };
  /** The sandbox network playing the Bre-B payer: by the QR's payload or by typing the key. */
  const incoming = async (body: Record<string, unknown>) => {
    const res = await fetch(`${stack.sandbox!.url}/sandbox/breb/incoming`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...payer, ...body }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  /** The sandbox PSE provider: the payer approves the link's payment. */
  const psePay = async (depositId: string) => {
    const res = await fetch(`${stack.sandbox!.url}/sandbox/pse/${depositId}/pay`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ outcome: 'APPROVED', payerBank: 'Bancolombia' }),
    });
    return res.status;
  };
  const psePayer = { documentTypeId: 1, documentNumber: '1020304050', firstName: 'Laura', lastName: 'Gómez Ruiz', email: 'laura@example.com' };
  const inAnHour = () => new Date(Date.now() + 3600_000).toISOString();
  /** Every cobro this company made (201), oldest first: what GET /cobros may list. */
  const made: Array<{ id: string; createdAt: string }> = [];
  const create = async (body: Record<string, unknown>) => {
    const r = await post('/cobros', body);
    expect(r.status).toBe(201);
    made.push({ id: r.body.id, createdAt: r.body.createdAt });
    return r.body;
  };
  /** The verified deliveries about one cobro (data.id), in arrival order. */
  const ofCobro = (cobroId: string) => rx.hits.filter((h) => h.body.data?.id === cobroId && String(h.body.type).startsWith('cobro.'));
  /** Waits until `n` deliveries about the cobro arrived, verifies each with standardwebhooks and returns them. */
  const cobroHooks = async (cobroId: string, n: number): Promise<Hit[]> => {
    const hits = await eventually(async () => (ofCobro(cobroId).length >= n ? ofCobro(cobroId) : undefined), 30_000, 100);
    for (const h of hits) expect(verifyWebhook(secret, h)).toBe(true);
    return hits;
  };
  /** The verified deposit.returned delivery of one return. */
  const returnedHook = async (returnId: string): Promise<Hit> => {
    const hit = await eventually(async () => rx.hits.find((h) => h.body.data?.id === returnId), 30_000, 100);
    expect(verifyWebhook(secret, hit)).toBe(true);
    return hit;
  };
  /** A return of the deposit once it is final (RETURNED or FAILED), as GET /deposits/{id}/returns lists it. */
  const finalReturn = (depositId: string, returnId: string) =>
    eventually(
      async () => {
        const r = await get(`/deposits/${depositId}/returns`);
        const x = (r.body.items ?? []).find((i: any) => i.id === returnId);
        return x && x.status !== 'PENDING' ? x : undefined;
      },
      30_000,
      100,
    );

  // The cobro with QR, key and PSE, and its three payments (steps 1, 4 and 7 share them).
  let full: any;
  let qrDepositId = '';
  let pseDepositId = '';

  beforeAll(async () => {
    // A short minimum life and no grace, so a cobro can expire within the test.
    stack = await startStack({ deposits: true, webhooks: true, depositEnv: { COBRO_MIN_TTL_SECONDS: '1', COBRO_EXPIRY_GRACE_SECONDS: '0' } });
    co = await stack.provision('Ciclo de Cobros S.A.S.', { taxRegime: 'COMMON' });
    await stack.admin('PATCH', `/admin/companies/${co.id}`, { rateLimitMultiplier: 1000 });
    await rx.start();
    const ep = await post('/webhooks/endpoints', {
      url: rx.url,
      events: [
        'cobro.created',
        'cobro.partially_paid',
        'cobro.paid',
        'cobro.expired',
        'cobro.cancelled',
        'cobro.payment_reversed',
        'deposit.returned',
        'deposit.return_failed',
      ],
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

  it('a cobro offering QR, key and PSE: paid in part by the QR, in part by the key, the rest by PSE (its excess returned automatically); every webhook verified', async () => {
    const c = await create({
      reference: 'CICLO-1',
      amountCents: 120_000_00,
      description: 'Factura ciclo 1',
      methods: ['BREB_QR', 'BREB_KEY', 'PSE'],
      psePayer,
      overpaymentPolicy: 'return',
    });
    expect(c).toMatchObject({
      status: 'OPEN',
      amountType: 'FIXED',
      amountCents: 120_000_00,
      paidAmountCents: 0,
      returnedAmountCents: 0,
      overpaymentPolicy: 'return',
      payments: [],
      breb: { keyValue: expect.stringMatching(/^@/), qrPayload: expect.stringContaining(c.transactionId), qrPngUrl: `/cobros/${c.id}/qr.png` },
      pse: { depositId: expect.stringMatching(/^dep_/), paygatewayUrl: expect.stringContaining(c.pse.depositId) },
    });
    pseDepositId = c.pse.depositId;

    // 1. The QR, the payer changing the amount: part of it.
    expect((await incoming({ qrPayload: c.breb.qrPayload, amountCents: 30_000_00 })).status).toBe(202);
    const partial = await eventually(
      async () => {
        const x = await cobro(c.id);
        return x.status === 'PARTIALLY_PAID' && x.payments.length === 1 ? x : undefined;
      },
      30_000,
      100,
    );
    expect(partial).toMatchObject({ paidAmountCents: 30_000_00, payments: [{ source: 'BREB', matchedBy: 'TRANSACTION_ID', disposition: 'COUNTED' }] });
    qrDepositId = partial.payments[0].depositId;
    addsUp(partial);

    // 2. The key, typed: another part; still PARTIALLY_PAID.
    expect((await incoming({ keyValue: c.breb.keyValue, amountCents: 40_000_00 })).status).toBe(202);
    const partial2 = await eventually(
      async () => {
        const x = await cobro(c.id);
        return x.payments.length === 2 && x.paidAmountCents === 70_000_00 ? x : undefined;
      },
      30_000,
      100,
    );
    addsUp(partial2);
    expect(partial2).toMatchObject({ status: 'PARTIALLY_PAID', payments: [{}, { source: 'BREB', matchedBy: 'DYNAMIC_KEY', disposition: 'COUNTED' }] });

    // 3. The PSE link (its amount is the cobro's): it completes the cobro; what is beyond the amount goes back through PSE.
    expect(await psePay(pseDepositId)).toBe(200);
    full = await eventually(
      async () => {
        const x = await cobro(c.id);
        return x.status === 'PAID' && x.payments[2]?.autoReturn?.status === 'REQUESTED' ? x : undefined;
      },
      30_000,
      100,
    );
    addsUp(full);
    expect(full).toMatchObject({ paidAmountCents: 120_000_00, returnedAmountCents: 0, paidAt: expect.any(String) });
    expect(full.payments.map((p: any) => [p.source, p.amountCents, p.matchedBy, p.disposition, p.returnedCents])).toEqual([
      ['BREB', 30_000_00, 'TRANSACTION_ID', 'COUNTED', 0],
      ['BREB', 40_000_00, 'DYNAMIC_KEY', 'COUNTED', 0],
      ['PSE', 120_000_00, 'PSE_LINK', 'COUNTED', 0],
    ]);
    expect(full.payments[2]).toMatchObject({ depositId: pseDepositId, autoReturn: { amountCents: 70_000_00, status: 'REQUESTED' } });
    const auto = await finalReturn(pseDepositId, full.payments[2].autoReturn.returnId);
    expect(auto).toMatchObject({ rail: 'PSE', status: 'RETURNED', amountCents: '7000000', reason: 'OVERPAYMENT', depositAmountCents: '12000000' });

    // The webhooks, in order, each verified; each payment names its deposit.
    const hooks = await cobroHooks(c.id, 4);
    expect(hooks.map((h) => [h.body.type, h.body.data.status, h.body.data.paidAmountCents, h.body.data.depositId])).toEqual([
      ['cobro.created', 'OPEN', 0, undefined],
      ['cobro.partially_paid', 'PARTIALLY_PAID', 30_000_00, qrDepositId],
      ['cobro.partially_paid', 'PARTIALLY_PAID', 70_000_00, full.payments[1].depositId],
      ['cobro.paid', 'PAID', 120_000_00, pseDepositId],
    ]);
    expect(hooks[0]!.body.data).toMatchObject({ id: c.id, reference: 'CICLO-1', amountCents: 120_000_00, overpaymentPolicy: 'return' });
    const back = await returnedHook(auto.id);
    expect(back.body.type).toBe('deposit.returned');
    expect(back.body.data).toMatchObject({
      id: auto.id,
      depositId: pseDepositId,
      rail: 'PSE',
      amountCents: '7000000',
      reason: 'OVERPAYMENT',
      status: 'RETURNED',
    });
  });

  it('an overpayment by Bre-B on a cobro with policy return: counted up to the amount, the rest returned automatically; deposit.returned verified', async () => {
    const c = await create({ reference: 'CICLO-2', amountCents: 50_000_00, expiresAt: inAnHour(), methods: ['BREB_KEY'], overpaymentPolicy: 'return' });
    expect((await incoming({ keyValue: c.breb.keyValue, amountCents: 80_000_00 })).status).toBe(202);
    const paid = await eventually(
      async () => {
        const x = await cobro(c.id);
        return x.status === 'PAID' && x.payments[0]?.autoReturn?.status === 'REQUESTED' ? x : undefined;
      },
      30_000,
      100,
    );
    addsUp(paid);
    expect(paid).toMatchObject({
      paidAmountCents: 50_000_00,
      returnedAmountCents: 0,
      payments: [{ amountCents: 80_000_00, matchedBy: 'DYNAMIC_KEY', disposition: 'COUNTED', returnedCents: 0, autoReturn: { amountCents: 30_000_00 } }],
    });
    const depositId = paid.payments[0].depositId;
    const r = await finalReturn(depositId, paid.payments[0].autoReturn.returnId);
    expect(r).toMatchObject({ rail: 'BREB', status: 'RETURNED', amountCents: '3000000', reason: 'OVERPAYMENT', depositAmountCents: '8000000' });
    const hit = await returnedHook(r.id);
    expect(hit.body.type).toBe('deposit.returned');
    expect(hit.body.data).toMatchObject({ id: r.id, depositId, rail: 'BREB', amountCents: '3000000', reason: 'OVERPAYMENT', status: 'RETURNED' });
    const hooks = await cobroHooks(c.id, 2);
    expect(hooks.map((h) => [h.body.type, h.body.data.depositId])).toEqual([
      ['cobro.created', undefined],
      ['cobro.paid', depositId],
    ]);
    expect(hooks[1]!.body.data).toMatchObject({ status: 'PAID', paidAmountCents: 50_000_00 });
  });

  it('a payment that matched no cobro, listed unmatched, attached by hand: the cobro PAID by it (MANUAL); cobro.paid verified', async () => {
    const key = await post('/breb/collect-keys', { externalId: 'ciclo-cliente-1', name: 'Tienda Ciclo' });
    expect(key.status).toBe(201);
    const paid = await incoming({ keyValue: key.body.key.value, amountCents: 8_765_00, payerDocument: 'CC 11111111' });
    expect(paid.status).toBe(202);
    const listed = await eventually(async () => (await get('/cobros/unmatched-payments')).body.items.find((u: any) => u.amountCents === 8_765_00), 30_000, 100);
    expect(listed).toMatchObject({ reason: 'NO_MATCH', cobroId: null, source: 'BREB', payerDocument: 'CC 11111111' });
    const c = await create({ reference: 'CICLO-3', amountCents: 8_765_00, expiresAt: inAnHour(), methods: ['BREB_KEY'] });
    const attached = await post(`/cobros/${c.id}/payments`, { depositId: listed.depositId });
    expect(attached.status).toBe(200);
    expect(attached.body).toMatchObject({
      status: 'PAID',
      paidAmountCents: 8_765_00,
      payments: [{ depositId: listed.depositId, matchedBy: 'MANUAL', disposition: 'COUNTED', amountCents: 8_765_00 }],
    });
    addsUp(attached.body);
    expect((await get('/cobros/unmatched-payments')).body.items.map((u: any) => u.depositId)).not.toContain(listed.depositId);
    const hooks = await cobroHooks(c.id, 2);
    expect(hooks.map((h) => [h.body.type, h.body.data.status, h.body.data.depositId])).toEqual([
      ['cobro.created', 'OPEN', undefined],
      ['cobro.paid', 'PAID', listed.depositId],
    ]);
  });

  it("a return of the cobro's PSE payment (POST /deposits/{id}/returns): final, on the payment's returnedCents and the cobro's returnedAmountCents; deposit.returned verified", async () => {
    // What is left of the PSE payment after its automatic return: 50,000 COP counted; 20,000 of them go back.
    const r = await post(`/deposits/${pseDepositId}/returns`, { amountCents: 20_000_00, reason: 'CUSTOMER_REQUEST', description: 'Devolución parcial' });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      id: expect.stringMatching(/^ret_[a-z0-9]{24}$/),
      depositId: pseDepositId,
      rail: 'PSE',
      amountCents: '2000000',
      reason: 'CUSTOMER_REQUEST',
      depositAmountCents: '12000000',
      returnedAmountCents: '9000000',
    });
    const done = await finalReturn(pseDepositId, r.body.id);
    expect(done.status).toBe('RETURNED');
    // More than is left is refused (70,000 + 20,000 of 120,000 went back).
    const over = await post(`/deposits/${pseDepositId}/returns`, { amountCents: 30_000_01, reason: 'OTHER' });
    expect([over.status, over.body.error, over.body.details]).toEqual([
      422,
      'RETURN_EXCEEDS_PAYMENT',
      { grossCents: '12000000', returnedCents: '9000000', returnableCents: '3000000' },
    ]);
    const after = await eventually(
      async () => {
        const x = await cobro(full.id);
        return x.returnedAmountCents === 20_000_00 ? x : undefined;
      },
      30_000,
      100,
    );
    // A PAID cobro refunded in part stays PAID; only the manual return shows (the automatic one never counted).
    addsUp(after);
    expect(after).toMatchObject({ status: 'PAID', paidAmountCents: 120_000_00 });
    expect(after.payments.map((p: any) => [p.depositId, p.returnedCents])).toEqual([
      [qrDepositId, 0],
      [full.payments[1].depositId, 0],
      [pseDepositId, 20_000_00],
    ]);
    const hit = await returnedHook(r.body.id);
    expect(hit.body.type).toBe('deposit.returned');
    expect(hit.body.data).toMatchObject({ id: r.body.id, depositId: pseDepositId, rail: 'PSE', amountCents: '2000000', status: 'RETURNED' });
  });

  it('a cobro that is not paid in time: EXPIRED, what was paid kept; cobro.expired verified', async () => {
    // Eight seconds of life (COBRO_MIN_TTL_SECONDS=1, no grace): room for the partial payment to be matched first on a loaded machine.
    const c = await create({ reference: 'CICLO-5', amountCents: 5_000_00, expiresAt: new Date(Date.now() + 8_000).toISOString(), methods: ['BREB_QR'] });
    expect(c.status).toBe('OPEN');
    expect((await incoming({ qrPayload: c.breb.qrPayload, amountCents: 2_000_00 })).status).toBe(202);
    await eventually(async () => (await cobro(c.id)).status === 'PARTIALLY_PAID', 30_000, 100);
    const expired = await eventually(
      async () => {
        const x = await cobro(c.id);
        return x.status === 'EXPIRED' ? x : undefined;
      },
      30_000,
      100,
    );
    addsUp(expired);
    expect(expired).toMatchObject({ paidAmountCents: 2_000_00, closedAt: expect.any(String) });
    const hooks = await cobroHooks(c.id, 3);
    expect(hooks.map((h) => [h.body.type, h.body.data.status, h.body.data.paidAmountCents])).toEqual([
      ['cobro.created', 'OPEN', 0],
      ['cobro.partially_paid', 'PARTIALLY_PAID', 2_000_00],
      ['cobro.expired', 'EXPIRED', 2_000_00],
    ]);
  });

  it('a cobro cancelled after a partial payment: CANCELLED (again: the same), what was paid kept; cobro.cancelled verified', async () => {
    const c = await create({ reference: 'CICLO-6', amountCents: 9_000_00, expiresAt: inAnHour(), methods: ['BREB_QR', 'BREB_KEY'] });
    expect((await incoming({ keyValue: c.breb.keyValue, amountCents: 1_000_00 })).status).toBe(202);
    await eventually(async () => (await cobro(c.id)).status === 'PARTIALLY_PAID', 30_000, 100);
    const cancelled = await post(`/cobros/${c.id}/cancel`, {});
    expect(cancelled.status).toBe(200);
    addsUp(cancelled.body);
    expect(cancelled.body).toMatchObject({ status: 'CANCELLED', paidAmountCents: 1_000_00, closedAt: expect.any(String) });
    const again = await post(`/cobros/${c.id}/cancel`, {});
    expect([again.status, again.body.status, again.body.closedAt]).toEqual([200, 'CANCELLED', cancelled.body.closedAt]);
    const hooks = await cobroHooks(c.id, 3);
    expect(hooks.map((h) => [h.body.type, h.body.data.status, h.body.data.paidAmountCents])).toEqual([
      ['cobro.created', 'OPEN', 0],
      ['cobro.partially_paid', 'PARTIALLY_PAID', 1_000_00],
      ['cobro.cancelled', 'CANCELLED', 1_000_00],
    ]);
  });

  it('Idempotency-Key: POST /cobros and POST /deposits/{id}/returns replayed with Idempotent-Replayed: true; another body under the key 409 IDEMPOTENCY_KEY_REUSED', async () => {
    const key = crypto.randomUUID();
    const body = { reference: 'CICLO-7', amountCents: 3_000_00, expiresAt: inAnHour(), methods: ['BREB_KEY'] };
    const first = await post('/cobros', body, { 'idempotency-key': key });
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    made.push({ id: first.body.id, createdAt: first.body.createdAt });
    const replay = await post('/cobros', body, { 'idempotency-key': key });
    expect([replay.status, replay.headers.get('idempotent-replayed')]).toEqual([201, 'true']);
    expect(replay.body).toEqual(first.body);
    const reused = await post('/cobros', { ...body, reference: 'CICLO-7B' }, { 'idempotency-key': key });
    expect([reused.status, reused.body.error]).toEqual([409, 'IDEMPOTENCY_KEY_REUSED']);
    expect((await get('/cobros?reference=CICLO-7')).body.items.map((x: any) => x.id)).toEqual([first.body.id]);
    expect((await get('/cobros?reference=CICLO-7B')).body.items).toEqual([]);

    // A return of the cobro's QR payment, asked twice under one key: one return.
    const rkey = crypto.randomUUID();
    const rbody = { amountCents: 5_000_00, reason: 'DUPLICATE' };
    const r1 = await post(`/deposits/${qrDepositId}/returns`, rbody, { 'idempotency-key': rkey });
    expect(r1.status).toBe(201);
    expect(r1.body).toMatchObject({
      depositId: qrDepositId,
      rail: 'BREB',
      amountCents: '500000',
      depositAmountCents: '3000000',
      returnedAmountCents: '500000',
    });
    const r2 = await post(`/deposits/${qrDepositId}/returns`, rbody, { 'idempotency-key': rkey });
    expect([r2.status, r2.headers.get('idempotent-replayed'), r2.body.id]).toEqual([201, 'true', r1.body.id]);
    expect(r2.body).toEqual(r1.body);
    const r3 = await post(`/deposits/${qrDepositId}/returns`, { ...rbody, amountCents: 6_000_00 }, { 'idempotency-key': rkey });
    expect([r3.status, r3.body.error]).toEqual([409, 'IDEMPOTENCY_KEY_REUSED']);
    const done = await finalReturn(qrDepositId, r1.body.id);
    expect(done.status).toBe('RETURNED');
    expect((await get(`/deposits/${qrDepositId}/returns`)).body.items.map((x: any) => [x.id, x.amountCents])).toEqual([[r1.body.id, '500000']]);
    const after = await eventually(
      async () => {
        const x = await cobro(full.id);
        return x.returnedAmountCents === 25_000_00 ? x : undefined;
      },
      30_000,
      100,
    );
    addsUp(after);
    expect(after.payments.map((p: any) => p.returnedCents)).toEqual([5_000_00, 0, 20_000_00]);
    const hit = await returnedHook(r1.body.id);
    expect(hit.body.data).toMatchObject({ id: r1.body.id, depositId: qrDepositId, rail: 'BREB', amountCents: '500000', status: 'RETURNED' });
    // One cobro.created for the replayed creation, one deposit.returned for the replayed return.
    const created = await cobroHooks(first.body.id, 1);
    expect(created.map((h) => h.body.type)).toEqual(['cobro.created']);
    expect(rx.hits.filter((h) => h.body.data?.id === r1.body.id)).toHaveLength(1);
  });

  it('GET /cobros with from/to lists exactly the cobros created in the window, newest first', async () => {
    const t1 = await instantMark();
    const a = await create({ reference: 'CICLO-8A', amountCents: 1_000_00, expiresAt: inAnHour(), methods: ['BREB_KEY'] });
    const b = await create({ reference: 'CICLO-8B', amountCents: 1_000_00, expiresAt: inAnHour(), methods: ['BREB_QR'] });
    const t2 = await instantMark();
    const c = await create({ reference: 'CICLO-8C', expiresAt: inAnHour(), methods: ['BREB_KEY'] });
    const ids = async (query: string) => {
      const r = await get(`/cobros?limit=200&${query}`);
      expect(r.status).toBe(200);
      return r.body.items.map((x: any) => x.id);
    };
    const q = (s: string) => encodeURIComponent(s);
    expect(await ids(`from=${q(t1)}&to=${q(t2)}`)).toEqual([b.id, a.id]);
    expect(await ids(`from=${q(t2)}`)).toEqual([c.id]);
    const before = made.filter((m) => m.id !== a.id && m.id !== b.id && m.id !== c.id).map((m) => m.id);
    expect(await ids(`to=${q(t1)}`)).toEqual(before.reverse());
    // The bounds are inclusive: a window from one cobro's createdAt to another's holds both.
    expect(await ids(`from=${q(a.createdAt)}&to=${q(b.createdAt)}`)).toEqual([b.id, a.id]);
    expect(await ids(`from=${q(a.createdAt)}&to=${q(b.createdAt)}&status=OPEN`)).toEqual([b.id, a.id]);
    expect(await ids(`from=${q(t2)}&to=${q(t1)}`)).toEqual([]);
    const bad = await get('/cobros?from=ayer');
    expect([bad.status, bad.body.error]).toEqual([400, 'INVALID_REQUEST']);
    await cobroHooks(c.id, 1);
  });

  it('every webhook received was verified with standardwebhooks; every type of the story arrived', async () => {
    // Whatever arrived since the last step is verified too.
    expect(rx.hits.length).toBeGreaterThan(0);
    for (const h of rx.hits) expect({ type: h.body.type, verified: verifyWebhook(secret, h) }).toEqual({ type: h.body.type, verified: true });
    const types = new Set(rx.hits.map((h) => h.body.type));
    for (const t of ['cobro.created', 'cobro.partially_paid', 'cobro.paid', 'cobro.expired', 'cobro.cancelled', 'deposit.returned']) expect(types).toContain(t);
    // Nothing failed, nothing was reversed in this story.
    expect(types.has('deposit.return_failed')).toBe(false);
    expect(types.has('cobro.payment_reversed')).toBe(false);
    // A wrong secret does not verify: the check above means something.
    const wrong = `whsec_${Buffer.from('not-the-secret-of-this-endpoint!').toString('base64')}`;
    expect(verifyWebhook(wrong, rx.hits[0]!)).toBe(false);
  });
});
