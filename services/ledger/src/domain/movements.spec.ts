import { creditAmounts, feeChargeAmounts, inflowAmounts, isNonMoneyTransition, outflowAmounts } from './movements.js';

describe('movement rules', () => {
  it('allows only AWAITING_APPROVAL → EXECUTING → PENDING as non-money status changes', () => {
    expect(isNonMoneyTransition('AWAITING_APPROVAL', 'EXECUTING')).toBe(true);
    expect(isNonMoneyTransition('EXECUTING', 'PENDING')).toBe(true);
    expect(isNonMoneyTransition('AWAITING_APPROVAL', 'PENDING')).toBe(false);
    expect(isNonMoneyTransition('PENDING', 'COMPLETED')).toBe(false);
    expect(isNonMoneyTransition('EXECUTING', 'AWAITING_APPROVAL')).toBe(false);
  });

  it('amounts per type: outflow net = amount − fee; inflow net = gross − fee − IVA', () => {
    expect(outflowAmounts(100_000n, 550n, 105n)).toEqual({ amount: 100_000n, totalFee: 550n, ivaAmount: 105n, netAmount: 99_450n });
    expect(inflowAmounts(100_000n, 1_000n, 190n)).toEqual({ amount: 100_000n, totalFee: 1_000n, ivaAmount: 190n, netAmount: 98_810n });
    expect(creditAmounts(5n)).toEqual({ amount: 5n, totalFee: 0n, ivaAmount: 0n, netAmount: 5n });
    expect(feeChargeAmounts(500n, 95n)).toEqual({ amount: 595n, totalFee: 500n, ivaAmount: 95n, netAmount: 595n });
  });
});
