import { canonicalDestination } from './destination-fingerprint.js';

describe('canonicalDestination', () => {
  it('ACH: bank code and account number, leading zeros and formatting dropped; the account type is not part of it', () => {
    const a = canonicalDestination({ kind: 'ACH', bankAchCode: '1007', accountNumber: '12345678901' });
    expect(a).toBe('ach/v1:1007:12345678901');
    expect(canonicalDestination({ kind: 'ACH', bankAchCode: '1007', accountNumber: '0012345678901' })).toBe(a);
    expect(canonicalDestination({ kind: 'ACH', bankAchCode: ' 1007', accountNumber: '123-4567 8901' })).toBe(a);
    expect(canonicalDestination({ kind: 'ACH', bankAchCode: '1051', accountNumber: '12345678901' })).not.toBe(a);
    expect(canonicalDestination({ kind: 'ACH', bankAchCode: '1007', accountNumber: '123456789012' })).not.toBe(a);
    expect(canonicalDestination({ kind: 'ACH', bankAchCode: '1007', accountNumber: '0000' })).toBe('ach/v1:1007:0');
  });

  it('Bre-B: the resolved key, case and a leading @ aside; never equal to an ACH form', () => {
    expect(canonicalDestination({ kind: 'BREB', keyValue: '@MiAlias ' })).toBe('breb-key/v1:mialias');
    expect(canonicalDestination({ kind: 'BREB', keyValue: 'Ana@Example.com' })).toBe('breb-key/v1:ana@example.com');
    expect(canonicalDestination({ kind: 'BREB', keyValue: '3001234567' })).not.toBe(
      canonicalDestination({ kind: 'ACH', bankAchCode: '', accountNumber: '3001234567' }),
    );
  });
});
