import { feeExceedsAmount, isDepositId, netOf, newDepositId, paidInTime, payerDocument, payerFullName, statusFilter, type FeeBreakdown } from './deposit.js';

const fee = (subtotal: bigint, iva: bigint): FeeBreakdown => ({
  fixedFee: subtotal,
  variableFee: 0n,
  subtotalFee: subtotal,
  ivaApplicable: iva > 0n,
  ivaAmount: iva,
  totalCharged: subtotal + iva,
});

describe('deposit rules', () => {
  it('ids are dep_ + 24 lowercase alphanumerics and unique', () => {
    const ids = new Set(Array.from({ length: 500 }, () => newDepositId()));
    expect(ids.size).toBe(500);
    for (const id of ids) expect(id).toMatch(/^dep_[a-z0-9]{24}$/);
    expect(isDepositId('dep_ABC')).toBe(false);
    expect(isDepositId("dep_aaaaaaaaaaaaaaaaaaaaaaa'")).toBe(false);
  });

  it('fee + IVA at or above the amount is refused; net = gross − fee − IVA', () => {
    expect(feeExceedsAmount(1_190n, fee(1_000n, 190n))).toBe(true);
    expect(feeExceedsAmount(1_000n, fee(1_000n, 190n))).toBe(true);
    expect(feeExceedsAmount(1_191n, fee(1_000n, 190n))).toBe(false);
    expect(netOf(100_000n, fee(1_000n, 190n))).toBe(98_810n);
  });

  it('formats the payer and reads the status filter (PAID = ASSIGNED)', () => {
    expect(payerDocument(1, '1020304050')).toBe('CC 1020304050');
    expect(payerDocument(8, '900123456')).toBe('NIT 900123456');
    expect(payerDocument(null, null)).toBeNull();
    expect(payerFullName('Ana María', 'Pérez')).toBe('Ana María Pérez');
    expect(statusFilter('PAID')).toBe('ASSIGNED');
    expect(statusFilter('expired')).toBe('EXPIRED');
    expect(statusFilter('NOPE')).toBeNull();
  });

  it('a payment counts only up to expiry + grace', () => {
    const exp = new Date('2026-01-01T00:00:00Z');
    expect(paidInTime(exp, new Date('2026-01-01T00:00:30Z'), 60)).toBe(true);
    expect(paidInTime(exp, new Date('2026-01-01T00:01:01Z'), 60)).toBe(false);
    expect(paidInTime(exp, new Date('2026-01-01T00:00:01Z'), 0)).toBe(false);
  });
});
