import { divRoundHalfUp, minBigint } from './money.js';
import { MIN_TRANSFER_AMOUNT, RAIL_CAPS, type WalletRail } from './rails.js';

/** A fee configuration in effect for one company and operation (CONTRACT §3). */
export interface FeeSchedule {
  fixedFeeCents: bigint;
  variableBps: number;
}

export const ZERO_FEE_SCHEDULE: FeeSchedule = Object.freeze({ fixedFeeCents: 0n, variableBps: 0 });

export interface FeeBreakdown {
  fixedFee: bigint;
  variableFee: bigint;
  subtotalFee: bigint;
  ivaApplicable: boolean;
  ivaAmount: bigint;
  totalCharged: bigint;
}

export const IVA_PERCENT = 19n;
export const MAX_BPS = 10_000;

/**
 * variableFee = round_half_up(amount * bps / 10000); subtotal = fixed + variable;
 * iva = round_half_up(subtotal * 19 / 100) when the company is in the common regime.
 */
export function computeFees(schedule: FeeSchedule, amount: bigint, ivaApplicable: boolean): FeeBreakdown {
  if (amount < 0n) throw new RangeError('amount must be non-negative');
  const fixedFee = schedule.fixedFeeCents;
  const variableFee = divRoundHalfUp(amount * BigInt(schedule.variableBps), 10_000n);
  const subtotalFee = fixedFee + variableFee;
  const ivaAmount = ivaApplicable ? divRoundHalfUp(subtotalFee * IVA_PERCENT, 100n) : 0n;
  return { fixedFee, variableFee, subtotalFee, ivaApplicable, ivaAmount, totalCharged: subtotalFee + ivaAmount };
}

/** What is wrong with a fee breakdown a caller supplies (empty when it is consistent). */
export function feeBreakdownProblems(fee: FeeBreakdown): Array<{ field: keyof FeeBreakdown; message: string }> {
  const out: Array<{ field: keyof FeeBreakdown; message: string }> = [];
  for (const f of ['fixedFee', 'variableFee', 'subtotalFee', 'ivaAmount', 'totalCharged'] as const) {
    if (fee[f] < 0n) out.push({ field: f, message: 'must not be negative' });
  }
  if (fee.subtotalFee !== fee.fixedFee + fee.variableFee) out.push({ field: 'subtotalFee', message: 'must equal fixedFee + variableFee' });
  if (fee.totalCharged !== fee.subtotalFee + fee.ivaAmount) out.push({ field: 'totalCharged', message: 'must equal subtotalFee + ivaAmount' });
  if (!fee.ivaApplicable && fee.ivaAmount !== 0n) out.push({ field: 'ivaAmount', message: 'must be 0 when ivaApplicable is false' });
  return out;
}

export function isZeroFee(fee: FeeBreakdown): boolean {
  return fee.fixedFee === 0n && fee.variableFee === 0n && fee.subtotalFee === 0n && fee.ivaAmount === 0n && fee.totalCharged === 0n;
}

/** amount + fee + IVA: what a send of `amount` debits. */
export function totalCost(schedule: FeeSchedule, amount: bigint, ivaApplicable: boolean): bigint {
  return amount + computeFees(schedule, amount, ivaApplicable).totalCharged;
}

/**
 * The largest gross amount whose amount + fee + IVA fits `available`, capped at the rail's cap;
 * 0 when that is under the minimum (CONTRACT §3). The cost is strictly increasing in the amount
 * (the fee never decreases), so a binary search over [0, min(available, cap)] finds it exactly.
 */
export function maxTransferAmount(available: bigint, schedule: FeeSchedule, ivaApplicable: boolean, rail: WalletRail): bigint {
  if (available < MIN_TRANSFER_AMOUNT) return 0n;
  let lo = 0n;
  let hi = minBigint(available, RAIL_CAPS[rail]);
  if (totalCost(schedule, lo, ivaApplicable) > available) return 0n;
  while (lo < hi) {
    const mid = (lo + hi + 1n) / 2n;
    if (totalCost(schedule, mid, ivaApplicable) <= available) lo = mid;
    else hi = mid - 1n;
  }
  return lo < MIN_TRANSFER_AMOUNT ? 0n : lo;
}
