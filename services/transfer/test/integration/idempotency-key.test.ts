import { randomUUID } from 'node:crypto';
import { transferV1 } from '@wallet/proto';
import type { TransferRecord } from '../../src/domain/transfer.js';
import { SqlTransferStore } from '../../src/persistence/transfer.store.js';
import { transferRecord } from './transfer-record.js';
import {
  Rail,
  achSend,
  brebSend,
  ctxOf,
  expectLedgerOk,
  failure,
  newCompany,
  send,
  setFaults,
  startHarness,
  testProtection,
  waitForState,
  wallet,
  type CompanySetup,
  type Harness,
} from './harness.js';

/** Limits no test send reaches (the store's own limit rule is tested in limits tests). */
const NO_LIMITS = { daily: 10n ** 15n, monthly: 10n ** 15n };

/**
 * A send's `Idempotency-Key` (docs/decisions.md, unknown outcomes): the transfer is inserted with the key, unique per company,
 * so whatever happened to the request that made it (a gateway time-out or crash after the send was
 * accepted), a retry with the key gets THAT transfer in its current state: never a second transfer,
 * reserve or dispatch.
 */
describe('Idempotency-Key on Send', () => {
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

  const q = async (sql: string, params: unknown[]) => Number((await h.ledger.db.query<{ n: string }>(sql, params))[0]!.n);
  const transfers = (co: CompanySetup) => q('select count(*)::text as n from transfer.transfers where company_id = ?', [co.id]);
  const reserves = (co: CompanySetup) => q(`select count(*)::text as n from ledger.postings where company_id = ? and kind = 'reserve'`, [co.id]);
  const dispatches = (co: CompanySetup) =>
    q(`select count(*)::text as n from sandbox.transfers where transaction_id in (select id::text from transfer.transfers where company_id = ?)`, [co.id]);

  it('the same request twice with one key: one transfer, one reserve, one dispatch; the retry answers its current state', async () => {
    const co = await newCompany(h, { breb: 100_000n });
    const req = await brebSend(h, co, '3007770001', 1_000n, { idempotencyKey: 'key-1' });
    const first = await send(h, co, req);
    expect(first).toMatchObject({ replayed: false, idempotencyKeyReplayed: false, transfer: { status: 'MOVEMENT_STATUS_PENDING' } });
    const id = first.transfer!.id;
    const again = await send(h, co, req);
    expect(again).toMatchObject({ replayed: true, idempotencyKeyReplayed: true, transfer: { id } });
    await waitForState(h, id, ['COMPLETED']);
    // Later retries see the transfer as it is now.
    expect(await send(h, co, req)).toMatchObject({ replayed: true, idempotencyKeyReplayed: true, transfer: { id, status: 'MOVEMENT_STATUS_COMPLETED' } });
    expect([await transfers(co), await reserves(co), await dispatches(co)]).toEqual([1, 1, 1]);
    expect(await wallet(h, co.id, Rail.BREB)).toEqual({ available: 99_000n, pending: 0n });
    const [row] = await h.ledger.db.query<{ idempotency_key: string; idempotency_fingerprint: string }>(
      'select idempotency_key, idempotency_fingerprint from transfer.transfers where id = ?::uuid',
      [id],
    );
    // The request hash (over a body that may hold an account number) is kept as a keyed fingerprint only.
    expect(row).toEqual({ idempotency_key: 'key-1', idempotency_fingerprint: testProtection.fingerprint(req.requestHash) });
  });

  it('10 concurrent sends with one key: one transfer and one reserve; all answer its id, one of them as the original', async () => {
    const co = await newCompany(h, { ach: 100_000n });
    const req = achSend(co, 2_000n, { idempotencyKey: 'race-1' });
    const results = await Promise.all(Array.from({ length: 10 }, () => send(h, co, req)));
    expect(new Set(results.map((r) => r.transfer!.id)).size).toBe(1);
    expect(results.filter((r) => !r.idempotencyKeyReplayed)).toHaveLength(1);
    expect([await transfers(co), await reserves(co)]).toEqual([1, 1]);
    expect(await wallet(h, co.id, Rail.ACH)).toMatchObject({ available: 98_000n });
    await waitForState(h, results[0]!.transfer!.id, ['COMPLETED']);
    expect(await dispatches(co)).toBe(1);
  });

  it('the same key with another request is IDEMPOTENCY_KEY_REUSED, also when both race; nothing else is created', async () => {
    const co = await newCompany(h, { ach: 100_000n });
    const req = achSend(co, 1_000n, { idempotencyKey: 'reuse-1' });
    const first = await send(h, co, req);
    expect((await failure(send(h, co, { ...req, amount: 1_001n, requestHash: randomUUID() }))).code).toBe('IDEMPOTENCY_KEY_REUSED');
    // Without a gateway hash the service's own hash still tells bodies apart.
    const own = achSend(co, 1_500n, { idempotencyKey: 'reuse-own', requestHash: '' });
    const o1 = await send(h, co, own);
    expect((await send(h, co, own)).transfer!.id).toBe(o1.transfer!.id);
    expect((await failure(send(h, co, { ...own, amount: 1_501n }))).code).toBe('IDEMPOTENCY_KEY_REUSED');
    // Five different requests at once under one fresh key: one wins, the others are refused.
    const racing = Array.from({ length: 5 }, (_, i) => achSend(co, BigInt(2_000 + i), { idempotencyKey: 'reuse-race' }));
    const outcomes = await Promise.allSettled(racing.map((r) => send(h, co, r)));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    for (const o of outcomes) if (o.status === 'rejected') expect((o.reason as { code: string }).code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect([await transfers(co), await reserves(co)]).toEqual([3, 3]);
    await waitForState(h, first.transfer!.id, ['COMPLETED']);
  });

  it("a key is per company: another company's same key and body is its own transfer", async () => {
    const a = await newCompany(h, { ach: 100_000n });
    const b = await newCompany(h, { ach: 100_000n });
    const req = achSend(a, 1_000n, { idempotencyKey: 'shared-key' });
    const ra = await send(h, a, req);
    const rb = await send(h, b, req);
    expect([ra.idempotencyKeyReplayed, rb.idempotencyKeyReplayed]).toEqual([false, false]);
    expect(rb.transfer!.id).not.toBe(ra.transfer!.id);
    expect((await send(h, a, req)).transfer!.id).toBe(ra.transfer!.id);
    expect((await send(h, b, req)).transfer!.id).toBe(rb.transfer!.id);
    // Another body under the key is a reuse for each company on its own.
    expect((await failure(send(h, b, { ...req, amount: 1_001n, requestHash: randomUUID() }))).code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect([await transfers(a), await reserves(a), await transfers(b), await reserves(b)]).toEqual([1, 1, 1, 1]);
  });

  it('a send refused at its reserve keeps its refusal under the key; one refused before anything was recorded holds nothing', async () => {
    const co = await newCompany(h, { ach: 5_000n });
    const big = achSend(co, 10_000n, { idempotencyKey: 'poor-1' });
    expect((await failure(send(h, co, big))).code).toBe('INSUFFICIENT_BALANCE');
    await h.ledgerClient.credit({ idempotencyKey: `top-${co.id}`, rail: Rail.ACH, amountCents: 50_000n }, ctxOf(co.id));
    // The key names that refused transfer: the same refusal, nothing new.
    expect((await failure(send(h, co, big))).code).toBe('INSUFFICIENT_BALANCE');
    expect(await transfers(co)).toBe(1);
    // The ACH rail down at send: refused before the transfer was recorded, so the key is still free.
    const ach = achSend(co, 1_000n, { idempotencyKey: 'down-1' });
    await setFaults(h, { achRail: 'down' });
    try {
      expect((await failure(send(h, co, ach))).code).toBe('ACH_RAIL_UNAVAILABLE');
    } finally {
      await setFaults(h, { achRail: 'up' });
    }
    expect(await send(h, co, ach)).toMatchObject({ replayed: false, idempotencyKeyReplayed: false });
    expect([await transfers(co), await reserves(co)]).toEqual([2, 1]);
    // A malformed key is a schema error.
    const bad = await failure(send(h, co, { ...ach, idempotencyKey: 'con espacio' }));
    expect(bad.code).toBe('INVALID_REQUEST');
  });

  it('a retry while the first request is undecided (its owner died after recording it) waits, then answers that transfer', async () => {
    const store = new SqlTransferStore(h.transfer!.db, testProtection);
    const co = await newCompany(h, { breb: 100_000n });
    const req = transferV1.SendRequest.fromPartial({ ...(await brebSend(h, co, '3007770002', 10_000n)), idempotencyKey: 'orphan-1' });
    const orphan: TransferRecord = transferRecord({
      companyId: co.id,
      targetName: req.targetName!,
      targetDocument: req.targetDocument!,
      destination: { kind: 'BREB', keyType: 'PHONE', keyValue: '3007770002', anchorHandle: 'anh_x', bankName: null, bankAccountType: null },
    });
    // What a request leaves behind when it dies right after recording RECEIVED (the sweeper looks after 1.5 s).
    expect(
      await store.insertWithinLimits(orphan, req.targetDocument!, { dayStart: new Date(0), monthStart: new Date(0) }, NO_LIMITS, 1_500, {
        key: 'orphan-1',
        requestHash: req.requestHash,
      }),
    ).toBe('OK');
    const retry = await send(h, co, req);
    // The sweeper gave it up (nothing was reserved): the same transfer, FAILED; no second one.
    expect(retry).toMatchObject({ replayed: true, idempotencyKeyReplayed: true, transfer: { id: orphan.id, status: 'MOVEMENT_STATUS_FAILED' } });
    expect(await waitForState(h, orphan.id, ['REJECTED'])).toBe('REJECTED');
    expect([await transfers(co), await reserves(co)]).toEqual([1, 0]);
    expect(await wallet(h, co.id, Rail.BREB)).toEqual({ available: 100_000n, pending: 0n });
  });
});
