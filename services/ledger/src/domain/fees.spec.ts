import { computeFees, feeBreakdownProblems, maxTransferAmount, totalCost, ZERO_FEE_SCHEDULE } from './fees.js';
import { divRoundHalfUp } from './money.js';
import { RAIL_CAPS } from './rails.js';

describe('divRoundHalfUp', () => {
  it.each([
    [0n, 10n, 0n],
    [4n, 10n, 0n],
    [5n, 10n, 1n],
    [6n, 10n, 1n],
    [14n, 10n, 1n],
    [15n, 10n, 2n],
    [25n, 10n, 3n],
    [5_000n, 10_000n, 1n],
    [4_999n, 10_000n, 0n],
    [10n ** 30n + 5n, 10n, 10n ** 29n + 1n],
  ])('%s / %s → %s (halves go up)', (n, d, q) => {
    expect(divRoundHalfUp(n, d)).toBe(q);
  });
  it('refuses a negative numerator and a non-positive denominator', () => {
    expect(() => divRoundHalfUp(-1n, 10n)).toThrow(RangeError);
    expect(() => divRoundHalfUp(1n, 0n)).toThrow(RangeError);
  });
});

describe('computeFees (CONTRACT §3)', () => {
  it('variable fee rounds half up on bps of the gross amount', () => {
    // 1 bps of 5,000 = 0.5 → 1; of 4,999 = 0.4999 → 0.
    expect(computeFees({ fixedFeeCents: 0n, variableBps: 1 }, 5_000n, false).variableFee).toBe(1n);
    expect(computeFees({ fixedFeeCents: 0n, variableBps: 1 }, 4_999n, false).variableFee).toBe(0n);
    // 50 bps of 12,345 = 61.725 → 62.
    expect(computeFees({ fixedFeeCents: 500n, variableBps: 50 }, 12_345n, false)).toEqual({
      fixedFee: 500n,
      variableFee: 62n,
      subtotalFee: 562n,
      ivaApplicable: false,
      ivaAmount: 0n,
      totalCharged: 562n,
    });
  });

  it('IVA is 19% of the subtotal, rounded half up, only when applicable', () => {
    // 50 * 19 / 100 = 9.5 → 10; 49 * 19 / 100 = 9.31 → 9; 150 → 28.5 → 29.
    expect(computeFees({ fixedFeeCents: 50n, variableBps: 0 }, 1_000n, true).ivaAmount).toBe(10n);
    expect(computeFees({ fixedFeeCents: 49n, variableBps: 0 }, 1_000n, true).ivaAmount).toBe(9n);
    expect(computeFees({ fixedFeeCents: 150n, variableBps: 0 }, 1_000n, true)).toMatchObject({ ivaAmount: 29n, totalCharged: 179n });
    expect(computeFees({ fixedFeeCents: 150n, variableBps: 0 }, 1_000n, false)).toMatchObject({ ivaAmount: 0n, totalCharged: 150n });
  });

  it('a zero schedule charges nothing, and 10000 bps is the whole amount', () => {
    expect(computeFees(ZERO_FEE_SCHEDULE, 123_456n, true).totalCharged).toBe(0n);
    expect(computeFees({ fixedFeeCents: 0n, variableBps: 10_000 }, 777n, false).variableFee).toBe(777n);
  });

  it('works beyond 2^53 without losing a centavo', () => {
    const big = 2n ** 60n + 1n;
    expect(computeFees({ fixedFeeCents: 0n, variableBps: 5_000 }, big, false).variableFee).toBe(2n ** 59n + 1n);
  });
});

describe('feeBreakdownProblems', () => {
  const ok = { fixedFee: 100n, variableFee: 5n, subtotalFee: 105n, ivaApplicable: true, ivaAmount: 20n, totalCharged: 125n };
  it('accepts a consistent breakdown', () => expect(feeBreakdownProblems(ok)).toEqual([]));
  it('names every inconsistency', () => {
    expect(feeBreakdownProblems({ ...ok, subtotalFee: 104n }).map((p) => p.field)).toEqual(['subtotalFee', 'totalCharged']);
    expect(feeBreakdownProblems({ ...ok, totalCharged: 124n }).map((p) => p.field)).toEqual(['totalCharged']);
    expect(feeBreakdownProblems({ ...ok, ivaApplicable: false }).map((p) => p.field)).toEqual(['ivaAmount']);
    expect(feeBreakdownProblems({ ...ok, fixedFee: -1n, variableFee: 106n }).map((p) => p.field)).toEqual(['fixedFee']);
  });
});

