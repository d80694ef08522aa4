import { randomUUID } from 'node:crypto';
import { ledgerV1 } from '@wallet/proto';
import { Rail, expectLedgerConsistent, failure, startHarness, walletOf, type Harness } from './harness.js';

const ctx = (companyId: string) => ({ companyId, requestId: randomUUID() });

/** PostCorrection: an operator's correcting entry for a money exception. */
describe('PostCorrection', () => {
  let h: Harness;
  beforeAll(async () => { h = await startHarness(); });
  afterAll(async () => { await h?.stop(); });
  afterEach(async () => { await expectLedgerConsistent(h); });

  const post = (co: string, r: Partial<ledgerV1.PostCorrectionRequest>) => h.client.postCorrection(ledgerV1.PostCorrectionRequest.fromPartial({
    idempotencyKey: `exception:${randomUUID()}:write_off`, type: ledgerV1.CorrectionType.WRITE_OFF_PAYOUT, rail: Rail.BREB, amount: 10_000n,
    reason: 'exc_1: the rail paid after the release', movement: `breb:brb_${randomUUID()}`, caseId: 'exc_1', ...r,
  }), ctx(co));
  const balanceOf = async (account: string) => BigInt((await h.ledger.db.query<{ s: string }>(
    'select coalesce(sum(amount), 0)::text as s from ledger.entries where account = ?', [account]))[0]!.s);

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
    const adj = await failure(h.client.postClearingAdjustment({ idempotencyKey: `recon:${randomUUID()}`, clearing: 'breb', deltaCents: 10_000n, reason: 'x', movement, caseId: 'exc_break' }, { requestId: randomUUID() }));
    expect(adj.code).toBe('MOVEMENT_ALREADY_CORRECTED');
    expect(await balanceOf('rail_clearing:BREB')).toBe(clearing + 10_000n);
    // Concurrent cases for a fresh movement: exactly one posts.
    const fresh = `ach:ach_${randomUUID()}`;
    const raced = await Promise.allSettled([1, 2, 3, 4].map((i) => post(co, { idempotencyKey: `exception:${randomUUID()}:write_off`, rail: Rail.ACH, movement: fresh, caseId: `exc_${i}` })));
    expect(raced.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of raced) if (r.status === 'rejected') expect((r.reason as { code: string }).code).toBe('MOVEMENT_ALREADY_CORRECTED');
    // Undone (ReverseCorrection), the movement holds no live correction: the entries net to zero, once.
    const key = (await h.ledger.db.query<{ k: string }>('select idempotency_key as k from ledger.corrections where posting_id = ?::uuid', [first.postingId]))[0]!.k;
    const undo = await h.client.reverseCorrection({ idempotencyKey: `${key}:reversed`, correctionKey: key, reason: 'the report no longer shows it' }, { requestId: randomUUID() });
    expect(undo.replayed).toBe(false);
    expect((await h.client.reverseCorrection({ idempotencyKey: `${key}:again`, correctionKey: key, reason: "twice" }, { requestId: randomUUID() })).postingId).toBe(undo.postingId);
    expect(await balanceOf('rail_clearing:BREB')).toBe(clearing);
    const again = await post(co, { idempotencyKey: `exception:${randomUUID()}:write_off`, movement, caseId: 'exc_break' });
    expect(again.replayed).toBe(false);
    expect(await balanceOf('rail_clearing:BREB')).toBe(clearing + 10_000n);
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
