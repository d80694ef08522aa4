import { instantToDate } from '@wallet/platform';
import { createHmac, randomUUID } from 'node:crypto';
import { ledgerV1, transferEventsV1, transferV1 } from '@wallet/proto';
import {
  MovementStatus,
  Rail,
  achSend,
  brebSend,
  ctxOf,
  expectEvents,
  expectLedgerOk,
  failure,
  newCompany,
  send,
  setFaults,
  startHarness,
  stateOf,
  testProtection,
  transferRow,
  waitForState,
  wallet,
  type Harness,
} from './harness.js';
import { SqlTransferStore } from '../../src/persistence/transfer.store.js';

const SECRET = 'dev-rail-callback-secret';

describe('send lifecycle: reserve → dispatch → commit / release', () => {
  let h: Harness;
  // Confirmations slow enough to see the PENDING step, fast enough for the suite.
  beforeAll(async () => {
    h = await startHarness({ sandboxEnv: { SANDBOX_BREB_CONFIRM_MS: '700', SANDBOX_ACH_CONFIRM_MS: '700' } });
  });
  afterAll(async () => {
    await h?.stop();
  });
  afterEach(async () => {
    await expectLedgerOk(h);
  });

  const movement = (companyId: string, id: string) => h.ledgerClient.getMovement({ id }, ctxOf(companyId));

  it('a BREB send: 201 PENDING with funds held, then COMPLETED with the hold committed', async () => {
    const co = await newCompany(h, { breb: 1_000_000n, iva: true, brebFee: [100n, 10] });
    const req = await brebSend(h, co, '3001112233', 250_000n, { reference: 'breb-ok-1', description: 'Factura 1' });
    const res = await send(h, co, req, 'key-1');
    // fee 100 + 10 bps of 250,000 = 250 → 350; IVA 67 (66.5 rounded half up)
    expect(res.replayed).toBe(false);
    expect(res.transfer).toMatchObject({
      status: MovementStatus.PENDING,
      amount: 250_000n,
      totalFee: 350n,
      ivaAmount: 67n,
      netAmount: 249_650n,
      rail: Rail.BREB,
      targetName: req.targetName,
      targetDocument: req.targetDocument,
      reference: 'breb-ok-1',
    });
    expect(res.transfer!.createdAt).toBeInstanceOf(Date);
    expect(res.transfer!.completedAt).toBeUndefined();
    const id = res.transfer!.id;
    expect(await wallet(h, co.id, Rail.BREB)).toEqual({ available: 1_000_000n - 250_417n, pending: 250_417n });
    const row = await transferRow(h, id);
    expect(row).toMatchObject({ state: 'DISPATCHED', company_id: co.id, api_key_id: 'key-1' });
    expect(row!.provider_transfer_id).toEqual(expect.any(String));
    expect(await movement(co.id, id)).toMatchObject({
      status: MovementStatus.PENDING,
      type: ledgerV1.MovementType.TRANSFER_OUT,
      reference: 'breb-ok-1',
      apiKeyId: 'key-1',
      details: { targetName: req.targetName, targetDocument: req.targetDocument, description: 'Factura 1' },
    });

    await waitForState(h, id, ['COMPLETED']);
    expect(await wallet(h, co.id, Rail.BREB)).toEqual({ available: 1_000_000n - 250_417n, pending: 0n });
    const m = await movement(co.id, id);
    expect(m.status).toBe(MovementStatus.COMPLETED);
    expect(m.completedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/); // the journal's instant, exactly
    // The transfer keeps milliseconds: the ledger's instant, its microseconds truncated.
    expect(new Date(String((await transferRow(h, id))!.completed_at))).toEqual(instantToDate(m.completedAt!));
    // A replay now shows the current state.
    const again = await send(h, co, req);
    expect(again).toMatchObject({ replayed: true, transfer: { id, status: MovementStatus.COMPLETED } });
    expect(again.transfer!.completedAt).toEqual(instantToDate(m.completedAt!));
    await expectEvents(h, id, ['transfer.created', 'transfer.dispatched', 'transfer.completed']);
  });

  it('a BREB send the rail fails (amount ending in 13): FAILED with the rail message, the whole hold released', async () => {
    const co = await newCompany(h, { breb: 100_000n, iva: true, brebFee: [100n, 0] });
    const res = await send(h, co, await brebSend(h, co, '3002223344', 10_013n));
    const id = res.transfer!.id;
    expect(res.transfer!.status).toBe(MovementStatus.PENDING);
    expect(await wallet(h, co.id, Rail.BREB)).toEqual({ available: 100_000n - 10_132n, pending: 10_132n });
    await waitForState(h, id, ['FAILED']);
    expect(await wallet(h, co.id, Rail.BREB)).toEqual({ available: 100_000n, pending: 0n });
    const m = await movement(co.id, id);
    expect(m.status).toBe(MovementStatus.FAILED);
    expect(m.details!.errorMessage).toBe('Transferencia rechazada por la entidad receptora');
    expect((await transferRow(h, id))!.error_message).toBe('Transferencia rechazada por la entidad receptora');
    await expectEvents(h, id, ['transfer.created', 'transfer.dispatched', 'transfer.failed']);
  });

  it('an ACH send: COMPLETED; the movement carries the bank, account type and the account masked', async () => {
    const co = await newCompany(h, { ach: 500_000n, iva: true, achFee: [300n, 0] });
    const res = await send(h, co, achSend(co, 100_000n, { description: "Pago proveedor ¿ok? $1 'x' ?? \\" }));
    expect(res.transfer).toMatchObject({
      status: MovementStatus.PENDING,
      rail: Rail.ACH,
      totalFee: 300n,
      ivaAmount: 57n,
      netAmount: 99_700n,
      targetName: 'Ana María Pérez Gómez',
      targetDocument: '1020304050',
    });
    const id = res.transfer!.id;
    expect(await wallet(h, co.id, Rail.ACH)).toEqual({ available: 500_000n - 100_357n, pending: 100_357n });
    expect((await movement(co.id, id)).details).toMatchObject({
      bankName: 'Bancolombia',
      bankAccountType: 'Ahorros',
      bankAccountNumber: '****8901',
      description: "Pago proveedor ¿ok? $1 'x' ?? \\",
    });
    expect((await transferRow(h, id))!.description).toBe("Pago proveedor ¿ok? $1 'x' ?? \\");
    await waitForState(h, id, ['COMPLETED']);
    expect(await wallet(h, co.id, Rail.ACH)).toEqual({ available: 500_000n - 100_357n, pending: 0n });
    await expectEvents(h, id, ['transfer.created', 'transfer.dispatched', 'transfer.completed']);
    const evts = (await import('./harness.js')).streamEvents;
    const completed = (await evts(h)).find((e) => e.event.transferId === id && e.subject === 'transfer.completed')!.event;
    expect(completed).toMatchObject({
      companyId: co.id,
      rail: Rail.ACH,
      status: MovementStatus.COMPLETED,
      amount: 100_000n,
      totalFee: 300n,
      ivaAmount: 57n,
      netAmount: 99_700n,
      bankName: 'Bancolombia',
      bankAccountType: 'Ahorros',
      bankAccountNumberMasked: '****8901',
    });
    expect(JSON.stringify(transferEventsV1.TransferEvent.toJSON(completed))).not.toContain('12345678901');
  });

  it('an ACH send the rail fails: FAILED and released', async () => {
    const co = await newCompany(h, { ach: 200_000n });
    const res = await send(h, co, achSend(co, 100_013n));
    expect(await wallet(h, co.id, Rail.ACH)).toEqual({ available: 99_987n, pending: 100_013n });
    await waitForState(h, res.transfer!.id, ['FAILED']);
    expect(await wallet(h, co.id, Rail.ACH)).toEqual({ available: 200_000n, pending: 0n });
    expect((await movement(co.id, res.transfer!.id)).details!.errorMessage).toEqual(expect.any(String));
  });

  it('a send by targetAnchorHandle uses the remembered key and re-checks the directory', async () => {
    const co = await newCompany(h, { breb: 100_000n });
    const r = await h.client.resolveKey({ keyValue: '@proveedor77', keyType: 'AUTO' }, ctxOf(co.id));
    const res = await send(
      h,
      co,
      transferV1.SendRequest.fromPartial({
        amount: 5_000n,
        targetAnchorHandle: r.anchorHandle,
        targetName: r.recipient!.fullName,
        targetDocument: r.recipient!.idValue,
        requestHash: randomUUID(),
      }),
    );
    expect(res.transfer!.status).toBe(MovementStatus.PENDING);
    expect((await transferRow(h, res.transfer!.id))!.destination).toMatchObject({ kind: 'BREB', anchorHandle: r.anchorHandle, keyValue: '@proveedor77' });
    const other = await newCompany(h, { breb: 100_000n });
    const e = await failure(
      send(
        h,
        other,
        transferV1.SendRequest.fromPartial({
          amount: 5_000n,
          targetAnchorHandle: r.anchorHandle,
          targetName: r.recipient!.fullName,
          targetDocument: r.recipient!.idValue,
          requestHash: randomUUID(),
        }),
      ),
    );
    expect(e.code).toBe('INVALID_KEY'); // another company's resolution does not count
    await waitForState(h, res.transfer!.id, ['COMPLETED']);
  });

  it('duplicate callbacks and forged or stale ones change nothing', async () => {
    const co = await newCompany(h, { breb: 100_000n });
    const res = await send(h, co, await brebSend(h, co, '3003334455', 20_000n));
    const id = res.transfer!.id;
    // Forged: right body, wrong signature / stale timestamp / no signature.
    const body = Buffer.from(
      JSON.stringify({
        eventId: `forged-${id}`,
        transactionId: id,
        providerTransferId: 'p',
        rail: 'BREB',
        status: 'FAILED',
        errorMessage: 'x',
        occurredAt: new Date().toISOString(),
      }),
    );
    const now = Math.floor(Date.now() / 1000);
    const mac = (t: number, b = body, secret = SECRET) => createHmac('sha256', secret).update(`${t}.`).update(b).digest('hex');
    const cb = (signature: string, raw = body) => h.client.handleRailCallback({ rail: Rail.BREB, rawBody: raw, signature }, ctxOf());
    for (const sig of [
      `t=${now},v1=${'0'.repeat(64)}`,
      `t=${now - 301},v1=${mac(now - 301)}`,
      `t=${now},v1=${mac(now, body, 'other-secret')}`,
      '',
      'garbage',
    ]) {
      expect((await failure(cb(sig))).code).toBe('INVALID_SIGNATURE');
    }
    // Body altered after signing.
    const altered = Buffer.from(body.toString().replace('FAILED', 'COMPLETED'));
    expect((await failure(cb(`t=${now},v1=${mac(now)}`, altered))).code).toBe('INVALID_SIGNATURE');
    expect(['DISPATCHED', 'COMPLETED']).toContain(await stateOf(h, id)); // the forged FAILED did not apply

    await waitForState(h, id, ['COMPLETED']);
    const before = await wallet(h, co.id, Rail.BREB);
    // The sandbox delivers the same callback again (same eventId).
    const re = await fetch(`${h.sandbox.url}/sandbox/callbacks/${id}/redeliver`, { method: 'POST' });
    expect(re.status).toBe(200);
    expect(await re.json()).toMatchObject({ delivered: true, responseStatus: 200 });
    // A validly signed second outcome with a new event id: a duplicate by state.
    const second = Buffer.from(
      JSON.stringify({
        eventId: `late-${id}`,
        transactionId: id,
        providerTransferId: 'p',
        rail: 'BREB',
        status: 'FAILED',
        errorMessage: 'tarde',
        occurredAt: new Date().toISOString(),
      }),
    );
    expect(await cb(`t=${now},v1=${mac(now, second)}`, second)).toEqual({ accepted: true, duplicate: true });
    expect(await cb(`t=${now},v1=${mac(now, second)}`, second)).toEqual({ accepted: true, duplicate: true });
    // A signed callback for an unknown transaction is acknowledged and ignored; a rail mismatch is refused.
    const unknown = Buffer.from(JSON.stringify({ eventId: `u-${id}`, transactionId: randomUUID(), rail: 'BREB', status: 'COMPLETED' }));
    expect(await cb(`t=${now},v1=${mac(now, unknown)}`, unknown)).toEqual({ accepted: false, duplicate: false });
    const wrongRail = Buffer.from(JSON.stringify({ eventId: `w-${id}`, transactionId: id, rail: 'ACH', status: 'COMPLETED' }));
    expect(
      (await failure(h.client.handleRailCallback({ rail: Rail.ACH, rawBody: wrongRail, signature: `t=${now},v1=${mac(now, wrongRail)}` }, ctxOf()))).code,
    ).toBe('INVALID_REQUEST');
    const notJson = Buffer.from('not json');
    expect((await failure(cb(`t=${now},v1=${mac(now, notJson)}`, notJson))).code).toBe('INVALID_REQUEST');

    expect(await wallet(h, co.id, Rail.BREB)).toEqual(before);
    expect(await transferRow(h, id)).toMatchObject({ state: 'COMPLETED', error_message: null });
    await expectEvents(h, id, ['transfer.created', 'transfer.dispatched', 'transfer.completed']);
  });

  it('a COMPLETED callback is applied without a read only for a DISPATCHED transfer of its rail whose callback was never handled; anything else takes the general path', async () => {
    await setFaults(h, { callbacks: 'down' });
    try {
      const co = await newCompany(h, { breb: 100_000n });
      const id = (await send(h, co, await brebSend(h, co, '3003334466', 20_000n))).transfer!.id;
      expect(await stateOf(h, id)).toBe('DISPATCHED');
      const now = Math.floor(Date.now() / 1000);
      const signed = (b: Record<string, unknown>, rail = Rail.BREB) => {
        const raw = Buffer.from(JSON.stringify(b));
        return h.client.handleRailCallback(
          { rail, rawBody: raw, signature: `t=${now},v1=${createHmac('sha256', SECRET).update(`${now}.`).update(raw).digest('hex')}` },
          ctxOf(),
        );
      };
      const completed = (eventId: string, rail = 'BREB') => ({ eventId, transactionId: id, providerTransferId: 'p', rail, status: 'COMPLETED' });
      // Another rail: refused by the general path's check, nothing applied.
      expect((await failure(signed(completed(`r-${id}`, 'ACH'), Rail.ACH))).code).toBe('INVALID_REQUEST');
      expect(await stateOf(h, id)).toBe('DISPATCHED');
      // A callback handled before (recorded without applying): still a duplicate, never applied later.
      const store = new SqlTransferStore(h.ledger.db, testProtection);
      await store.recordCallback(`seen-${id}`, id, 'BREB', 'COMPLETED');
      expect(await signed(completed(`seen-${id}`))).toEqual({ accepted: true, duplicate: true });
      expect(await stateOf(h, id)).toBe('DISPATCHED');
      // A new one: applied (COMPLETING, commit, COMPLETED) and recorded; its repeat is a duplicate.
      expect(await signed(completed(`new-${id}`))).toEqual({ accepted: true, duplicate: false });
      expect(await transferRow(h, id)).toMatchObject({ state: 'COMPLETED', provider_transfer_id: 'p' });
      expect(await signed(completed(`new-${id}`))).toEqual({ accepted: true, duplicate: true });
      const history = await h.ledger.db.query<{ state: string }>('select state from transfer.state_history where transfer_id = ? order by seq', [id]);
      expect(history.map((r) => r.state)).toEqual(['RECEIVED', 'RESERVED', 'DISPATCHED', 'COMPLETING', 'COMPLETED']);
      expect(await h.ledger.db.query('select event_id from transfer.rail_callbacks where transfer_id = ? order by event_id', [id])).toEqual([
        { event_id: `new-${id}` },
        { event_id: `seen-${id}` },
      ]);
      expect((await movement(co.id, id)).status).toBe(MovementStatus.COMPLETED);
    } finally {
      await setFaults(h, { callbacks: 'up' });
    }
  });

  it('a late callback: the sweeper asks the rail after RAIL_CONFIRM_TIMEOUT, then the held callback is a duplicate', async () => {
    const co = await newCompany(h, { breb: 100_000n });
    const h2 = await h.startTransferInstance({ RAIL_CONFIRM_TIMEOUT_SECONDS: '1' });
    expect(h2).toBeDefined();
    await setFaults(h, { callbacks: 'down' });
    try {
      const res = await send(h, co, await brebSend(h, co, '3004445566', 30_000n));
      const id = res.transfer!.id;
      await waitForState(h, id, ['COMPLETED'], 8_000);
      expect(await wallet(h, co.id, Rail.BREB)).toEqual({ available: 70_000n, pending: 0n });
      const received = h.receiver.received.length;
      await setFaults(h, { callbacks: 'up' });
      const deadline = Date.now() + 5_000;
      while (h.receiver.received.length === received && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(h.receiver.received.slice(received).map((r) => r.status)).toContain(200);
      expect(await wallet(h, co.id, Rail.BREB)).toEqual({ available: 70_000n, pending: 0n });
      await expectEvents(h, id, ['transfer.created', 'transfer.dispatched', 'transfer.completed']);
    } finally {
      await setFaults(h, { callbacks: 'up' });
    }
  });
});
