import { randomUUID } from 'node:crypto';
import { metricsRegistry } from '@wallet/platform';
import { eventually } from '@wallet/platform/testing';
import { transferV1 } from '@wallet/proto';
import {
  FeeOperation,
  Rail,
  achSend,
  brebSend,
  ctxOf,
  expectLedgerOk,
  failure,
  newCompany,
  startHarness,
  wallet,
  type CompanySetup,
  type Harness,
} from './harness.js';

/**
 * Bulk payouts through the real gRPC layer, the ledger's ReserveBatch and the sandbox rails:
 * validation (no money moved), execution (one reserve, items as ordinary transfers), completion,
 * the refusals (balance, state), cancel, idempotency, and the invariant that a live item holds its
 * funds and a final one holds nothing.
 */
describe('bulk payouts (transfer service)', () => {
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

  const item = (seq: number, send: transferV1.SendRequest, extra: Partial<transferV1.BatchItemInput> = {}): transferV1.BatchItemInput =>
    transferV1.BatchItemInput.fromPartial({ seq, line: 0, send: { ...send, requestHash: '' }, ...extra });
  const create = (co: CompanySetup, items: transferV1.BatchItemInput[], extra: Partial<transferV1.CreateBatchRequest> = {}) =>
    h.client.createBatch(transferV1.CreateBatchRequest.fromPartial({ mode: 'ALL', source: 'JSON', requestHash: randomUUID(), items, ...extra }), ctxOf(co.id));
  /** The transfer service's provider calls so far (wallet_rail_requests_total, every outcome), of one rail and operation. */
  const railCalls = async (rail: string, operation: string) => {
    const m = await metricsRegistry.getSingleMetric('wallet_rail_requests_total')!.get();
    return m.values.filter((v) => v.labels.rail === rail && v.labels.operation === operation).reduce((n, v) => n + v.value, 0);
  };
  const get = (co: CompanySetup, id: string) => h.client.getBatch({ batchId: id }, ctxOf(co.id));
  const waitFinal = async (co: CompanySetup, id: string, timeoutMs = 20_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const b = await get(co, id);
      if (['COMPLETED', 'PARTIALLY_FAILED', 'FAILED'].includes(b.state)) return b;
      if (Date.now() > deadline) throw new Error(`batch ${id} is still ${b.state}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const items = async (co: CompanySetup, id: string) => (await h.client.listBatchItems({ batchId: id, limit: 1000 }, ctxOf(co.id))).items;
  /** Cross-service: a live item's transfer has an open hold; a final one holds nothing. */
  const holdsMatch = async (batchId: string) => {
    const rows = await h.ledger.db.query<{ state: string; hold_status: string | null }>(
      `select t.state, h.status as hold_status from transfer.transfers t left join ledger.holds h on h.id = t.hold_id
        where t.batch_id = ?::uuid`,
      [batchId],
    );
    for (const r of rows) {
      if (['RESERVED', 'DISPATCHED', 'EXECUTING', 'COMPLETING', 'RELEASING'].includes(r.state)) expect(r.hold_status).toBe('OPEN');
      if (r.state === 'COMPLETED') expect(r.hold_status).toBe('COMMITTED');
      if (r.state === 'FAILED') expect(r.hold_status).toBe('RELEASED');
      if (r.state === 'REJECTED') expect(r.hold_status).toBeNull();
    }
  };

  it('validates first (nothing moves), then executes with one reserve: every item an ordinary transfer carrying batchId', async () => {
    const co = await newCompany(h, { breb: 10_000_000n, ach: 10_000_000n, brebFee: [100n, 0], achFee: [200n, 0] });
    const before = await wallet(h, co.id, Rail.BREB);
    const reqs = [
      item(1, await brebSend(h, co, '3001112233', 100_000n, { reference: 'nomina-1' })),
      item(2, await brebSend(h, co, '3002223344', 200_000n, { reference: 'nomina-2' })),
      item(3, achSend(co, 300_000n, { reference: 'nomina-3' })),
      item(4, achSend(co, 50n, { reference: 'nomina-4' })), // below the minimum: invalid
    ];
    const r = await create(co, reqs, { mode: 'VALID_ONLY', reference: 'NOMINA-2026-11' });
    expect(r.batch).toMatchObject({ state: 'VALIDATED', itemCount: 4, validCount: 3, invalidCount: 1, mode: 'VALID_ONLY', reference: 'NOMINA-2026-11' });
    expect(r.results.map((x) => x.valid)).toEqual([true, true, true, false]);
    expect(r.results[3]).toMatchObject({ seq: 4, errorCode: 'INVALID_REQUEST' });
    const breb = r.batch!.totals.find((t) => t.rail === Rail.BREB)!;
    expect(breb).toMatchObject({ count: 2, amount: 300_000n, totalFee: 200n, total: 300_200n });
    expect(await wallet(h, co.id, Rail.BREB)).toEqual(before); // validation moves nothing
    expect((await items(co, r.batch!.id)).map((i) => i.status)).toEqual(['VALID', 'VALID', 'VALID', 'INVALID']);
  });

  it('a batch with the same reference and the same request replays; another request is REFERENCE_CONFLICT', async () => {
    const co = await newCompany(h, { breb: 1_000_000n });
    const reqs = [item(1, await brebSend(h, co, '3001112233', 10_000n))];
    const first = await create(co, reqs, { reference: 'lote-ref', requestHash: 'h1' });
    const replay = await create(co, reqs, { reference: 'lote-ref', requestHash: 'h1' });
    expect(replay).toMatchObject({ replayed: true, batch: { id: first.batch!.id } });
    expect((await failure(create(co, reqs, { reference: 'lote-ref', requestHash: 'h2' }))).code).toBe('REFERENCE_CONFLICT');
    const keyed = await create(co, reqs, { idempotencyKey: 'k-1', requestHash: 'h3' });
    expect(await create(co, reqs, { idempotencyKey: 'k-1', requestHash: 'h3' })).toMatchObject({
      idempotencyKeyReplayed: true,
      batch: { id: keyed.batch!.id },
    });
    expect((await failure(create(co, reqs, { idempotencyKey: 'k-1', requestHash: 'h4' }))).code).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  it('executes: one reserve of the whole total, items dispatched and completed, the batch COMPLETED', async () => {
    const co = await newCompany(h, { breb: 5_000_000n, ach: 5_000_000n, brebFee: [100n, 0], achFee: [200n, 0] });
    const reqs = [
      item(1, await brebSend(h, co, '3001112233', 100_000n, { reference: 'p-1' })),
      item(2, await brebSend(h, co, '3002223344', 200_000n, { reference: 'p-2' })),
      item(3, achSend(co, 300_000n, { reference: 'p-3' })),
    ];
    const r = await create(co, reqs);
    const id = r.batch!.id;
    const executing = await h.client.executeBatch({ batchId: id }, ctxOf(co.id));
    expect(executing.state).toBe('EXECUTING');
    // reserved at once: amounts + fees on each wallet
    const breb = await wallet(h, co.id, Rail.BREB);
    expect(breb.available + breb.pending).toBe(5_000_000n);
    expect(breb.available).toBeLessThanOrEqual(5_000_000n - 300_200n);
    await holdsMatch(id);
    const done = await waitFinal(co, id);
    expect(done.state).toBe('COMPLETED');
    expect(done.finishedCount).toBe(3);
    expect(done.byStatus).toEqual([{ status: 'COMPLETED', count: 3, amount: 600_000n }]);
    expect(await wallet(h, co.id, Rail.BREB)).toEqual({ available: 5_000_000n - 300_200n, pending: 0n });
    expect(await wallet(h, co.id, Rail.ACH)).toEqual({ available: 5_000_000n - 300_200n, pending: 0n });
    const listed = await items(co, id);
    expect(listed.map((i) => [i.seq, i.status, i.reference])).toEqual([
      [1, 'COMPLETED', 'p-1'],
      [2, 'COMPLETED', 'p-2'],
      [3, 'COMPLETED', 'p-3'],
    ]);
    for (const i of listed) {
      const row = (
        await h.ledger.db.query<{ batch_id: string }>('select batch_id::text as batch_id from transfer.transfers where id = ?::uuid', [i.transferId])
      )[0];
      expect(row?.batch_id).toBe(id);
      const m = await h.ledgerClient.getMovement({ id: i.transferId! }, ctxOf(co.id));
      expect(m.details?.batchId).toBe(id);
    }
    await holdsMatch(id);
    // executing again answers the batch as it is
    expect((await h.client.executeBatch({ batchId: id }, ctxOf(co.id))).state).toBe('COMPLETED');
  });

  /*
   * Issue 44: GET /transfers/batches grouped every item of every batch on the page with its transfer (184 ms for 20
   * batches of 5,000). A finished batch's items never change again, so its move into the final state keeps the
   * summary and the reads take it from there. Shown by tampering with an item behind the service's back: the kept
   * summary does not see it; a batch finished before the column (summary cleared) is grouped once and kept.
   */
  it('a finished batch keeps its summary: GetBatch and ListBatches read it kept; one without it is summarised once and kept', async () => {
    const co = await newCompany(h, { breb: 5_000_000n, ach: 5_000_000n, brebFee: [100n, 0], achFee: [200n, 0] });
    const r = await create(co, [
      item(1, await brebSend(h, co, '3001112233', 100_000n, { reference: 'k-1' })),
      item(2, achSend(co, 300_000n, { reference: 'k-2' })),
    ]);
    const id = r.batch!.id;
    // while it runs nothing is kept
    await h.client.executeBatch({ batchId: id }, ctxOf(co.id));
    const kept = async () =>
      (await h.ledger.db.query<{ s: unknown }>('select final_summary as s from transfer.batches where id = ?::uuid', [id]))[0]!.s as {
        byStatus: unknown[];
      } | null;
    const done = await waitFinal(co, id);
    expect(done.state).toBe('COMPLETED');
    const expected = {
      totals: [
        { rail: 'ACH', count: 1, amount: '300000', fee: '200', iva: '0', total: '300200' },
        { rail: 'BREB', count: 1, amount: '100000', fee: '100', iva: '0', total: '100100' },
      ],
      byStatus: [{ status: 'COMPLETED', count: 2, amount: '400000' }],
    };
    expect(await kept()).toEqual(expected);
    // an item changed behind the service's back: the reads answer the kept summary, not a regrouping
    await h.ledger.db.query('update transfer.batch_items set amount = amount + 1 where batch_id = ?::uuid and seq = 1', [id]);
    const summaryOf = (b: transferV1.Batch) => ({ byStatus: b.byStatus, totals: b.totals.map((t) => [t.rail, t.count, t.amount, t.total]) });
    const want = {
      byStatus: [{ status: 'COMPLETED', count: 2, amount: 400_000n }],
      totals: [
        ['RAIL_ACH', 1, 300_000n, 300_200n],
        ['RAIL_BREB', 1, 100_000n, 100_100n],
      ],
    };
    expect(summaryOf(await get(co, id))).toEqual(want);
    const listed = (await h.client.listBatches({ limit: 10 }, ctxOf(co.id))).items.find((b) => b.id === id)!;
    expect(summaryOf(listed)).toEqual(want);
    expect(listed.finishedCount).toBe(2);
    // finished before the column: grouped on read (the tampered amount shows), kept once, then read kept
    await h.ledger.db.query('update transfer.batches set final_summary = null where id = ?::uuid', [id]);
    const regrouped = { ...want, byStatus: [{ status: 'COMPLETED', count: 2, amount: 400_001n }] };
    expect(summaryOf((await h.client.listBatches({ limit: 10 }, ctxOf(co.id))).items.find((b) => b.id === id)!)).toMatchObject({
      byStatus: regrouped.byStatus,
    });
    expect((await kept())?.byStatus).toEqual([{ status: 'COMPLETED', count: 2, amount: '400001' }]);
    await h.ledger.db.query('update transfer.batch_items set amount = amount - 1 where batch_id = ?::uuid and seq = 1', [id]);
    expect((await get(co, id)).byStatus).toEqual(regrouped.byStatus);
  });

  it('a batch larger than a page is dispatched by pages in flight (BATCH_DISPATCH_PAGES): one bulk submission per page, every line once', async () => {
    // An instance without the sweepers' safety net (the harness's transfer sweeper looks every 100 ms and takes
    // any due RESERVED line, up to 50, on its own), so every line here is dispatched by the batch's own pages.
    await h.stopTransferInstances();
    await h.startTransferInstance({ SWEEPER_INTERVAL_MS: '3600000', BATCH_DISPATCH_PAGES: '2' });
    let restored = false;
    try {
      const co = await newCompany(h, { breb: 20_000_000n });
      const send = await brebSend(h, co, '3004445566', 1_000n);
      const n = 450;
      const r = await create(
        co,
        Array.from({ length: n }, (_, i) => item(i + 1, { ...send, amount: 1_000n + BigInt(i) * 100n, reference: `pg-${i}` })),
      );
      const id = r.batch!.id;
      const [bulk0, single0] = [await railCalls('BREB', 'dispatch_bulk'), await railCalls('BREB', 'dispatch')];
      expect((await h.client.executeBatch({ batchId: id }, ctxOf(co.id))).state).toBe('EXECUTING');
      const states = () =>
        h.ledger.db.query<{ state: string; attempts: number; n: number }>(
          'select state, dispatch_attempts as attempts, count(*)::int as n from transfer.transfers where batch_id = ?::uuid group by 1, 2',
          [id],
        );
      // Every line completed (the batch's own close waits for the batch sweeper, off here), each dispatched once.
      expect(await eventually(async () => ((await states()).some((x) => x.state !== 'COMPLETED') ? undefined : states()), 60_000, 200)).toEqual([
        { state: 'COMPLETED', attempts: 1, n },
      ]);
      // Three pages (200, 200, 50), each one bulk submission; no line sent on its own.
      expect([(await railCalls('BREB', 'dispatch_bulk')) - bulk0, (await railCalls('BREB', 'dispatch')) - single0]).toEqual([3, 0]);
      await holdsMatch(id);
      expect(await wallet(h, co.id, Rail.BREB)).toEqual({ available: 20_000_000n - BigInt(n) * 1_000n - 100n * BigInt((n * (n - 1)) / 2), pending: 0n });
      await h.stopTransferInstances();
      await h.startTransferInstance();
      restored = true;
      // The batch's next look was an hour away (that instance's poll): as if the hour passed, the new one closes it.
      await h.ledger.db.query('update transfer.batches set next_attempt_at = now() where id = ?::uuid', [id]);
      expect((await waitFinal(co, id)).state).toBe('COMPLETED');
    } finally {
      if (!restored) {
        await h.stopTransferInstances();
        await h.startTransferInstance();
      }
    }
  }, 120_000);

  it('a batch beyond the balance: INSUFFICIENT_BALANCE with the shortfall, nothing held, the batch VALIDATED again', async () => {
    const co = await newCompany(h, { breb: 150_000n, brebFee: [0n, 0] });
    const r = await create(co, [item(1, await brebSend(h, co, '3001112233', 100_000n)), item(2, await brebSend(h, co, '3002223344', 100_000n))]);
    const err = await failure(h.client.executeBatch({ batchId: r.batch!.id }, ctxOf(co.id)));
    expect(err.code).toBe('INSUFFICIENT_BALANCE');
    expect(err.details).toMatchObject({ wallets: [{ rail: 'BREB', requiredCents: '200000', availableCents: '150000', shortfallCents: '50000' }] });
    expect(await wallet(h, co.id, Rail.BREB)).toEqual({ available: 150_000n, pending: 0n });
    const b = await get(co, r.batch!.id);
    expect(b.state).toBe('VALIDATED');
    expect(b.errorMessage).toBeTruthy();
    expect((await items(co, r.batch!.id)).map((i) => i.status)).toEqual(['VALID', 'VALID']);
    // topped up, it executes
    await h.ledgerClient.credit({ idempotencyKey: `top-${co.id}`, rail: Rail.BREB, amountCents: 100_000n }, ctxOf(co.id));
    await h.client.executeBatch({ batchId: r.batch!.id }, ctxOf(co.id));
    expect((await waitFinal(co, r.batch!.id)).state).toBe('COMPLETED');
  });

  it('mode ALL: an invalid item rejects the batch; a rejected batch cannot execute; a validated one can be cancelled', async () => {
    const co = await newCompany(h, { breb: 1_000_000n });
    const bad = await create(co, [
      item(1, await brebSend(h, co, '3001112233', 10_000n)),
      item(2, await brebSend(h, co, '3002223344', 10_000n, { targetName: 'Otra Persona Distinta' })),
    ]);
    expect(bad.batch!.state).toBe('REJECTED');
    expect(bad.results[1]).toMatchObject({ valid: false, errorCode: 'NAME_MISMATCH' });
    expect((await failure(h.client.executeBatch({ batchId: bad.batch!.id }, ctxOf(co.id)))).code).toBe('INVALID_STATE_TRANSITION');
    const ok = await create(co, [item(1, await brebSend(h, co, '3001112233', 10_000n))]);
    expect((await h.client.cancelBatch({ batchId: ok.batch!.id }, ctxOf(co.id))).state).toBe('CANCELLED');
    expect((await items(co, ok.batch!.id)).map((i) => i.status)).toEqual(['NOT_EXECUTED']);
    expect((await failure(h.client.executeBatch({ batchId: ok.batch!.id }, ctxOf(co.id)))).code).toBe('INVALID_STATE_TRANSITION');
  });

  it('duplicate references inside a batch are refused whole, nothing stored', async () => {
    const co = await newCompany(h, { breb: 1_000_000n });
    const s = await brebSend(h, co, '3001112233', 10_000n, { reference: 'dup' });
    const err = await failure(create(co, [item(1, s), item(2, s)]));
    expect(err.code).toBe('VALIDATION_ERROR');
    const n = await h.ledger.db.query<{ n: number }>('select count(*)::integer as n from transfer.batches where company_id = ?', [co.id]);
    expect(n[0]!.n).toBe(0);
  });

  it("counterparty limits are aggregated across the batch's own items", async () => {
    const co = await newCompany(h, { breb: 10_000_000n, daily: 250_000n });
    const r = await create(
      co,
      [
        item(1, await brebSend(h, co, '3001112233', 100_000n)),
        item(2, await brebSend(h, co, '3001112233', 100_000n)),
        item(3, await brebSend(h, co, '3001112233', 100_000n)),
      ],
      { mode: 'VALID_ONLY' },
    );
    expect(r.results.map((x) => x.errorCode ?? 'ok')).toEqual(['ok', 'ok', 'COUNTERPARTY_DAILY_LIMIT_EXCEEDED']);
  });

  it('a counterparty listed between validation and execution: its items are REJECTED at execution; with none left the batch is FAILED and nothing is held', async () => {
    const co = await newCompany(h, { breb: 1_000_000n });
    const send = await brebSend(h, co, '3007778899', 10_000n);
    const r = await create(co, [item(1, send), item(2, { ...send, amount: 20_000n })]);
    expect(r.batch!.state).toBe('VALIDATED');
    const entry = await h.client.addAmlEntry({ documentNumber: send.targetDocument!, reason: 'Lista restrictiva' }, ctxOf());
    try {
      const b = await h.client.executeBatch({ batchId: r.batch!.id }, ctxOf(co.id));
      expect(b).toMatchObject({ state: 'FAILED', finishedCount: 2 });
      expect(b.byStatus).toEqual([{ status: 'REJECTED', count: 2, amount: 30_000n }]);
      expect((await items(co, r.batch!.id)).map((i) => [i.status, i.errorCode])).toEqual([
        ['REJECTED', 'RECIPIENT_BLACKLISTED'],
        ['REJECTED', 'RECIPIENT_BLACKLISTED'],
      ]);
      expect(await wallet(h, co.id, Rail.BREB)).toEqual({ available: 1_000_000n, pending: 0n });
    } finally {
      await h.client.removeAmlEntry({ id: entry.id }, ctxOf());
    }
  });

  it('issue 35 #3: a line to a NIT written with its check digit is screened at execution on exactly what a single send screens (the NIT without it listed)', async () => {
    const co = await newCompany(h, { breb: 1_000_000n });
    const base = `9${String(Math.floor(Math.random() * 1e8)).padStart(8, '0')}`;
    const key = `${base}7`; // an NRIC key whose holder's document is this NIT
    const send = await brebSend(h, co, key, 10_000n, { targetDocument: `${base}-7` });
    const r = await create(co, [item(1, send)]);
    expect(r.batch!.state).toBe('VALIDATED');
    const entry = await h.client.addAmlEntry({ documentNumber: base, reason: 'Lista restrictiva' }, ctxOf());
    try {
      // The single send to that target is refused…
      expect((await failure(h.client.send({ ...send, requestHash: randomUUID() }, ctxOf(co.id)))).code).toBe('RECIPIENT_BLACKLISTED');
      // …and so is the batch line at execution: nothing paid, nothing held.
      const b = await h.client.executeBatch({ batchId: r.batch!.id }, ctxOf(co.id));
      expect(b).toMatchObject({ state: 'FAILED' });
      expect((await items(co, r.batch!.id)).map((i) => [i.status, i.errorCode])).toEqual([['REJECTED', 'RECIPIENT_BLACKLISTED']]);
      expect(await wallet(h, co.id, Rail.BREB)).toEqual({ available: 1_000_000n, pending: 0n });
    } finally {
      await h.client.removeAmlEntry({ id: entry.id }, ctxOf());
    }
  });

  it('issue 35 #8: a line pays the fee and IVA of the schedule in force at execution, as a single send then would (validation showed an estimate)', async () => {
    const co = await newCompany(h, { breb: 5_000_000n, iva: true, brebFee: [500n, 0] });
    const send = await brebSend(h, co, '3001112233', 100_000n);
    const r = await create(co, [item(1, send)]);
    expect(r.batch!.totals).toEqual([expect.objectContaining({ rail: Rail.BREB, amount: 100_000n, totalFee: 500n, ivaAmount: 95n, total: 100_595n })]);
    // The schedule changes before execution.
    await h.ledgerClient.setFeeConfig({ operation: FeeOperation.BREB_OUTFLOW, companyId: co.id, fixedFeeCents: 20_000n, variableBps: 0 }, ctxOf());
    const quote = await h.ledgerClient.computeFees({ operation: FeeOperation.BREB_OUTFLOW, amount: 100_000n, ivaApplicable: true }, ctxOf(co.id));
    expect([quote.subtotalFee, quote.ivaAmount]).toEqual([20_000n, 3_800n]);
    const b = await h.client.executeBatch({ batchId: r.batch!.id }, ctxOf(co.id));
    expect(b.totals).toEqual([expect.objectContaining({ rail: Rail.BREB, amount: 100_000n, totalFee: 20_000n, ivaAmount: 3_800n, total: 123_800n })]);
    const done = await waitFinal(co, r.batch!.id);
    expect(done.state).toBe('COMPLETED');
    const [line] = await items(co, r.batch!.id);
    expect([line!.totalFee, line!.ivaAmount]).toEqual([20_000n, 3_800n]);
    const row = (
      await h.ledger.db.query<{ subtotal_fee: string; iva_amount: string }>(
        'select subtotal_fee::text, iva_amount::text from transfer.transfers where id = ?::uuid',
        [line!.transferId],
      )
    )[0];
    expect(row).toEqual({ subtotal_fee: '20000', iva_amount: '3800' });
    expect(await wallet(h, co.id, Rail.BREB)).toEqual({ available: 5_000_000n - 123_800n, pending: 0n });
  });

  it('issue 35 #12: a line to a well-formed key the directory does not know is KEY_NOT_FOUND; a malformed key stays INVALID_KEY', async () => {
    const co = await newCompany(h, { breb: 1_000_000n });
    const line = (value: string, type = 'PHONE') =>
      transferV1.SendRequest.fromPartial({
        amount: 10_000n,
        brebKey: { type, value },
        targetName: 'Ana Pérez',
        targetDocument: '1020304050',
        requestHash: randomUUID(),
      });
    const r = await create(
      co,
      [item(1, line('3009999999')), item(2, line('correo-sin-arroba', 'EMAIL')), item(3, await brebSend(h, co, '3001112233', 10_000n))],
      { mode: 'VALID_ONLY' },
    );
    expect(r.results.map((x) => x.errorCode ?? 'ok')).toEqual(['KEY_NOT_FOUND', 'INVALID_KEY', 'ok']);
    expect(r.results[0]!.message).toBe('La llave Bre-B no está registrada en el directorio.');
    // A single send to that key keeps its HTTP contract (INVALID_KEY 422, the same message).
    const single = await failure(h.client.send(line('3009999999'), ctxOf(co.id)));
    expect([single.code, single.message]).toEqual(['INVALID_KEY', 'La llave Bre-B no está registrada en el directorio.']);
  });

  it("another company's batch reads as not found", async () => {
    const a = await newCompany(h, { breb: 1_000_000n });
    const b = await newCompany(h, { breb: 1_000_000n });
    const r = await create(a, [item(1, await brebSend(h, a, '3001112233', 10_000n))]);
    expect((await failure(get(b, r.batch!.id))).code).toBe('BATCH_NOT_FOUND');
    expect((await failure(h.client.executeBatch({ batchId: r.batch!.id }, ctxOf(b.id)))).code).toBe('BATCH_NOT_FOUND');
    expect((await failure(get(b, 'not-a-uuid'))).code).toBe('BATCH_NOT_FOUND');
  });
});
