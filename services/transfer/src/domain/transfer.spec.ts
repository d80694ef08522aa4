import { publicStatus, retryDelayMs, totalDebit } from './transfer.js';

describe('transfer state rules', () => {
  it('users see PENDING until the rail decides', () => {
    expect(['RECEIVED', 'RESERVED', 'DISPATCHED'].map((s) => publicStatus(s as never))).toEqual(['PENDING', 'PENDING', 'PENDING']);
    expect(publicStatus('COMPLETED')).toBe('COMPLETED');
    expect(publicStatus('FAILED')).toBe('FAILED');
  });

  it('multi-signature states are shown as they are; a refused send reads FAILED', () => {
    expect(publicStatus('AWAITING_APPROVAL')).toBe('AWAITING_APPROVAL');
    expect(publicStatus('EXECUTING')).toBe('EXECUTING');
    expect(publicStatus('EXPIRED')).toBe('EXPIRED');
    expect(publicStatus('REJECTED')).toBe('FAILED');
  });

  it('the wallet is debited amount + fee + IVA', () => {
    expect(
      totalDebit({ amount: 1_000n, fee: { fixedFee: 10n, variableFee: 1n, subtotalFee: 11n, ivaApplicable: true, ivaAmount: 2n, totalCharged: 13n } }),
    ).toBe(1_013n);
  });

  it('dispatch retries back off exponentially up to a cap', () => {
    expect([1, 2, 3, 4, 10].map((n) => retryDelayMs(n, 1_000, 60_000))).toEqual([1_000, 2_000, 4_000, 8_000, 60_000]);
  });
});
