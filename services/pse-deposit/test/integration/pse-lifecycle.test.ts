import { randomUUID } from 'node:crypto';
import { eventually } from '@wallet/platform/testing';
import { metricsRegistry, signPayload } from '@wallet/platform';
import { MovementStatus, MovementType, Rail, failure, payer, startHarness, type Harness } from './harness.js';

const SECRET = 'dev-rail-callback-secret';

describe('PSE deposits: creation, confirmation, expiry, reversal', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h?.stop();
  });
  afterEach(async () => {
    await h.expectInvariants();
  });

  const get = (co: string, id: string) => h.client.getDeposit({ id }, h.ctx(co));
  const waitStatus = (co: string, id: string, status: string) =>
    eventually(async () => {
      const d = await get(co, id);
      return d.status === status ? d : undefined;
    }, 10_000);
  const signed = (body: Record<string, unknown>, secret = SECRET) => {
    const raw = Buffer.from(JSON.stringify(body));
    return { rawBody: raw, signature: signPayload(secret, raw, Math.floor(Date.now() / 1000)) };
  };
  const outbox = async (id: string) =>
    (await h.deposit.db.query<{ subject: string }>(`select subject from pse_deposit.outbox where payload->'deposit'->>'id' = ? order by seq`, [id])).map(
      (r) => r.subject,
    );

  it('refuses bad input with every field named', async () => {
    const co = await h.newCompany();
    const e = await failure(
      h.client.createPseDeposit(
        payer({
          amountCents: 99n,
          payerDocumentTypeId: 3,
          payerDocumentNumber: '12',
          payerFirstName: '',
          payerLastName: ' ',
          payerEmail: 'x@',
          payerPhone: '123',
          internalRef: 'r'.repeat(101),
        }),
        h.ctx(co),
      ),
    );
    expect(e.code).toBe('INVALID_REQUEST');
    expect((e.details!.fields as Array<{ path: string }>).map((f) => f.path).sort()).toEqual([
      'amountCents',
      'internalRef',
      'payerDocumentNumber',
      'payerDocumentTypeId',
      'payerEmail',
      'payerFirstName',
      'payerLastName',
      'payerPhone',
    ]);
    expect((await failure(h.client.createPseDeposit(payer(), h.ctx()))).code).toBe('CALLER_NOT_ALLOWED');
    expect(await h.deposit.db.query(`select 1 from pse_deposit.deposits where company_id = ?`, [co])).toHaveLength(0);
  });

  it('FEE_EXCEEDS_AMOUNT when fee + IVA equals or exceeds the amount, with details', async () => {
    const co = await h.newCompany(); // fee 1,000 + IVA 190
    for (const amount of [1_190n, 1_000n]) {
      const e = await failure(h.client.createPseDeposit(payer({ amountCents: amount }), h.ctx(co)));
      expect(e.code).toBe('FEE_EXCEEDS_AMOUNT');
      expect(e.details).toEqual({ grossCents: Number(amount), totalFee: 1_000, ivaAmount: 190, totalCharged: 1_190 });
    }
    const ok = await h.client.createPseDeposit(payer({ amountCents: 1_191n }), h.ctx(co));
    expect(ok).toMatchObject({ status: 'PENDING_CONFIRM', netAmountCents: 1n, feeAmountCents: 1_000n, ivaAmountCents: 190n });
    // No IVA for a SIMPLE regime company: the same request, the signed profile's tax regime decides.
    const simple = await h.client.createPseDeposit(payer({ amountCents: 1_001n }), h.ctx(co, { ivaApplicable: false }));
    expect(simple).toMatchObject({ ivaAmountCents: 0n, netAmountCents: 1n });
  });

  it("takes the company's name and tax regime only from the signed caller context's profile", async () => {
    const co = await h.newCompany(); // fee 1,000
    const name = 'Comercio Firmado del Norte S.A.S.';
    const common = await h.client.createPseDeposit(payer({ amountCents: 50_000n }), h.ctx(co, { name, ivaApplicable: true }));
    expect(common).toMatchObject({ feeAmountCents: 1_000n, ivaAmountCents: 190n, netAmountCents: 48_810n });
    const simple = await h.client.createPseDeposit(payer({ amountCents: 50_000n }), h.ctx(co, { name, ivaApplicable: false }));
    expect(simple).toMatchObject({ feeAmountCents: 1_000n, ivaAmountCents: 0n, netAmountCents: 49_000n });
    // The provider's pay page names the company the gateway signed for.
    const page = await (await fetch(common.paygatewayUrl!)).text();
    expect(page).toContain(name);
    // A caller context without a profile (a dashboard user's, as signed today) gets nothing: no default regime or name.
    const user = {
      requestId: randomUUID(),
      companyId: co,
      principal: { kind: 'user' as const, companyId: co, userId: 'u-1', email: 'u@example.com', role: 'ADMIN' },
    };
    expect((await failure(h.client.createPseDeposit(payer(), user))).code).toBe('CALLER_NOT_ALLOWED');
    expect((await failure(h.client.shareByEmail({ depositId: common.id, recipientEmail: 'x@example.com' }, user))).code).toBe('CALLER_NOT_ALLOWED');
    expect(await h.deposit.db.query(`select id from pse_deposit.deposits where company_id = ? order by created_at`, [co])).toHaveLength(2);
  });

  it('provider down → PSE_PROVIDER_ERROR and nothing stored; every call to the PSE gateway is metered by outcome', async () => {
    const series = async (line: string) => {
      const found = (await metricsRegistry.metrics()).split('\n').find((l) => l.startsWith(`${line} `));
      return found === undefined ? 0 : Number(found.slice(line.length + 1));
    };
    const calls = (outcome: string) => series(`wallet_rail_requests_total{rail="PSE",operation="create_link",outcome="${outcome}"}`);
    const timed = () => series('wallet_rail_request_duration_seconds_count{rail="PSE",operation="create_link"}');
    const before = { ok: await calls('ok'), error: await calls('error'), timed: await timed() };
    const co = await h.newCompany();
    await h.client.createPseDeposit(payer(), h.ctx(co));
    await h.sandboxPost('/sandbox/faults', { pse: 'down' });
    try {
      expect((await failure(h.client.createPseDeposit(payer({ internalRef: 'pedido-caido' }), h.ctx(co)))).code).toBe('PSE_PROVIDER_ERROR');
    } finally {
      await h.sandboxPost('/sandbox/faults', { pse: 'up' });
    }
    expect(await h.deposit.db.query(`select internal_ref from pse_deposit.deposits where company_id = ?`, [co])).toEqual([{ internal_ref: 'pedido-1' }]);
    expect({ ok: await calls('ok'), error: await calls('error'), timed: await timed() }).toEqual({
      ok: before.ok + 1,
      error: before.error + 1,
      timed: before.timed + 2,
    });
  });

  it('paid → ASSIGNED, net credited to the ACH wallet once, TRANSFER_IN/PSE movement; duplicates and late outcomes change nothing', async () => {
    const co = await h.newCompany();
    const before = Date.now();
    const d = await h.client.createPseDeposit(payer(), h.ctx(co));
    expect(d).toMatchObject({
      status: 'PENDING_CONFIRM',
      amountCents: 100_000n,
      currency: 'COP',
      source: 'PSE',
      internalRef: 'pedido-1',
      payerName: 'Ana María Pérez',
      payerDocument: 'CC 1020304050',
      payerEmail: 'ana@example.com',
    });
    expect(d.id).toMatch(/^dep_[a-z0-9]{24}$/);
    expect(d.paygatewayUrl).toContain(`/pse/pay/${d.id}`);
    expect(d.providerTransferId).toBeUndefined();
    expect(d.expiresAt!.getTime()).toBeGreaterThanOrEqual(before + 86_400_000 - 5_000);
    expect(d.expiresAt!.getTime()).toBeLessThanOrEqual(Date.now() + 86_400_000 + 5_000);

    const pay = await h.sandboxPost(`/sandbox/pse/${d.id}/pay`, { outcome: 'APPROVED', payerBank: 'Bancolombia' });
    expect(pay).toMatchObject({ status: 200, body: { status: 'PAID' } });
    const paid = await waitStatus(co, d.id, 'ASSIGNED');
    expect(paid).toMatchObject({ netAmountCents: 98_810n, payerBank: 'Bancolombia' });
    expect(paid.providerTransferId).toBeTruthy();
    expect(paid.providerConfirmedAt).toBeInstanceOf(Date);
    expect(await h.achAvailable(co)).toBe(98_810n);
    const movements = await h.ledgerClient.listMovements({ page: 0, limit: 10 }, h.ctx(co));
    expect(movements.items).toHaveLength(1);
    expect(movements.items[0]).toMatchObject({
      type: MovementType.TRANSFER_IN,
      rail: Rail.PSE,
      walletRail: Rail.ACH,
      status: MovementStatus.COMPLETED,
      amount: 100_000n,
      totalFee: 1_000n,
      ivaAmount: 190n,
      netAmount: 98_810n,
      reference: 'pedido-1',
      details: { payerName: 'Ana María Pérez', payerDocument: 'CC 1020304050', payerBank: 'Bancolombia' },
    });

    // The same delivery again (a provider retry): duplicate, nothing changes.
    const first = h.receiver.forDeposit(d.id).find((r) => r.status === 200)!;
    expect(await h.client.handlePseCallback({ rawBody: first.raw, signature: first.signature }, h.ctx())).toEqual({ accepted: true, duplicate: true });
    expect((await h.sandboxPost(`/sandbox/callbacks/${d.id}/redeliver`)).status).toBeLessThan(300);
    await eventually(async () => h.receiver.forDeposit(d.id).filter((r) => r.duplicate === true).length >= 1);
    // A late FAILED and a second PAID with new event ids: nothing changes.
    for (const status of ['FAILED', 'PAID']) {
      const r = await h.client.handlePseCallback(
        signed({
          eventId: randomUUID(),
          depositId: d.id,
          providerTransferId: 'other',
          status,
          paidAt: new Date().toISOString(),
          occurredAt: new Date().toISOString(),
        }),
        h.ctx(),
      );
      expect(r).toEqual({ accepted: true, duplicate: true });
    }
    expect(await get(co, d.id)).toMatchObject({ status: 'ASSIGNED', providerTransferId: paid.providerTransferId });
    expect(await h.achAvailable(co)).toBe(98_810n);
    expect(await outbox(d.id)).toEqual(['deposit.created', 'deposit.paid']);
    // A pay attempt on a paid link is refused by the provider.
    expect((await h.sandboxPost(`/sandbox/pse/${d.id}/pay`, { outcome: 'APPROVED' })).status).toBe(409);
  });

  it('forged or stale signatures are refused and change nothing', async () => {
    const co = await h.newCompany();
    const d = await h.client.createPseDeposit(payer(), h.ctx(co));
    const body = {
      eventId: randomUUID(),
      depositId: d.id,
      providerTransferId: 'pse-x',
      status: 'PAID',
      paidAt: new Date().toISOString(),
      occurredAt: new Date().toISOString(),
    };
    expect((await failure(h.client.handlePseCallback(signed(body, 'not-the-secret-at-all'), h.ctx()))).code).toBe('INVALID_SIGNATURE');
    const raw = Buffer.from(JSON.stringify(body));
    const stale = signPayload(SECRET, raw, Math.floor(Date.now() / 1000) - 301);
    expect((await failure(h.client.handlePseCallback({ rawBody: raw, signature: stale }, h.ctx()))).code).toBe('INVALID_SIGNATURE');
    const good = signed(body);
    const tampered = Buffer.from(good.rawBody.toString().replace('PAID', 'FAIL'));
    expect((await failure(h.client.handlePseCallback({ rawBody: tampered, signature: good.signature }, h.ctx()))).code).toBe('INVALID_SIGNATURE');
    expect((await failure(h.client.handlePseCallback({ rawBody: raw, signature: '' }, h.ctx()))).code).toBe('INVALID_SIGNATURE');
    expect((await get(co, d.id)).status).toBe('PENDING_CONFIRM');
    expect(await h.achAvailable(co)).toBe(0n);
  });

  it('the same PAID outcome delivered concurrently (same and different event ids) credits exactly once', async () => {
    const co = await h.newCompany();
    const d = await h.client.createPseDeposit(payer(), h.ctx(co));
    const now = new Date().toISOString();
    const body = (eventId: string) => ({
      eventId,
      depositId: d.id,
      providerTransferId: 'pse_concurrent',
      status: 'PAID',
      payerBank: 'Nequi',
      paidAt: now,
      occurredAt: now,
    });
    const same = signed(body(randomUUID()));
    const results = await Promise.all([
      ...Array.from({ length: 6 }, () => h.client.handlePseCallback(same, h.ctx())),
      ...Array.from({ length: 4 }, () => h.client.handlePseCallback(signed(body(randomUUID())), h.ctx())),
    ]);
    expect(results.filter((r) => r.accepted && !r.duplicate)).toHaveLength(1);
    await waitStatus(co, d.id, 'ASSIGNED');
    expect(await h.achAvailable(co)).toBe(98_810n);
    expect((await h.ledgerClient.listMovements({ page: 0, limit: 10 }, h.ctx(co))).items).toHaveLength(1);
    expect(await outbox(d.id)).toEqual(['deposit.created', 'deposit.paid']);
  });

  it('failed → FAILED, nothing credited', async () => {
    const co = await h.newCompany();
    const d = await h.client.createPseDeposit(payer(), h.ctx(co));
    expect((await h.sandboxPost(`/sandbox/pse/${d.id}/pay`, { outcome: 'REJECTED', payerBank: 'Davivienda' })).body).toEqual({ status: 'FAILED' });
    const failed = await waitStatus(co, d.id, 'FAILED');
    expect(failed.providerTransferId).toBeUndefined();
    expect(await h.achAvailable(co)).toBe(0n);
    expect(await outbox(d.id)).toEqual(['deposit.created', 'deposit.failed']);
  });

  it('expired by the sweeper; a pay attempt after expiry is refused and never credited', async () => {
    const co = await h.newCompany();
    const d = await h.client.createPseDeposit(payer(), h.ctx(co));
    // Shorten this link's life (the provider's too) instead of waiting a day.
    const past = new Date(Date.now() - 1_000).toISOString();
    await h.deposit.db.query(`update pse_deposit.deposits set expires_at = ?::timestamptz where id = ?`, [past, d.id]);
    await h.deposit.db.query(`update sandbox.pse_links set expires_at = ?::timestamptz where deposit_id = ?`, [past, d.id]);
    const expired = await waitStatus(co, d.id, 'EXPIRED');
    expect(expired.providerTransferId).toBeUndefined();
    const attempt = await h.sandboxPost(`/sandbox/pse/${d.id}/pay`, { outcome: 'APPROVED' });
    expect(attempt.status).toBe(409);
    // Even a (signed) PAID outcome for it changes nothing.
    const r = await h.client.handlePseCallback(
      signed({
        eventId: randomUUID(),
        depositId: d.id,
        providerTransferId: 'late',
        status: 'PAID',
        paidAt: new Date().toISOString(),
        occurredAt: new Date().toISOString(),
      }),
      h.ctx(),
    );
    expect(r.duplicate).toBe(true);
    expect((await get(co, d.id)).status).toBe('EXPIRED');
    expect(await h.achAvailable(co)).toBe(0n);
    expect(await outbox(d.id)).toEqual(['deposit.created', 'deposit.expired']);
    // … but is kept for an operator (PSE_PAID_GRACE_SECONDS is 0 here: paid after expiresAt).
    expect(await h.deposit.db.query(`select kind from pse_deposit.money_exceptions where resource_id = ?`, [d.id])).toEqual([{ kind: 'PAID_AFTER_EXPIRY' }]);
  });

  it('a payment signed after expiry (provider clock) is not credited: a money exception, the link left to expire at expiresAt', async () => {
    const co = await h.newCompany();
    const d = await h.client.createPseDeposit(payer(), h.ctx(co));
    const late = new Date(d.expiresAt!.getTime() + 5_000).toISOString();
    const r = await h.client.handlePseCallback(
      signed({ eventId: randomUUID(), depositId: d.id, providerTransferId: 'p', status: 'PAID', paidAt: late, occurredAt: late }),
      h.ctx(),
    );
    expect(r).toEqual({ accepted: true, duplicate: true });
    // Our clock says the link is still valid (CONTRACT §10: EXPIRED from expiresAt): it stays pending, nothing credited.
    expect((await get(co, d.id)).status).toBe('PENDING_CONFIRM');
    expect(await h.achAvailable(co)).toBe(0n);
    const exc = await h.deposit.db.query<{ kind: string; status: string }>(`select kind, status from pse_deposit.money_exceptions where resource_id = ?`, [
      d.id,
    ]);
    expect(exc).toEqual([{ kind: 'PAID_AFTER_EXPIRY', status: 'OPEN' }]);
  });

  it('provider reversal → REVERSED and the credit debited back', async () => {
    const co = await h.newCompany();
    const d = await h.client.createPseDeposit(payer(), h.ctx(co));
    await h.sandboxPost(`/sandbox/pse/${d.id}/pay`, { outcome: 'APPROVED', payerBank: 'Nequi' });
    await waitStatus(co, d.id, 'ASSIGNED');
    expect(await h.achAvailable(co)).toBe(98_810n);
    const rev = await h.sandboxPost(`/sandbox/pse/${d.id}/reverse`);
    expect(rev.status).toBeLessThan(300);
    const reversed = await waitStatus(co, d.id, 'REVERSED');
    expect(reversed.netAmountCents).toBe(98_810n);
    expect(await h.achAvailable(co)).toBe(0n);
    const m = (await h.ledgerClient.listMovements({ page: 0, limit: 10 }, h.ctx(co))).items[0];
    expect(m).toMatchObject({ type: MovementType.TRANSFER_IN, status: MovementStatus.REVERSED });
    // The reversal again: nothing.
    const again = await h.client.handlePseCallback(
      signed({ eventId: randomUUID(), depositId: d.id, status: 'REVERSED', occurredAt: new Date().toISOString() }),
      h.ctx(),
    );
    expect(again.duplicate).toBe(true);
    expect(await h.achAvailable(co)).toBe(0n);
    expect(await outbox(d.id)).toEqual(['deposit.created', 'deposit.paid', 'deposit.reversed']);
  });

  it('a reversal that arrives before its payment is refused for now, then applied after it (callbacks out of order)', async () => {
    const co = await h.newCompany();
    const d = await h.client.createPseDeposit(payer(), h.ctx(co));
    const now = new Date().toISOString();
    const reversal = signed({ eventId: randomUUID(), depositId: d.id, providerTransferId: 'pse_x', status: 'REVERSED', paidAt: now, occurredAt: now });
    expect((await failure(h.client.handlePseCallback(reversal, h.ctx()))).code).toBe('SERVICE_UNAVAILABLE');
    expect((await get(co, d.id)).status).toBe('PENDING_CONFIRM');
    await h.client.handlePseCallback(
      signed({ eventId: randomUUID(), depositId: d.id, providerTransferId: 'pse_x', status: 'PAID', payerBank: 'Nequi', paidAt: now, occurredAt: now }),
      h.ctx(),
    );
    await waitStatus(co, d.id, 'ASSIGNED');
    expect(await h.achAvailable(co)).toBe(98_810n);
    // The provider's retry of the same reversal event now applies it.
    const again = await h.client.handlePseCallback(reversal, h.ctx());
    expect(again.duplicate).toBe(false);
    await waitStatus(co, d.id, 'REVERSED');
    expect(await h.achAvailable(co)).toBe(0n);
    expect(await outbox(d.id)).toEqual(['deposit.created', 'deposit.paid', 'deposit.reversed']);
  });

  it('a credit interrupted after the PAID outcome was recorded is finished by the sweeper, once', async () => {
    const co = await h.newCompany();
    const d = await h.client.createPseDeposit(payer({ amountCents: 50_000n }), h.ctx(co));
    // As if the process died right after recording the outcome, before (or after) the ledger call.
    // (The PAID won the move into CREDITING, the state that owes the credit.)
    await h.deposit.db.query(
      `update pse_deposit.deposits set status = 'CREDITING', pending_step = 'CREDIT', step_at = now() - interval '1 hour',
      provider_transfer_id = 'pse-crash', provider_confirmed_at = now(), payer_bank = 'BBVA' where id = ?`,
      [d.id],
    );
    const done = await waitStatus(co, d.id, 'ASSIGNED');
    expect(done).toMatchObject({ providerTransferId: 'pse-crash', netAmountCents: 48_810n });
    expect(await h.achAvailable(co)).toBe(48_810n);
    expect(await outbox(d.id)).toEqual(['deposit.created', 'deposit.paid']);
  });
});
