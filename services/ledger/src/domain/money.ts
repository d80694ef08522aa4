/**
 * Money is bigint centavos end to end (habit 3). The same rule as @wallet/platform's
 * divRoundHalfUp, restated here so the domain imports nothing with I/O (habit 1).
 */

/** round_half_up(numerator / denominator) for non-negative values, exact on bigint. */
export function divRoundHalfUp(numerator: bigint, denominator: bigint): bigint {
  if (denominator <= 0n) throw new RangeError('denominator must be positive');
  if (numerator < 0n) throw new RangeError('numerator must be non-negative');
  return (numerator * 2n + denominator) / (denominator * 2n);
}

/** Largest amount a JSON client can send as a number (2^53 - 1). */
export const MAX_SAFE_CENTS = 9_007_199_254_740_991n;

export function minBigint(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}
