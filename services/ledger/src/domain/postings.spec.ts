import { Accounts } from './accounts.js';
import {
  clearingAdjustmentPosting,
  commitPosting,
  creditPosting,
  feeChargePosting,
  inflowPosting,
  releasePosting,
  reservePosting,
  sumEntries,
  unassignedInflowPosting,
  type PostingDraft,
} from './postings.js';

const co = '0b7e1c9a-0000-4000-8000-000000000001';

function expectBalanced(p: PostingDraft) {
  expect(sumEntries(p.entries)).toBe(0n);
  expect(p.entries.every((e) => e.amount !== 0n)).toBe(true);
}

describe('posting builders (LEDGER.md "Postings by event")', () => {
  const h = { amount: 100_000n, fee: 550n, iva: 105n };

  it('credit: funding −X, available +X', () => {
    const p = creditPosting(co, 'BREB', 4_242n);
    expectBalanced(p);
    expect(p.entries).toEqual([
      { account: 'funding', amount: -4_242n },
      { account: `wallet_available:${co}:BREB`, amount: 4_242n },
    ]);
    expect(p.wallet).toEqual({ companyId: co, rail: 'BREB', availableDelta: 4_242n, pendingOutDelta: 0n });
  });

  it('reserve: available −T, pending_out +T', () => {
    const p = reservePosting(co, 'ACH', h);
    expectBalanced(p);
    expect(p.wallet).toEqual({ companyId: co, rail: 'ACH', availableDelta: -100_655n, pendingOutDelta: 100_655n });
  });

  it('commit: pending_out −T, rail_clearing +amount, fee_revenue +fee, iva_payable +IVA', () => {
    const p = commitPosting(co, 'BREB', 'BREB_OUTFLOW', h);
    expectBalanced(p);
    expect(p.entries).toEqual([
      { account: Accounts.walletPendingOut(co, 'BREB'), amount: -100_655n },
      { account: 'rail_clearing:BREB', amount: 100_000n },
      { account: 'fee_revenue:BREB_OUTFLOW', amount: 550n },
      { account: 'iva_payable', amount: 105n },
    ]);
    expect(p.wallet).toMatchObject({ availableDelta: 0n, pendingOutDelta: -100_655n });
  });

  it('commit with no fee writes no zero lines', () => {
    const p = commitPosting(co, 'ACH', 'ACH_OUTFLOW', { amount: 5n, fee: 0n, iva: 0n });
    expect(p.entries.map((e) => e.account)).toEqual([Accounts.walletPendingOut(co, 'ACH'), 'rail_clearing:ACH']);
    expectBalanced(p);
  });

  it('release: pending_out −T, available +T', () => {
    const p = releasePosting(co, 'BREB', h);
    expectBalanced(p);
    expect(p.wallet).toMatchObject({ availableDelta: 100_655n, pendingOutDelta: -100_655n });
  });

  it('fee charge: available −(fee+IVA), fee_revenue +fee, iva_payable +IVA', () => {
    const p = feeChargePosting(co, 'BREB', 'ACH_OUTFLOW', 500n, 95n);
    expectBalanced(p);
    expect(p.wallet).toMatchObject({ availableDelta: -595n });
    expect(p.entries.find((e) => e.account === 'fee_revenue:ACH_OUTFLOW')?.amount).toBe(500n);
  });

  it('inflows: PSE lands in ACH, Bre-B in BREB, net of fee and IVA; unassigned touches no wallet', () => {
    const pse = inflowPosting(co, 'PSE', 100_000n, 1_000n, 190n);
    expectBalanced(pse);
    expect(pse.entries[0]).toEqual({ account: 'pse_settlement', amount: -100_000n });
    expect(pse.wallet).toEqual({ companyId: co, rail: 'ACH', availableDelta: 98_810n, pendingOutDelta: 0n });
    const breb = inflowPosting(co, 'BREB', 500n, 0n, 0n);
    expectBalanced(breb);
    expect(breb.entries).toEqual([
      { account: 'breb_settlement', amount: -500n },
      { account: `wallet_available:${co}:BREB`, amount: 500n },
    ]);
    const un = unassignedInflowPosting(700n);
    expectBalanced(un);
    expect(un.wallet).toBeNull();
    expect(un.entries).toEqual([
      { account: 'breb_settlement', amount: -700n },
      { account: 'unassigned_funds:BREB', amount: 700n },
    ]);
  });

  it('refuses amounts that cannot make a posting', () => {
    expect(() => creditPosting(co, 'BREB', 0n)).toThrow(RangeError);
    expect(() => reservePosting(co, 'BREB', { amount: -1n, fee: 0n, iva: 0n })).toThrow(RangeError);
    expect(() => inflowPosting(co, 'PSE', 100n, 90n, 10n)).toThrow(RangeError); // nothing left for the wallet
    expect(() => feeChargePosting(co, 'BREB', 'BREB_OUTFLOW', 0n, 0n)).toThrow(RangeError);
  });

  it('clearing adjustment: the clearing account +delta, its reconciliation_differences −delta, either sign; no wallet', () => {
    expect(clearingAdjustmentPosting('breb', 700n)).toEqual({
      kind: 'recon_adjustment',
      wallet: null,
      entries: [
        { account: 'rail_clearing:BREB', amount: 700n },
        { account: 'reconciliation_differences:rail_clearing:BREB', amount: -700n },
      ],
    });
    expect(clearingAdjustmentPosting('pse', -5n).entries).toEqual([
      { account: 'pse_settlement', amount: -5n },
      { account: 'reconciliation_differences:pse_settlement', amount: 5n },
    ]);
    expect(clearingAdjustmentPosting('breb-inbound', 1n).entries[0]!.account).toBe('breb_settlement');
    expect(clearingAdjustmentPosting('ach', -1n).entries[0]!.account).toBe('rail_clearing:ACH');
    expect(() => clearingAdjustmentPosting('ach', 0n)).toThrow(RangeError);
  });
});