describe('maxTransferAmount (CONTRACT §3)', () => {
  const brute = (available: bigint, s: { fixedFeeCents: bigint; variableBps: number }, iva: boolean) => {
    let a = available;
    while (a > 0n && totalCost(s, a, iva) > available) a--;
    return a;
  };

  it('is the available balance when there is no fee', () => {
    expect(maxTransferAmount(1_000_000n, ZERO_FEE_SCHEDULE, true, 'BREB')).toBe(1_000_000n);
  });

  it('is the largest amount whose amount + fee + IVA fits, for many balances and schedules', () => {
    const schedules = [
      { fixedFeeCents: 500n, variableBps: 50 },
      { fixedFeeCents: 0n, variableBps: 1 },
      { fixedFeeCents: 333n, variableBps: 9_999 },
    ];
    for (const s of schedules) {
      for (const available of [100n, 101n, 999n, 1_000n, 1_019n, 5_000n, 12_345n, 99_999n]) {
        for (const iva of [true, false]) {
          const expected = brute(available, s, iva);
          expect({ s, available, iva, max: maxTransferAmount(available, s, iva, 'BREB') }).toEqual({ s, available, iva, max: expected < 100n ? 0n : expected });
        }
      }
    }
  });

  it('the next centavo would not fit', () => {
    const s = { fixedFeeCents: 500n, variableBps: 50 };
    const max = maxTransferAmount(1_000_000n, s, true, 'BREB');
    expect(totalCost(s, max, true)).toBeLessThanOrEqual(1_000_000n);
    expect(totalCost(s, max + 1n, true)).toBeGreaterThan(1_000_000n);
  });

  it('is capped at the rail cap', () => {
    expect(maxTransferAmount(10n ** 12n, ZERO_FEE_SCHEDULE, false, 'BREB')).toBe(RAIL_CAPS.BREB);
    expect(maxTransferAmount(10n ** 13n, ZERO_FEE_SCHEDULE, false, 'ACH')).toBe(RAIL_CAPS.ACH);
    expect(maxTransferAmount(RAIL_CAPS.BREB + 1_000n, { fixedFeeCents: 1_000n, variableBps: 0 }, false, 'BREB')).toBe(RAIL_CAPS.BREB);
    expect(maxTransferAmount(RAIL_CAPS.BREB + 999n, { fixedFeeCents: 1_000n, variableBps: 0 }, false, 'BREB')).toBe(RAIL_CAPS.BREB - 1n);
  });

  it('is 0 under the minimum of 100 centavos, with or without fees', () => {
    expect(maxTransferAmount(99n, ZERO_FEE_SCHEDULE, false, 'BREB')).toBe(0n);
    expect(maxTransferAmount(0n, ZERO_FEE_SCHEDULE, false, 'BREB')).toBe(0n);
    expect(maxTransferAmount(-50n, ZERO_FEE_SCHEDULE, false, 'ACH')).toBe(0n);
    expect(maxTransferAmount(100n, ZERO_FEE_SCHEDULE, false, 'BREB')).toBe(100n);
    // 150 available, 60 fixed fee: only 90 fits → under the minimum → 0.
    expect(maxTransferAmount(150n, { fixedFeeCents: 60n, variableBps: 0 }, false, 'BREB')).toBe(0n);
    // The fixed fee alone exceeds the balance.
    expect(maxTransferAmount(500n, { fixedFeeCents: 600n, variableBps: 0 }, true, 'BREB')).toBe(0n);
    // IVA counts: 100 + 20 fee + 4 IVA = 124 fits; 123 does not.
    expect(maxTransferAmount(124n, { fixedFeeCents: 20n, variableBps: 0 }, true, 'BREB')).toBe(100n);
    expect(maxTransferAmount(123n, { fixedFeeCents: 20n, variableBps: 0 }, true, 'BREB')).toBe(0n);
    expect(maxTransferAmount(123n, { fixedFeeCents: 20n, variableBps: 0 }, false, 'BREB')).toBe(103n);
  });
});
