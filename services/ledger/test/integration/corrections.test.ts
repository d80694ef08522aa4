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
    reason: 'exc_1: the rail paid after the release', ...r,
  }), ctx(co));
  const balanceOf = async (account: string) => BigInt((await h.ledger.db.query<{ s: string }>(
    'select coalesce(sum(amount), 0)::text as s from ledger.entries where account = ?', [account]))[0]!.s);

  it('writes a payout off against operational losses, once per key; no company wallet moves', async () => {
    const co = h.newCompany();
    await h.api.open(co);
    await h.api.credit(co, { rail: Rail.BREB, amountCents: 5_000n });
    const key = `exception:${randomUUID()}:write_off`;
    const losses = await balanceOf('operational_losses');
    const clearing = await balanceOf('rail_clearing:BREB');
    const r = await post(co, { idempotencyKey: key });
    expect(r.replayed).toBe(false);
    expect((await post(co, { idempotencyKey: key })).replayed).toBe(true);
    expect(await balanceOf('operational_losses')).toBe(losses - 10_000n);
    expect(await balanceOf('rail_clearing:BREB')).toBe(clearing + 10_000n);
    expect(walletOf((await h.api.balances(co)).wallets, Rail.BREB)).toMatchObject({ availableCents: 5_000n, pendingOutCents: 0n });
    // The same key with another amount is a conflict, not a second entry.
    expect((await failure(post(co, { idempotencyKey: key, amount: 1n }))).code).toBe('REFERENCE_CONFLICT');
  });

  it('refuses bad input', async () => {
    const co = h.newCompany();
    expect((await failure(post(co, { amount: 0n }))).code).toBe('INVALID_REQUEST');
    expect((await failure(post(co, { type: ledgerV1.CorrectionType.UNSPECIFIED }))).code).toBe('INVALID_REQUEST');
    expect((await failure(post(co, { reason: '' }))).code).toBe('INVALID_REQUEST');
  });
});
