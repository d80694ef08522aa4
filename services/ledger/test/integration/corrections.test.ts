import { randomUUID } from 'node:crypto';
import { ledgerV1 } from '@wallet/proto';
import { Rail, expectLedgerConsistent, failure, startHarness, walletOf, type Harness } from './harness.js';

const ctx = (companyId: string) => ({ companyId, requestId: randomUUID() });

/** PostCorrection: an operator's correcting entry for a money exception. */
describe('PostCorrection', () => {
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

  const post = (co: string, r: Partial<ledgerV1.PostCorrectionRequest>) =>
    h.client.postCorrection(
      ledgerV1.PostCorrectionRequest.fromPartial({
        idempotencyKey: `exception:${randomUUID()}:write_off`,
        type: ledgerV1.CorrectionType.WRITE_OFF_PAYOUT,
        rail: Rail.BREB,
        amount: 10_000n,
        reason: 'exc_1: the rail paid after the release',
        movement: `breb:brb_${randomUUID()}`,
        caseId: 'exc_1',
        ...r,
      }),
      ctx(co),
    );
  const balanceOf = async (account: string) =>
    BigInt((await h.ledger.db.query<{ s: string }>('select coalesce(sum(amount), 0)::text as s from ledger.entries where account = ?', [account]))[0]!.s);

  it('writes a payout off against operational losses, once per key; no company wallet moves', async () => {
    const co = h.newCompany();
    await h.api.open(co);
    await h.api.credit(co, { rail: Rail.BREB, amountCents: 5_000n });
    const key = `exception:${randomUUID()}:write_off`;
    const movement = `breb:brb_${randomUUID()}`;
    const losses = await balanceOf('operational_losses');
    const clearing = await balanceOf('rail_clearing:BREB');
    const r = await post(co, { idempotencyKey: key, movement });
    expect(r.replayed).toBe(false);
    expect((await post(co, { idempotencyKey: key, movement })).replayed).toBe(true);
    expect(await balanceOf('operational_losses')).toBe(losses - 10_000n);
    expect(await balanceOf('rail_clearing:BREB')).toBe(clearing + 10_000n);
    expect(walletOf((await h.api.balances(co)).wallets, Rail.BREB)).toMatchObject({ availableCents: 5_000n, pendingOutCents: 0n });
    // The same key with another amount is a conflict, not a second entry.
    expect((await failure(post(co, { idempotencyKey: key, movement, amount: 1n }))).code).toBe('REFERENCE_CONFLICT');
  });

  it('issue 35: one live correction per external movement, whichever case asks; undone, the movement may be corrected again', async () => {
    const co = h.newCompany();
    await h.api.open(co);
    const movement = `breb:brb_${randomUUID()}`;
    const clearing = await balanceOf('rail_clearing:BREB');
    const first = await post(co, { idempotencyKey: `exception:${randomUUID()}:write_off`, movement, caseId: 'exc_owner' });
    // Another case (a reconciliation break about the same payout) cannot post a second correction.
    const e = await failure(post(co, { idempotencyKey: `exception:${randomUUID()}:write_off`, movement, caseId: 'exc_break' }));
    expect(e.code).toBe('MOVEMENT_ALREADY_CORRECTED');
    expect(e.details).toMatchObject({ movement, caseId: 'exc_owner', postingId: first.postingId });
    const adj = await failure(
      h.client.postClearingAdjustment(
        { idempotencyKey: `recon:${randomUUID()}`, clearing: 'breb', deltaCents: 10_000n, reason: 'x', movement, caseId: 'exc_break' },
        { requestId: randomUUID() },
      ),
    );
    expect(adj.code).toBe('MOVEMENT_ALREADY_CORRECTED');
    expect(await balanceOf('rail_clearing:BREB')).toBe(clearing + 10_000n);
    // Concurrent cases for a fresh movement: exactly one posts.
    const fresh = `ach:ach_${randomUUID()}`;
    const raced = await Promise.allSettled(
      [1, 2, 3, 4].map((i) => post(co, { idempotencyKey: `exception:${randomUUID()}:write_off`, rail: Rail.ACH, movement: fresh, caseId: `exc_${i}` })),
    );
    expect(raced.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of raced) if (r.status === 'rejected') expect((r.reason as { code: string }).code).toBe('MOVEMENT_ALREADY_CORRECTED');
    // Undone (ReverseCorrection), the movement holds no live correction: the entries net to zero, once.
    const key = (
      await h.ledger.db.query<{ k: string }>('select idempotency_key as k from ledger.corrections where posting_id = ?::uuid', [first.postingId])
    )[0]!.k;
    const undo = await h.client.reverseCorrection(
      { idempotencyKey: `${key}:reversed`, correctionKey: key, reason: 'the report no longer shows it' },
      { requestId: randomUUID() },
    );
    expect(undo.replayed).toBe(false);
    expect(
      (await h.client.reverseCorrection({ idempotencyKey: `${key}:again`, correctionKey: key, reason: 'twice' }, { requestId: randomUUID() })).postingId,
    ).toBe(undo.postingId);
    expect(await balanceOf('rail_clearing:BREB')).toBe(clearing);
    const again = await post(co, { idempotencyKey: `exception:${randomUUID()}:write_off`, movement, caseId: 'exc_break' });
    expect(again.replayed).toBe(false);
    expect(await balanceOf('rail_clearing:BREB')).toBe(clearing + 10_000n);
  });

  it('issue 35 finding 1: a break accepted before its owner booked the payment (the network retried after a 503) is undone when the owner books it: the payment is booked once', async () => {
    const co = h.newCompany();
    await h.api.open(co);
    const ptid = `BRB-${randomUUID()}`;
    const movement = `breb-inbound:${ptid}`;
    const settlement = await balanceOf('breb_settlement');
    // The day's breb-inbound run: missing_in_our_books, accepted on the provider's side.
    const accepted = await h.client.postClearingAdjustment(
      {
        idempotencyKey: `recon:breb-inbound:2026-11-27:missing_in_our_books:${ptid}:accept_provider`,
        clearing: 'breb-inbound',
        deltaCents: -77_700n,
        reason: 'the network settled it; we have no record',
        movement,
        caseId: 'exc_break',
      },
      { requestId: randomUUID() },
    );
    expect(await balanceOf('breb_settlement')).toBe(settlement - 77_700n);
    // The key goes live; the network's retry is booked by its owner (collect-key), naming the movement.
    const booked = await h.client.recordInflow(
      ledgerV1.RecordInflowRequest.fromPartial({
        idempotencyKey: `collectkey:payment:${ptid}`,
        source: ledgerV1.InflowSource.BREB,
        grossCents: 77_700n,
        assign: false,
        externalMovement: movement,
      }),
      ctx(co),
    );
    expect(booked.replayed).toBe(false);
    // Once: the accepted adjustment was undone by the owner's booking.
    expect(await balanceOf('breb_settlement')).toBe(settlement - 77_700n);
    const rows = await h.ledger.db.query<{ kind: string; undoes: boolean; key: string }>(
      'select kind, reverses_posting_id is not null as undoes, idempotency_key as key from ledger.postings where corrects = ? order by created_at, id',
      [movement],
    );
    expect(rows.map((r) => [r.kind, r.undoes])).toEqual([
      ['recon_adjustment', false],
      ['recon_adjustment', true],
    ]);
    expect(rows[1]!.key).toMatch(/:superseded$/);
    // The reconciliation's own undo of the same adjustment (a later run matched it) answers that posting: nothing more moves.
    const again = await h.client.reverseCorrection(
      { idempotencyKey: `${rows[0]!.key}:reversed`, correctionKey: rows[0]!.key, reason: 'matched' },
      { requestId: randomUUID() },
    );
    expect(again.replayed).toBe(true);
    expect(await balanceOf('breb_settlement')).toBe(settlement - 77_700n);
    expect(accepted.postingId).not.toBe(again.postingId);
    // A replay of the owner's booking changes nothing.
    const replay = await h.client.recordInflow(
      ledgerV1.RecordInflowRequest.fromPartial({
        idempotencyKey: `collectkey:payment:${ptid}`,
        source: ledgerV1.InflowSource.BREB,
        grossCents: 77_700n,
        assign: false,
        externalMovement: movement,
      }),
      ctx(co),
    );
    expect(replay.replayed).toBe(true);
    expect(await balanceOf('breb_settlement')).toBe(settlement - 77_700n);
  });

  it("issue 35: two undoings of one correction racing (a later run and its owner's booking) undo it once; both answer that posting", async () => {
    const co = h.newCompany();
    await h.api.open(co);
    const movement = `breb:our:${randomUUID()}`;
    const key = `exception:${randomUUID()}:write_off`;
    const clearing = await balanceOf('rail_clearing:BREB');
    await post(co, { idempotencyKey: key, movement, caseId: 'exc_owner' });
    const undos = await Promise.all(
      ['reversed', 'superseded', 'again'].map((suffix) =>
        h.client.reverseCorrection({ idempotencyKey: `${key}:${suffix}`, correctionKey: key, reason: suffix }, { requestId: randomUUID() }),
      ),
    );
    expect(new Set(undos.map((u) => u.postingId)).size).toBe(1);
    expect(undos.filter((u) => !u.replayed)).toHaveLength(1);
    expect(await balanceOf('rail_clearing:BREB')).toBe(clearing);
    expect(
      (
        await h.ledger.db.query<{ n: number }>('select count(*)::int as n from ledger.postings where reverses_posting_id is not null and corrects = ?', [
          movement,
        ])
      )[0]!.n,
    ).toBe(1);
  });

  it('requires the movement and the case of a correction', async () => {
    const co = h.newCompany();
    expect((await failure(post(co, { movement: '' }))).code).toBe('INVALID_REQUEST');
    expect((await failure(post(co, { movement: 'nowhere:x' }))).code).toBe('INVALID_REQUEST');
    expect((await failure(post(co, { caseId: '' }))).code).toBe('INVALID_REQUEST');
  });

  it('refuses bad input', async () => {
    const co = h.newCompany();
    expect((await failure(post(co, { amount: 0n }))).code).toBe('INVALID_REQUEST');
    expect((await failure(post(co, { type: ledgerV1.CorrectionType.UNSPECIFIED }))).code).toBe('INVALID_REQUEST');
    expect((await failure(post(co, { reason: '' }))).code).toBe('INVALID_REQUEST');
  });
});
