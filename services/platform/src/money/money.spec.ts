import { centsFromDb, centsFromJson, centsToNumber, divRoundHalfUp, formatCop } from './money.js';

describe('money', () => {
  it('rounds half up exactly on bigint', () => {
    expect(divRoundHalfUp(5n, 10n)).toBe(1n); // 0.5 -> 1
    expect(divRoundHalfUp(4n, 10n)).toBe(0n); // 0.4 -> 0
    expect(divRoundHalfUp(15n, 10n)).toBe(2n); // 1.5 -> 2
    expect(divRoundHalfUp(25n, 10n)).toBe(3n); // 2.5 -> 3 (not banker's)
    expect(divRoundHalfUp(0n, 7n)).toBe(0n);
    // 19% IVA of 1 centavo fee = 0.19 -> 0; of 3 = 0.57 -> 1
    expect(divRoundHalfUp(1n * 19n, 100n)).toBe(0n);
    expect(divRoundHalfUp(3n * 19n, 100n)).toBe(1n);
    // no precision lost far beyond 2^53
    expect(divRoundHalfUp(2n ** 80n + 5n, 10n)).toBe(2n ** 80n / 10n + 1n);
  });

  it('refuses negative numerators and non-positive denominators', () => {
    expect(() => divRoundHalfUp(-1n, 10n)).toThrow(RangeError);
    expect(() => divRoundHalfUp(1n, 0n)).toThrow(RangeError);
  });

  it('accepts only safe non-negative JSON integers as cents', () => {
    expect(centsFromJson(100)).toBe(100n);
    expect(centsFromJson(0)).toBe(0n);
    expect(centsFromJson(1.5)).toBeNull();
    expect(centsFromJson('100')).toBeNull();
    expect(centsFromJson(-1)).toBeNull();
    expect(centsFromJson(2 ** 53)).toBeNull();
    expect(centsFromJson(Number.NaN)).toBeNull();
  });

  it('converts database values and guards the number range', () => {
    expect(centsFromDb('-42')).toBe(-42n);
    expect(centsFromDb(7)).toBe(7n);
    expect(() => centsFromDb('1.5')).toThrow(TypeError);
    expect(centsToNumber(123n)).toBe(123);
    expect(() => centsToNumber(2n ** 60n)).toThrow(RangeError);
  });

  it('formats COP the es-CO way', () => {
    expect(formatCop(123456789n)).toBe('$ 1.234.567,89');
    expect(formatCop(5n)).toBe('$ 0,05');
    expect(formatCop(100000n)).toBe('$ 1.000,00');
    expect(formatCop(-250n)).toBe('-$ 2,50');
  });
});
