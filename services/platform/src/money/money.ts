/** Money is bigint centavos end to end (habit 3); these are the only conversions. */

/** round_half_up(numerator / denominator) for non-negative values, exact on bigint. */
export function divRoundHalfUp(numerator: bigint, denominator: bigint): bigint {
  if (denominator <= 0n) throw new RangeError('denominator must be positive');
  if (numerator < 0n) throw new RangeError('numerator must be non-negative');
  return (numerator * 2n + denominator) / (denominator * 2n);
}

export const MAX_SAFE_CENTS = BigInt(Number.MAX_SAFE_INTEGER);

/** A JSON number that is a safe non-negative integer → bigint; anything else → null. */
export function centsFromJson(value: unknown): bigint | null {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) return null;
  return BigInt(value);
}

/** bigint → JSON number, for the fields the reference types as numbers (always < 2^53 by the caps). */
export function centsToNumber(value: bigint): number {
  if (value > MAX_SAFE_CENTS || value < -MAX_SAFE_CENTS) throw new RangeError('amount exceeds the safe integer range');
  return Number(value);
}

/** bigint from a Postgres bigint column (MikroORM returns them as strings). */
export function centsFromDb(value: unknown): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number') return BigInt(value);
  if (typeof value === 'string' && /^-?\d+$/.test(value)) return BigInt(value);
  throw new TypeError(`not an integer amount: ${String(value)}`);
}

/** es-CO display: 123456789n centavos → "$ 1.234.567,89". */
export function formatCop(cents: bigint): string {
  const negative = cents < 0n;
  const abs = negative ? -cents : cents;
  const pesos = abs / 100n;
  const frac = (abs % 100n).toString().padStart(2, '0');
  // Grouped by hand: Intl's es-CO output differs between ICU versions (no grouping under 10.000).
  const intPart = pesos.toString().replace(/\B(?=(\d{3})+(?!\d))/g, '.');
  return `${negative ? '-' : ''}$ ${intPart},${frac}`;
}
