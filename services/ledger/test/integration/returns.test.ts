import { randomUUID } from 'node:crypto';
import {
  InflowSource,
  MovementStatus,
  MovementType,
  Rail,
  countRows,
  expectLedgerConsistent,
  failure,
  fee,
  startHarness,
  walletOf,
  type Harness,
} from './harness.js';
import { RETURNS_CLAIMED } from '../../src/app/reverse-inflow.js';

/**
 * Returns (devoluciones) of credited inflows (docs/returns.md): ReserveReturn / CommitReturn /
 * ReleaseReturn, their postings, the claim on the inflow (never above its gross, even under
 * concurrent returns), and their separation from a send's holds.
 */
describe('returns of credited inflows', () => {
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

  const wallet = async (co: string, rail: (typeof Rail)[keyof typeof Rail]) => walletOf((await h.api.balances(co)).wallets, rail);
  const entriesOf = (postingId: string) =>
    h.ledger.db.query<{ account: string; amount: string }>(
      'select account, amount::text as amount from ledger.entries where posting_id = ?::uuid order by seq',
      [postingId],
    );
  const postingOfHold = async (holdId: string, kind: string) => {
    const [r] = await h.ledger.db.query<{ id: string }>('select id::text as id from ledger.postings where hold_id = ?::uuid and kind = ?', [holdId, kind]);
    return r!.id;
  };

  /** A company with both wallets and a credited inflow of `gross` (fee 1,000 + IVA 190). */
  async function credited(source: (typeof InflowSource)[keyof typeof InflowSource], gross = 100_000n) {
    const co = h.newCompany();
    await h.api.open(co);
    const movementId = randomUUID();
    const inflowKey = `inflow:${movementId}`;
    await h.api.inflow(co, {
      idempotencyKey: inflowKey,
      source,
      grossCents: gross,
      fee: fee(1_000n, 0n, 190n),
      movement: { id: movementId, status: MovementStatus.UNSPECIFIED, reference: 'paid-in' },
    });
    return { co, movementId, inflowKey };
  }

  it('a Bre-B return: held on the BREB wallet without fee, committed to breb_settlement, as a TRANSFER_OUT movement on BREB', async () => {
    const { co, inflowKey } = await credited(InflowSource.BREB);
    expect(await wallet(co, Rail.BREB)).toMatchObject({ availableCents: 98_810n, pendingOutCents: 0n });
    const movementId = randomUUID();
    const r = await h.api.reserveReturn(co, {
      idempotencyKey: 'ret-1:reserve',
      inflowIdempotencyKey: inflowKey,
      amount: 40_000n,
      movement: { id: movementId, status: MovementStatus.PENDING, reference: 'ret_1', details: { description: 'Devolución', targetName: 'Ana' } },
    });
    expect(r.replayed).toBe(false);
    expect(r.hold).toMatchObject({ rail: Rail.BREB, amount: 40_000n, fee: 0n, iva: 0n, total: 40_000n, movementId });
    expect(r.movement).toMatchObject({ id: movementId, type: MovementType.TRANSFER_OUT, rail: Rail.BREB, status: MovementStatus.PENDING, amount: 40_000n });
    expect(await wallet(co, Rail.BREB)).toMatchObject({ availableCents: 58_810n, pendingOutCents: 40_000n });

    // A replay answers the same hold; the same key with another amount is a conflict.
    const again = await h.api.reserveReturn(co, {
      idempotencyKey: 'ret-1:reserve',
      inflowIdempotencyKey: inflowKey,
      amount: 40_000n,
      movement: { id: movementId, status: MovementStatus.PENDING, reference: 'ret_1', details: { description: 'Devolución', targetName: 'Ana' } },
    });
    expect(again).toMatchObject({ replayed: true, hold: { id: r.hold!.id } });
    expect((await failure(h.api.reserveReturn(co, { idempotencyKey: 'ret-1:reserve', inflowIdempotencyKey: inflowKey, amount: 1n }))).code).toBe(
      'REFERENCE_CONFLICT',
    );

    // The transfer service's Commit and Release do not see a return's hold.
    expect((await failure(h.api.commit(co, r.hold!.id))).code).toBe('HOLD_NOT_FOUND');
    expect((await failure(h.api.release(co, r.hold!.id))).code).toBe('HOLD_NOT_FOUND');
    expect((await failure(h.api.commit(co, r.hold!.id, undefined, { rail: Rail.BREB, amount: 40_000n, fee: 0n, iva: 0n, movementId }))).code).toBe(
      'HOLD_NOT_FOUND',
    );

    const done = await h.api.commitReturn(co, r.hold!.id, 'ret-1:commit');
    expect(done.movement).toMatchObject({ id: movementId, status: MovementStatus.COMPLETED });
    expect(await entriesOf(await postingOfHold(r.hold!.id, 'commit'))).toEqual([
      { account: `wallet_pending_out:${co}:BREB`, amount: '-40000' },
      { account: 'breb_settlement', amount: '40000' },
    ]);
    expect(await wallet(co, Rail.BREB)).toMatchObject({ availableCents: 58_810n, pendingOutCents: 0n });
    expect((await h.api.commitReturn(co, r.hold!.id, 'ret-1:commit')).replayed).toBe(true);
    expect((await failure(h.api.releaseReturn(co, r.hold!.id))).code).toBe('INVALID_STATE_TRANSITION');
  });

  it('a PSE return (refund) holds the ACH wallet, shows on the PSE rail and goes back to pse_settlement', async () => {
    const { co, inflowKey } = await credited(InflowSource.PSE);
    const r = await h.api.reserveReturn(co, { inflowIdempotencyKey: inflowKey, amount: 100_000n - 1_190n });
    expect(r.hold).toMatchObject({ rail: Rail.ACH, amount: 98_810n });
    expect(r.movement).toMatchObject({ type: MovementType.TRANSFER_OUT, rail: Rail.PSE });
    await h.api.commitReturn(co, r.hold!.id);
    expect((await entriesOf(await postingOfHold(r.hold!.id, 'commit'))).map((e) => e.account)).toEqual([`wallet_pending_out:${co}:ACH`, 'pse_settlement']);
    expect(await wallet(co, Rail.ACH)).toMatchObject({ availableCents: 0n, pendingOutCents: 0n });
  });

  it('returns of one inflow never sum above its gross; a release gives its share back', async () => {
    const { co, inflowKey, movementId: inflowId } = await credited(InflowSource.BREB);
    await h.api.credit(co, { rail: Rail.BREB, amountCents: 1_000_000n });
    const a = await h.api.reserveReturn(co, { inflowIdempotencyKey: inflowKey, amount: 70_000n });
    const over = await failure(h.api.reserveReturn(co, { inflowIdempotencyKey: inflowKey, amount: 30_001n }));
    expect(over.code).toBe('RETURN_EXCEEDS_PAYMENT');
    expect(over.details).toEqual({ grossCents: '100000', returnedCents: '70000', returnableCents: '30000' });
    const b = await h.api.reserveReturn(co, { inflowIdempotencyKey: inflowKey, amount: 30_000n });
    expect(await countRows(h, 'select returned_cents::text as n from ledger.movements where id = ?::uuid', [inflowId])).toBe(100_000);

    // The network refused one: its funds and its share of the gross come back.
    const released = await h.api.releaseReturn(co, a.hold!.id, undefined, 'La red rechazó la devolución');
    expect(released.movement).toMatchObject({ status: MovementStatus.FAILED, details: { errorMessage: 'La red rechazó la devolución' } });
    expect(await countRows(h, 'select returned_cents::text as n from ledger.movements where id = ?::uuid', [inflowId])).toBe(30_000);
    await h.api.commitReturn(co, b.hold!.id);
    const c = await h.api.reserveReturn(co, { inflowIdempotencyKey: inflowKey, amount: 70_000n });
    expect(c.hold!.amount).toBe(70_000n);
    expect((await failure(h.api.reserveReturn(co, { inflowIdempotencyKey: inflowKey, amount: 1n }))).code).toBe('RETURN_EXCEEDS_PAYMENT');
  });

  it("a provider's reversal of a payment with a return made or under way is refused for an operator; once the return fails, the same reversal applies", async () => {
    const { co, inflowKey, movementId: inflowId } = await credited(InflowSource.PSE);
    await h.api.credit(co, { rail: Rail.ACH, amountCents: 500_000n });
    const status = async () => (await h.api.movement(co, inflowId)).status;

    // A return under way (its hold open): the reversal would debit the company for that money twice.
    const open = await h.api.reserveReturn(co, { inflowIdempotencyKey: inflowKey, amount: 20_000n });
    const before = await wallet(co, Rail.ACH);
    const reversalKey = `reverse-${randomUUID()}`;
    const refused = await failure(h.api.reverseInflow(co, { idempotencyKey: reversalKey, originalIdempotencyKey: inflowKey }));
    expect([refused.code, refused.message]).toEqual(['INVALID_STATE_TRANSITION', RETURNS_CLAIMED]);
    expect(await wallet(co, Rail.ACH)).toEqual(before);
    expect(await status()).toBe(MovementStatus.COMPLETED);

    // The network refused the return: its claim is let go, and the same reversal (same key) applies.
    await h.api.releaseReturn(co, open.hold!.id, undefined, 'La red rechazó la devolución');
    const reversed = await h.api.reverseInflow(co, { idempotencyKey: reversalKey, originalIdempotencyKey: inflowKey });
    expect(reversed.movement).toMatchObject({ status: MovementStatus.REVERSED });

    // A return the payer already has: refused for good (the reversal contradicts it).
    const other = await credited(InflowSource.BREB);
    await h.api.credit(other.co, { rail: Rail.BREB, amountCents: 500_000n });
    const made = await h.api.reserveReturn(other.co, { inflowIdempotencyKey: other.inflowKey, amount: 10_000n });
    await h.api.commitReturn(other.co, made.hold!.id);
    const after = await wallet(other.co, Rail.BREB);
    const again = await failure(h.api.reverseInflow(other.co, { originalIdempotencyKey: other.inflowKey }));
    expect([again.code, again.message]).toEqual(['INVALID_STATE_TRANSITION', RETURNS_CLAIMED]);
    expect(await wallet(other.co, Rail.BREB)).toEqual(after);
    expect((await h.api.movement(other.co, other.movementId)).status).toBe(MovementStatus.COMPLETED);
  });

  it('a reversal racing return claims of the same payment: either the reversal or the claims, never both', async () => {
    for (let round = 0; round < 8; round++) {
      const { co, inflowKey, movementId: inflowId } = await credited(InflowSource.PSE);
      await h.api.credit(co, { rail: Rail.ACH, amountCents: 500_000n });
      const outcomes = await Promise.allSettled([
        h.api.reverseInflow(co, { originalIdempotencyKey: inflowKey }),
        h.api.reserveReturn(co, { inflowIdempotencyKey: inflowKey, amount: 20_000n }),
        h.api.reserveReturn(co, { inflowIdempotencyKey: inflowKey, amount: 30_000n }),
      ]);
      const [reversal, ...claims] = outcomes;
      const status = (await h.api.movement(co, inflowId)).status;
      const claimed = claims.filter((c) => c.status === 'fulfilled').length;
      const returned = await countRows(h, 'select returned_cents::text as n from ledger.movements where id = ?::uuid', [inflowId]);
      if (reversal.status === 'fulfilled') {
        // The reversal won the payment's row first: no claim after it.
        expect([status, claimed, returned]).toEqual([MovementStatus.REVERSED, 0, 0]);
      } else {
        // A claim won first: the reversal is refused, the payment stays credited with the claims it took.
        expect([status, (reversal.reason as { code?: string }).code]).toEqual([MovementStatus.COMPLETED, 'INVALID_STATE_TRANSITION']);
        expect(claimed).toBeGreaterThan(0);
        const amounts = claims.flatMap((c, i) => (c.status === 'fulfilled' ? [[20_000, 30_000][i]!] : []));
        expect(returned).toBe(amounts.reduce((a, b) => a + b, 0));
      }
    }
  });

  it('concurrent returns for the last pesos: the claims stay within the gross, whatever the order', async () => {
    const { co, inflowKey, movementId: inflowId } = await credited(InflowSource.BREB);
    await h.api.credit(co, { rail: Rail.BREB, amountCents: 10_000_000n });
    const results = await Promise.allSettled(Array.from({ length: 12 }, () => h.api.reserveReturn(co, { inflowIdempotencyKey: inflowKey, amount: 30_000n })));
    const won = results.filter((r) => r.status === 'fulfilled');
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(won).toHaveLength(3);
    expect(lost.map((r) => (r.reason as { code: string }).code)).toEqual(Array(9).fill('RETURN_EXCEEDS_PAYMENT'));
    expect(await countRows(h, 'select returned_cents::text as n from ledger.movements where id = ?::uuid', [inflowId])).toBe(90_000);
  });

  it('a wallet that cannot cover the return refuses it and keeps no claim', async () => {
    const { co, inflowKey, movementId: inflowId } = await credited(InflowSource.BREB);
    const spend = await h.api.reserve(co, { rail: Rail.BREB, amount: 90_000n });
    await h.api.commit(co, spend.hold!.id);
    expect((await failure(h.api.reserveReturn(co, { inflowIdempotencyKey: inflowKey, amount: 10_000n }))).code).toBe('INSUFFICIENT_BALANCE');
    expect(await countRows(h, 'select returned_cents::text as n from ledger.movements where id = ?::uuid', [inflowId])).toBe(0);
    expect(await countRows(h, 'select count(*)::text as n from ledger.holds where return_of = ?::uuid', [inflowId])).toBe(0);
    const ok = await h.api.reserveReturn(co, { inflowIdempotencyKey: inflowKey, amount: 8_810n });
    expect(ok.hold!.amount).toBe(8_810n);
  });

  it("another company's inflow, an unassigned one, a reversed one and a send are not returnable", async () => {
    const { co, inflowKey } = await credited(InflowSource.PSE);
    const other = h.newCompany();
    await h.api.open(other);
    expect((await failure(h.api.reserveReturn(other, { inflowIdempotencyKey: inflowKey, amount: 1n }))).code).toBe('TRANSACTION_NOT_FOUND');
    expect((await failure(h.api.reserveReturn(co, { inflowIdempotencyKey: 'inflow:nope', amount: 1n }))).code).toBe('TRANSACTION_NOT_FOUND');
    const held = `held:${randomUUID()}`;
    await h.api.inflow(co, { idempotencyKey: held, source: InflowSource.BREB, grossCents: 5_000n, assign: false, movement: { id: randomUUID() } });
    expect((await failure(h.api.reserveReturn(co, { inflowIdempotencyKey: held, amount: 1n }))).code).toBe('TRANSACTION_NOT_FOUND');
    const sendKey = `send:${randomUUID()}`;
    await h.api.reserve(co, { idempotencyKey: sendKey, rail: Rail.ACH, amount: 1_000n });
    expect((await failure(h.api.reserveReturn(co, { inflowIdempotencyKey: sendKey, amount: 1n }))).code).toBe('TRANSACTION_NOT_FOUND');
    for (const bad of [{ amount: 0n }, { amount: -5n }, { inflowIdempotencyKey: '' }, { idempotencyKey: '' }]) {
      expect((await failure(h.api.reserveReturn(co, { inflowIdempotencyKey: inflowKey, amount: 1n, ...bad }))).code).toBe('INVALID_REQUEST');
    }

    await h.api.reverseInflow(co, { originalIdempotencyKey: inflowKey });
    expect((await failure(h.api.reserveReturn(co, { inflowIdempotencyKey: inflowKey, amount: 1n }))).code).toBe('INVALID_STATE_TRANSITION');
  });

  it('CheckInvariants names a claim that disagrees with the return holds', async () => {
    const { co, inflowKey, movementId: inflowId } = await credited(InflowSource.BREB);
    await h.api.reserveReturn(co, { inflowIdempotencyKey: inflowKey, amount: 1_000n });
    await h.ledger.db.query('update ledger.movements set returned_cents = 999 where id = ?::uuid', [inflowId]);
    const report = await h.api.invariants();
    expect(report.violations).toEqual([expect.stringContaining(`[6] inflow ${inflowId}`)]);
    await h.ledger.db.query('update ledger.movements set returned_cents = 1000 where id = ?::uuid', [inflowId]);
  });
});
