import { randomUUID } from 'node:crypto';
import { jest } from '@jest/globals';
import { SqlLedgerStore } from '../../src/persistence/ledger.store.js';
import { ledgerV1 } from '@wallet/proto';
import {
  FeeOperation,
  HoldStatus,
  MovementStatus,
  countRows,
  MovementType,
  Rail,
  expectLedgerConsistent,
  failure,
  fee,
  startHarness,
  walletOf,
  zeroFee,
  type Harness,
} from './harness.js';

describe('holds: reserve, commit, release', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h?.stop();
  });
  afterEach(async () => {
    await expectLedgerConsistent(h);
  });

  async function funded(amount: bigint, rail = Rail.BREB): Promise<string> {
    const co = h.newCompany();
    await h.api.open(co);
    await h.api.credit(co, { rail, amountCents: amount });
    return co;
  }
  const wallet = async (co: string, rail = Rail.BREB) => walletOf((await h.api.balances(co)).wallets, rail);

  it('reserve → commit moves T to pending_out, then out; movement PENDING → COMPLETED', async () => {
    const co = await funded(1_000_000n);
    const movementId = randomUUID();
    const r = await h.api.reserve(co, {
      amount: 100_000n,
      fee: fee(500n, 50n, 105n),
      movement: {
        id: movementId,
        status: MovementStatus.PENDING,
        reference: 'ext-1',
        apiKeyId: 'k1',
        details: {
          targetName: 'Ana',
          targetDocument: '1234567',
          bankName: 'Banco',
          bankAccountType: 'Ahorros',
          bankAccountNumber: '0012345678',
          description: 'pago',
        },
      },
    });
    expect(r.replayed).toBe(false);
    expect(r.hold).toMatchObject({ rail: Rail.BREB, status: HoldStatus.OPEN, amount: 100_000n, fee: 550n, iva: 105n, total: 100_655n, movementId });
    expect(r.movement).toMatchObject({
      id: movementId,
      type: MovementType.TRANSFER_OUT,
      rail: Rail.BREB,
      walletRail: Rail.BREB,
      status: MovementStatus.PENDING,
      amount: 100_000n,
      totalFee: 550n,
      ivaAmount: 105n,
      netAmount: 99_450n,
      reference: 'ext-1',
      apiKeyId: 'k1',
      details: {
        targetName: 'Ana',
        targetDocument: '1234567',
        bankName: 'Banco',
        bankAccountType: 'Ahorros',
        bankAccountNumber: '****5678',
        description: 'pago',
      },
    });
    expect(r.movement!.completedAt).toBeUndefined();
    expect(await wallet(co)).toMatchObject({ availableCents: 1_000_000n - 100_655n, pendingOutCents: 100_655n, version: 2n });

    const c = await h.api.commit(co, r.hold!.id);
    expect(c.hold).toMatchObject({ status: HoldStatus.COMMITTED, id: r.hold!.id });
    expect(c.hold!.closedAt).toBeInstanceOf(Date);
    expect(c.movement).toMatchObject({ id: movementId, status: MovementStatus.COMPLETED });
    expect(c.movement!.completedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    expect(await wallet(co)).toMatchObject({ availableCents: 899_345n, pendingOutCents: 0n, version: 3n });

    const entries = await h.ledger.db.query<{ account: string; amount: string }>(
      `select e.account, e.amount::text as amount from ledger.entries e join ledger.postings p on p.id = e.posting_id
        where p.hold_id = ?::uuid and p.kind = 'commit' order by e.seq`,
      [r.hold!.id],
    );
    expect(entries).toEqual([
      { account: `wallet_pending_out:${co}:BREB`, amount: '-100655' },
      { account: 'rail_clearing:BREB', amount: '100000' },
      { account: 'fee_revenue:BREB_OUTFLOW', amount: '550' },
      { account: 'iva_payable', amount: '105' },
    ]);
  });

  it('reserve → release gives T back; movement FAILED (default) or EXPIRED with the reason', async () => {
    const co = await funded(10_000n, Rail.ACH);
    const a = await h.api.reserve(co, { rail: Rail.ACH, amount: 3_000n, fee: fee(100n, 0n, 19n) });
    const b = await h.api.reserve(co, { rail: Rail.ACH, amount: 2_000n, movement: { id: randomUUID(), status: MovementStatus.AWAITING_APPROVAL } });
    expect(b.movement!.status).toBe(MovementStatus.AWAITING_APPROVAL);
    expect(await wallet(co, Rail.ACH)).toMatchObject({ availableCents: 4_881n, pendingOutCents: 5_119n, version: 3n });

    const ra = await h.api.release(co, a.hold!.id, { errorMessage: 'rail rejected: cuenta inexistente' });
    expect(ra.hold!.status).toBe(HoldStatus.RELEASED);
    expect(ra.movement).toMatchObject({ status: MovementStatus.FAILED, details: { errorMessage: 'rail rejected: cuenta inexistente' } });
    expect(ra.movement!.completedAt).toBeUndefined();
    const rb = await h.api.release(co, b.hold!.id, { finalStatus: MovementStatus.EXPIRED });
    expect(rb.movement!.status).toBe(MovementStatus.EXPIRED);
    expect(await wallet(co, Rail.ACH)).toMatchObject({ availableCents: 10_000n, pendingOutCents: 0n, version: 5n });
    expect((await failure(h.api.release(co, randomUUID(), { finalStatus: MovementStatus.COMPLETED }))).code).toBe('INVALID_REQUEST');
  });

  it('an outflow fee at or above the amount is charged on top (no FEE_EXCEEDS_AMOUNT on reserve)', async () => {
    const co = await funded(1_000n);
    const r = await h.api.reserve(co, { amount: 100n, fee: fee(100n, 0n, 19n) });
    expect(r.hold).toMatchObject({ amount: 100n, fee: 100n, iva: 19n, total: 219n });
    expect(r.movement).toMatchObject({ amount: 100n, totalFee: 100n, ivaAmount: 19n, netAmount: 0n });
    expect(await wallet(co)).toMatchObject({ availableCents: 781n, pendingOutCents: 219n });
    await h.api.commit(co, r.hold!.id);
    expect(await wallet(co)).toMatchObject({ availableCents: 781n, pendingOutCents: 0n });
  });

  it('a closed hold cannot be committed or released again; retries with the same key replay', async () => {
    const co = await funded(10_000n);
    const r = await h.api.reserve(co, { amount: 1_000n });
    const key = `transfer:${r.movement!.id}:commit`;
    const c1 = await h.api.commit(co, r.hold!.id, key);
    const c2 = await h.api.commit(co, r.hold!.id, key);
    expect(c2.replayed).toBe(true);
    expect(c2.hold).toEqual(c1.hold);
    expect((await failure(h.api.commit(co, r.hold!.id))).code).toBe('INVALID_STATE_TRANSITION');
    expect((await failure(h.api.release(co, r.hold!.id))).code).toBe('INVALID_STATE_TRANSITION');
    expect(await wallet(co)).toMatchObject({ availableCents: 9_000n, pendingOutCents: 0n, version: 3n });

    const r2 = await h.api.reserve(co, { amount: 1_000n });
    await h.api.release(co, r2.hold!.id);
    expect((await failure(h.api.commit(co, r2.hold!.id))).code).toBe('INVALID_STATE_TRANSITION');
    expect((await failure(h.api.commit(co, randomUUID()))).code).toBe('HOLD_NOT_FOUND');
    expect((await failure(h.api.commit(co, 'not-a-uuid'))).code).toBe('HOLD_NOT_FOUND');
  });

  it('a send awaiting approval commits only after EXECUTING; status changes are compare-and-set', async () => {
    const co = await funded(10_000n);
    const r = await h.api.reserve(co, { amount: 1_000n, movement: { id: randomUUID(), status: MovementStatus.AWAITING_APPROVAL } });
    const id = r.movement!.id;
    expect((await failure(h.api.commit(co, r.hold!.id))).code).toBe('INVALID_STATE_TRANSITION');
    const bad = await failure(h.api.setStatus(co, { movementId: id, expectedStatus: MovementStatus.AWAITING_APPROVAL, status: MovementStatus.COMPLETED }));
    expect(bad.code).toBe('INVALID_REQUEST');
    const wrongExpectation = await failure(h.api.setStatus(co, { movementId: id, expectedStatus: MovementStatus.EXECUTING, status: MovementStatus.PENDING }));
    expect(wrongExpectation.code).toBe('INVALID_STATE_TRANSITION');
    const ex = await h.api.setStatus(co, { movementId: id, expectedStatus: MovementStatus.AWAITING_APPROVAL, status: MovementStatus.EXECUTING });
    expect(ex.status).toBe(MovementStatus.EXECUTING);
    // Repeating a change that happened answers the movement as it is.
    expect((await h.api.setStatus(co, { movementId: id, expectedStatus: MovementStatus.AWAITING_APPROVAL, status: MovementStatus.EXECUTING })).status).toBe(
      MovementStatus.EXECUTING,
    );
    expect(
      (await failure(h.api.setStatus(h.newCompany(), { movementId: id, expectedStatus: MovementStatus.EXECUTING, status: MovementStatus.PENDING }))).code,
    ).toBe('TRANSACTION_NOT_FOUND');
    expect((await h.api.setStatus(co, { movementId: id, expectedStatus: MovementStatus.EXECUTING, status: MovementStatus.PENDING })).status).toBe(
      MovementStatus.PENDING,
    );
    const c = await h.api.commit(co, r.hold!.id);
    expect(c.movement!.status).toBe(MovementStatus.COMPLETED);
  });

  it("SetMovementStatuses: one compare-and-set for many of the company's movements (a batch's items); others are left alone", async () => {
    const co = await funded(10_000n);
    const awaiting = await Promise.all(
      [1, 2, 3].map(() => h.api.reserve(co, { amount: 100n, movement: { id: randomUUID(), status: MovementStatus.AWAITING_APPROVAL } })),
    );
    const ids = awaiting.map((r) => r.movement!.id);
    const plain = await h.api.reserve(co, { amount: 100n }); // PENDING: not in the expected status
    const other = await funded(10_000n);
    const theirs = await h.api.reserve(other, { amount: 100n, movement: { id: randomUUID(), status: MovementStatus.AWAITING_APPROVAL } });
    const set = (company: string, movementIds: string[], expectedStatus: ledgerV1.MovementStatus, status: ledgerV1.MovementStatus) =>
      h.api.setStatuses(company, { movementIds, expectedStatus, status });
    const r = await set(co, [...ids, plain.movement!.id, theirs.movement!.id, randomUUID()], MovementStatus.AWAITING_APPROVAL, MovementStatus.EXECUTING);
    expect(r.changed).toBe(3);
    for (const id of ids) expect((await h.api.movement(co, id)).status).toBe(MovementStatus.EXECUTING);
    expect((await h.api.movement(co, plain.movement!.id)).status).toBe(MovementStatus.PENDING);
    expect((await h.api.movement(other, theirs.movement!.id)).status).toBe(MovementStatus.AWAITING_APPROVAL);
    // repeated: nothing left to change
    expect((await set(co, ids, MovementStatus.AWAITING_APPROVAL, MovementStatus.EXECUTING)).changed).toBe(0);
    expect((await set(co, ids.slice(0, 2), MovementStatus.EXECUTING, MovementStatus.PENDING)).changed).toBe(2);
    expect((await set(co, [], MovementStatus.EXECUTING, MovementStatus.PENDING)).changed).toBe(0);
    // money-moving changes and bad ids are refused
    expect((await failure(set(co, ids, MovementStatus.EXECUTING, MovementStatus.COMPLETED))).code).toBe('INVALID_REQUEST');
    expect((await failure(set(co, ['not-a-uuid'], MovementStatus.AWAITING_APPROVAL, MovementStatus.EXECUTING))).code).toBe('INVALID_REQUEST');
    expect(
      (
        await failure(
          set(
            co,
            Array.from({ length: 10_001 }, () => randomUUID()),
            MovementStatus.AWAITING_APPROVAL,
            MovementStatus.EXECUTING,
          ),
        )
      ).code,
    ).toBe('INVALID_REQUEST');
    const c = await h.api.commit(co, awaiting[0]!.hold!.id);
    expect(c.movement!.status).toBe(MovementStatus.COMPLETED);
  });

  it('refuses a reserve the available balance does not cover, and bad reserves', async () => {
    const co = await funded(1_000n);
    expect((await failure(h.api.reserve(co, { amount: 990n, fee: fee(10n, 0n, 1n) }))).code).toBe('INSUFFICIENT_BALANCE');
    expect((await failure(h.api.reserve(co, { rail: Rail.ACH, amount: 100n }))).code).toBe('INSUFFICIENT_BALANCE');
    expect((await failure(h.api.reserve(h.newCompany(), { amount: 100n }))).code).toBe('WALLET_NOT_PROVISIONED');
    const achOnly = h.newCompany();
    await h.api.open(achOnly, [Rail.ACH]);
    expect((await failure(h.api.reserve(achOnly, { amount: 100n }))).code).toBe('FAST_WALLET_MISSING');
    const inconsistent = await failure(
      h.api.reserve(co, { amount: 100n, fee: { fixedFee: 1n, variableFee: 1n, subtotalFee: 3n, ivaApplicable: false, ivaAmount: 0n, totalCharged: 3n } }),
    );
    expect(inconsistent.code).toBe('INVALID_REQUEST');
    expect(inconsistent.details).toEqual({ fields: [{ path: 'fee.subtotalFee', message: 'must equal fixedFee + variableFee' }] });
    expect((await failure(h.api.reserve(co, { amount: 0n }))).code).toBe('INVALID_REQUEST');
    expect((await failure(h.api.reserve(co, { amount: 100n, fee: undefined }))).code).toBe('INVALID_REQUEST');
    expect((await failure(h.api.reserve(co, { amount: 100n, movement: { id: 'x', status: MovementStatus.PENDING } }))).code).toBe('INVALID_REQUEST');
    expect((await failure(h.api.reserve(co, { amount: 100n, movement: { status: MovementStatus.COMPLETED } }))).code).toBe('INVALID_REQUEST');
    expect((await failure(h.api.reserve(co, { amount: 1_200_000_001n }))).code).toBe('AMOUNT_EXCEEDS_BREB_CAP');
    expect(await wallet(co)).toMatchObject({ availableCents: 1_000n, pendingOutCents: 0n, version: 1n });
  });

  it('a reserve is idempotent on its key; the same movement id under another key conflicts', async () => {
    const co = await funded(10_000n);
    const movementId = randomUUID();
    const key = `transfer:${movementId}:reserve`;
    const req = { idempotencyKey: key, amount: 2_000n, movement: { id: movementId, status: MovementStatus.PENDING } };
    const [a, b] = await Promise.all([h.api.reserve(co, req), h.api.reserve(co, req)]);
    expect([a.replayed, b.replayed].sort()).toEqual([false, true]);
    expect(a.hold!.id).toBe(b.hold!.id);
    // A retry after the balance was spent still replays the first answer.
    await h.api.reserve(co, { amount: 8_000n });
    const c = await h.api.reserve(co, req);
    expect(c).toMatchObject({ replayed: true, hold: { id: a.hold!.id } });
    expect((await failure(h.api.reserve(co, { ...req, amount: 2_001n }))).code).toBe('REFERENCE_CONFLICT');
    expect((await failure(h.api.reserve(co, { amount: 1n, movement: { id: movementId, status: MovementStatus.PENDING } }))).code).toBe('INSUFFICIENT_BALANCE');
    await h.api.credit(co, { amountCents: 5n });
    expect((await failure(h.api.reserve(co, { amount: 1n, movement: { id: movementId, status: MovementStatus.PENDING } }))).code).toBe('REFERENCE_CONFLICT');
    expect(await wallet(co)).toMatchObject({ availableCents: 5n, pendingOutCents: 10_000n, version: 4n });
  });

  it('50 concurrent reserves against a balance covering exactly 17 → exactly 17 succeed', async () => {
    const T = 1_119n; // 1000 + fee 100 + IVA 19
    const co = await funded(T * 17n);
    const results = await Promise.allSettled(Array.from({ length: 50 }, () => h.api.reserve(co, { amount: 1_000n, fee: fee(100n, 0n, 19n) })));
    const ok = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(ok).toHaveLength(17);
    expect(refused.map((r) => (r.reason as { code: string }).code)).toEqual(Array(33).fill('INSUFFICIENT_BALANCE'));
    const w = await wallet(co);
    expect(w).toMatchObject({ availableCents: 0n, pendingOutCents: T * 17n, version: 18n });
    const n = await countRows(h, `select count(*)::text as n from ledger.postings where company_id = ? and rail = 'BREB'`, [co]);
    expect(BigInt(n)).toBe(w.version);
  });

  it('a concurrent commit and release of one hold: exactly one applies', async () => {
    const co = await funded(100_000n);
    const holds = await Promise.all(Array.from({ length: 10 }, () => h.api.reserve(co, { amount: 1_000n })));
    const races = await Promise.all(
      holds.map(async (r) => Promise.allSettled([h.api.commit(co, r.hold!.id), h.api.release(co, r.hold!.id), h.api.commit(co, r.hold!.id)])),
    );
    for (const outcomes of races) {
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
      for (const o of outcomes) if (o.status === 'rejected') expect((o.reason as { code: string }).code).toBe('INVALID_STATE_TRANSITION');
    }
    const w = await wallet(co);
    expect(w.pendingOutCents).toBe(0n);
    expect(w.version).toBe(21n);
  });

  it('keeps companies apart: another company cannot see, commit or release a hold or movement', async () => {
    const a = await funded(10_000n);
    const b = await funded(10_000n);
    const r = await h.api.reserve(a, { amount: 1_000n });
    expect((await failure(h.api.commit(b, r.hold!.id))).code).toBe('HOLD_NOT_FOUND');
    expect((await failure(h.api.release(b, r.hold!.id))).code).toBe('HOLD_NOT_FOUND');
    expect((await failure(h.api.movement(b, r.movement!.id))).code).toBe('TRANSACTION_NOT_FOUND');
    expect((await failure(h.api.movement(b, randomUUID()))).code).toBe('TRANSACTION_NOT_FOUND');
    expect((await h.api.list(b)).items.map((m) => m.id)).not.toContain(r.movement!.id);
    expect(await h.api.movement(a, r.movement!.id)).toEqual(r.movement);
    expect(await wallet(a)).toMatchObject({ availableCents: 9_000n, pendingOutCents: 1_000n });
    await h.api.release(a, r.hold!.id);
  });
  describe('reserve with the fee computed by the ledger (issue 23: no ComputeFees call first)', () => {
    const computed = (ivaApplicable: boolean) => ({ fee: undefined, computeFee: { ivaApplicable } });

    it("reserves amount + the company's scheduled fee + IVA; the hold carries the split ComputeFees answers", async () => {
      const co = await funded(10_000_000n);
      await h.api.setFee({ operation: FeeOperation.BREB_OUTFLOW, companyId: co, fixedFeeCents: 300n, variableBps: 45 });
      const expected = await h.api.computeFees(co, { operation: FeeOperation.BREB_OUTFLOW, amount: 1_234_567n, ivaApplicable: true });
      expect(expected).toMatchObject({ fixedFee: 300n, variableFee: 5_556n, subtotalFee: 5_856n, ivaAmount: 1_113n });
      const r = await h.api.reserve(co, { amount: 1_234_567n, ...computed(true) });
      expect(r.hold).toMatchObject({ amount: 1_234_567n, fee: 5_856n, iva: 1_113n, fixedFee: 300n, total: 1_234_567n + 5_856n + 1_113n });
      expect(r.movement).toMatchObject({ totalFee: 5_856n, ivaAmount: 1_113n });
      expect(await wallet(co)).toMatchObject({ availableCents: 10_000_000n - 1_241_536n, pendingOutCents: 1_241_536n });
      // Without IVA (the company's regime says so), the same schedule and no IVA.
      const n = await h.api.reserve(co, { amount: 1_234_567n, ...computed(false) });
      expect(n.hold).toMatchObject({ fee: 5_856n, iva: 0n, fixedFee: 300n });
      // The ACH rail takes the ACH schedule (the default, none set: zero).
      await h.api.credit(co, { rail: Rail.ACH, amountCents: 1_000n });
      const ach = await h.api.reserve(co, { rail: Rail.ACH, amount: 1_000n, ...computed(true) });
      expect(ach.hold).toMatchObject({ fee: 0n, iva: 0n, fixedFee: 0n, total: 1_000n });
      // A hold reserved with a given fee keeps its fixed part too (a batch item's, a replay's).
      const given = await h.api.reserve(co, { amount: 1_000n, fee: fee(70n, 30n, 19n) });
      expect(given.hold).toMatchObject({ fee: 100n, iva: 19n, fixedFee: 70n });
      const commit = await h.api.commit(co, r.hold!.id, undefined, {
        rail: Rail.BREB,
        amount: 1_234_567n,
        fee: 5_856n,
        iva: 1_113n,
        movementId: r.movement!.id,
      });
      expect(commit.hold).toMatchObject({ status: HoldStatus.COMMITTED, fixedFee: 300n });
    });

    it('a retry replays the hold as first reserved even after the schedule changed; another regime under the key conflicts', async () => {
      const co = await funded(1_000_000n);
      await h.api.setFee({ operation: FeeOperation.BREB_OUTFLOW, companyId: co, fixedFeeCents: 200n, variableBps: 0 });
      const movementId = randomUUID();
      const req = {
        idempotencyKey: `transfer:${movementId}:reserve`,
        amount: 10_000n,
        movement: { id: movementId, status: MovementStatus.PENDING },
        ...computed(true),
      };
      const first = await h.api.reserve(co, req);
      expect(first.hold).toMatchObject({ fee: 200n, iva: 38n, fixedFee: 200n });
      await h.api.setFee({ operation: FeeOperation.BREB_OUTFLOW, companyId: co, fixedFeeCents: 900n, variableBps: 10 });
      const again = await h.api.reserve(co, req);
      expect(again).toMatchObject({ replayed: true, hold: { id: first.hold!.id, fee: 200n, iva: 38n, fixedFee: 200n } });
      expect((await failure(h.api.reserve(co, { ...req, computeFee: { ivaApplicable: false } }))).code).toBe('REFERENCE_CONFLICT');
      // The same send with the fee given instead is another request under that key.
      expect((await failure(h.api.reserve(co, { ...req, computeFee: undefined, fee: fee(200n, 0n, 38n) }))).code).toBe('REFERENCE_CONFLICT');
      // A new send now takes the new schedule.
      expect((await h.api.reserve(co, { amount: 10_000n, ...computed(true) })).hold).toMatchObject({ fee: 910n, fixedFee: 900n });
      // VoidReserve of the landed key answers the hold with its split (what a sender that gave up shows).
      const v = await h.client.voidReserve(ledgerV1.VoidReserveRequest.fromPartial({ idempotencyKey: req.idempotencyKey, rail: Rail.BREB }), h.ctx(co));
      expect(v).toMatchObject({ voided: false, hold: { id: first.hold!.id, fee: 200n, iva: 38n, fixedFee: 200n } });
    });

    it('the fee is given or asked for, not both; a batch item must give it; the balance still guards', async () => {
      const co = await funded(10_000n);
      await h.api.setFee({ operation: FeeOperation.BREB_OUTFLOW, companyId: co, fixedFeeCents: 100n, variableBps: 0 });
      const both = await failure(h.api.reserve(co, { amount: 100n, fee: zeroFee(), computeFee: { ivaApplicable: true } }));
      expect(both.code).toBe('INVALID_REQUEST');
      expect(both.details).toEqual({ fields: [{ path: 'fee', message: 'is sent instead of computeFee, not with it' }] });
      const batch = await failure(
        h.client.reserveBatch(
          ledgerV1.ReserveBatchRequest.fromPartial({
            items: [
              {
                idempotencyKey: `reserve-${randomUUID()}`,
                rail: Rail.BREB,
                amount: 100n,
                computeFee: { ivaApplicable: true },
                movement: { id: randomUUID(), status: MovementStatus.PENDING },
              },
            ],
          }),
          h.ctx(co),
        ),
      );
      expect(batch.code).toBe('INVALID_REQUEST');
      expect(JSON.stringify(batch.details)).toContain('items.0.computeFee');
      // 9,900 + 100 + 19 IVA is over 10,000: the computed fee is part of what the guard checks.
      expect((await failure(h.api.reserve(co, { amount: 9_900n, ...computed(true) }))).code).toBe('INSUFFICIENT_BALANCE');
      expect((await h.api.reserve(co, { amount: 9_881n, ...computed(true) })).hold).toMatchObject({ total: 10_000n });
      expect(await wallet(co)).toMatchObject({ availableCents: 0n, pendingOutCents: 10_000n });
      // Another company's schedule is not this one's.
      const other = await funded(10_000n);
      expect((await h.api.reserve(other, { amount: 1_000n, ...computed(true) })).hold).toMatchObject({ fee: 0n, fixedFee: 0n });
    });
  });

  describe("commit with the caller's expectation of the hold (issue 23: no read first)", () => {
    const commitEntries = (holdId: string) =>
      h.ledger.db.query<{ account: string; amount: string }>(
        `select e.account, e.amount::text as amount from ledger.entries e join ledger.postings p on p.id = e.posting_id
        where p.hold_id = ?::uuid and p.kind = 'commit' order by e.seq`,
        [holdId],
      );
    let reads: ReturnType<typeof jest.spyOn>;
    beforeEach(() => {
      reads = jest.spyOn(SqlLedgerStore.prototype, 'getHold');
    });
    afterEach(() => {
      reads.mockRestore();
    });

    it('the expected open hold is committed in one statement, with the posting a read would have built; a retry replays with or without it', async () => {
      const co = await funded(1_000_000n);
      const r = await h.api.reserve(co, { amount: 100_000n, fee: fee(500n, 50n, 105n), movement: { id: randomUUID(), status: MovementStatus.PENDING } });
      const expected = { rail: Rail.BREB, amount: 100_000n, fee: 550n, iva: 105n, movementId: r.movement!.id.toUpperCase() };
      const key = `transfer:${r.movement!.id}:commit`;
      const c = await h.api.commit(co, r.hold!.id, key, expected);
      expect(reads).not.toHaveBeenCalled();
      expect(c.replayed).toBe(false);
      expect(c.hold).toMatchObject({ id: r.hold!.id, status: HoldStatus.COMMITTED, amount: 100_000n, fee: 550n, iva: 105n, total: 100_655n });
      expect(c.movement).toMatchObject({ id: r.movement!.id, status: MovementStatus.COMPLETED });
      expect(await commitEntries(r.hold!.id)).toEqual([
        { account: `wallet_pending_out:${co}:BREB`, amount: '-100655' },
        { account: 'rail_clearing:BREB', amount: '100000' },
        { account: 'fee_revenue:BREB_OUTFLOW', amount: '550' },
        { account: 'iva_payable', amount: '105' },
      ]);
      expect(await wallet(co)).toMatchObject({ availableCents: 899_345n, pendingOutCents: 0n, version: 3n });
      // The expectation is not part of the request: the same key replays with it, without it, or with another.
      for (const x of [expected, undefined, { ...expected, amount: 1n }]) {
        const again = await h.api.commit(co, r.hold!.id, key, x);
        expect(again.replayed).toBe(true);
        expect(again.hold).toEqual(c.hold);
      }
      expect((await failure(h.api.commit(co, r.hold!.id, undefined, expected))).code).toBe('INVALID_STATE_TRANSITION');
    });

    it('an expectation that differs from the hold in any column is not trusted: the hold is read and committed with its own amounts', async () => {
      const co = await funded(10_000_000n, Rail.ACH);
      const base = { rail: Rail.ACH, amount: 10_000n, fee: 300n, iva: 57n };
      const wrongs = [
        { amount: 10_001n },
        { fee: 0n },
        { iva: 0n },
        { rail: Rail.BREB },
        { movementId: randomUUID() },
        { movementId: 'not-a-uuid' },
        { amount: -1n },
      ];
      for (const wrong of wrongs) {
        const r = await h.api.reserve(co, { rail: Rail.ACH, amount: 10_000n, fee: fee(300n, 0n, 57n) });
        reads.mockClear();
        const c = await h.api.commit(co, r.hold!.id, undefined, { ...base, movementId: r.movement!.id, ...wrong });
        expect(reads).toHaveBeenCalledTimes(1);
        expect(c.hold).toMatchObject({ status: HoldStatus.COMMITTED, amount: 10_000n, fee: 300n, iva: 57n });
        expect(await commitEntries(r.hold!.id)).toEqual([
          { account: `wallet_pending_out:${co}:ACH`, amount: '-10357' },
          { account: 'rail_clearing:ACH', amount: '10000' },
          { account: 'fee_revenue:ACH_OUTFLOW', amount: '300' },
          { account: 'iva_payable', amount: '57' },
        ]);
      }
      expect(await wallet(co, Rail.ACH)).toMatchObject({ pendingOutCents: 0n, availableCents: 10_000_000n - 7n * 10_357n });
    });

    it("with a right expectation, the read path's refusals stand: awaiting approval, closed, another company's, unknown", async () => {
      const co = await funded(10_000n);
      const awaiting = await h.api.reserve(co, { amount: 1_000n, movement: { id: randomUUID(), status: MovementStatus.AWAITING_APPROVAL } });
      const x = (r: ledgerV1.HoldResult) => ({ rail: Rail.BREB, amount: r.hold!.amount, fee: r.hold!.fee, iva: r.hold!.iva, movementId: r.movement!.id });
      expect((await failure(h.api.commit(co, awaiting.hold!.id, undefined, x(awaiting)))).code).toBe('INVALID_STATE_TRANSITION');
      const released = await h.api.reserve(co, { amount: 1_000n });
      await h.api.release(co, released.hold!.id);
      expect((await failure(h.api.commit(co, released.hold!.id, undefined, x(released)))).code).toBe('INVALID_STATE_TRANSITION');
      const open = await h.api.reserve(co, { amount: 1_000n });
      expect((await failure(h.api.commit(h.newCompany(), open.hold!.id, undefined, x(open)))).code).toBe('HOLD_NOT_FOUND');
      expect((await failure(h.api.commit(co, randomUUID(), undefined, x(open)))).code).toBe('HOLD_NOT_FOUND');
      expect(await wallet(co)).toMatchObject({ availableCents: 8_000n, pendingOutCents: 2_000n });
      await h.api.release(co, awaiting.hold!.id);
      await h.api.release(co, open.hold!.id);
    });

    it('concurrent commits with expectations and a release of one hold: exactly one applies', async () => {
      const co = await funded(100_000n);
      const holds = await Promise.all(Array.from({ length: 10 }, () => h.api.reserve(co, { amount: 1_000n })));
      const races = await Promise.all(
        holds.map(async (r) => {
          const x = { rail: Rail.BREB, amount: 1_000n, fee: 0n, iva: 0n, movementId: r.movement!.id };
          return Promise.allSettled([h.api.commit(co, r.hold!.id, undefined, x), h.api.release(co, r.hold!.id), h.api.commit(co, r.hold!.id, undefined, x)]);
        }),
      );
      for (const outcomes of races) {
        expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
        for (const o of outcomes) if (o.status === 'rejected') expect((o.reason as { code: string }).code).toBe('INVALID_STATE_TRANSITION');
      }
      expect(await wallet(co)).toMatchObject({ pendingOutCents: 0n, version: 21n });
    });
  });
});
