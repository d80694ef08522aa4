import type { AppError } from '@wallet/platform';
import { validateSend, type SendInput } from './send-input.js';

const breb: SendInput = {
  amount: 10_000n,
  brebKey: { type: 'PHONE', value: '3001234567' },
  targetName: 'ANA PEREZ',
  targetDocument: '1020304050',
  requestHash: 'h',
};
const ach: SendInput = {
  amount: 10_000n,
  bankAccount: {
    bankId: 1,
    accountTypeId: 20,
    accountNumber: '12345678901',
    documentTypeId: 1,
    documentNumber: '1020304050',
    holderFirstName: 'Ana',
    holderLastName: 'Pérez',
    bankName: 'Bancolombia',
    bankAchCode: '1007',
  },
  requestHash: 'h',
};

function fields(input: SendInput): string[] {
  try {
    validateSend(input);
  } catch (err) {
    expect((err as AppError).code).toBe('INVALID_REQUEST');
    return ((err as AppError).details!.fields as Array<{ path: string }>).map((f) => f.path);
  }
  return [];
}

describe('send schema checks (400 INVALID_REQUEST)', () => {
  it('accepts a BREB send, an ACH send and an anchor-handle send', () => {
    expect(validateSend(breb)).toMatchObject({ rail: 'BREB', destination: { kind: 'BREB_KEY', keyType: 'PHONE' }, requestHash: 'h' });
    expect(validateSend(ach)).toMatchObject({ rail: 'ACH', targetName: null, destination: { kind: 'ACH' } });
    const { brebKey: _omit, ...rest } = breb;
    expect(validateSend({ ...rest, targetAnchorHandle: 'anh_abc123' })).toMatchObject({ rail: 'BREB', destination: { kind: 'BREB_ANCHOR' } });
  });

  it('names every bad field', () => {
    expect(fields({ ...breb, amount: 99n })).toEqual(['amount']);
    expect(fields({ ...breb, amount: 2n ** 53n })).toEqual(['amount']);
    expect(fields({ ...breb, bankAccount: ach.bankAccount })).toEqual(['destination']);
    expect(fields({ amount: 1_000n, targetName: 'X' })).toEqual(['destination']);
    expect(fields({ ...breb, targetAnchorHandle: 'anh_1' })).toEqual(['targetAnchorHandle']);
    expect(fields({ ...breb, brebKey: { type: 'IBAN', value: 'ab' } })).toEqual(['destination.brebKey.type', 'destination.brebKey.value']);
    expect(fields({ ...breb, targetName: '' })).toEqual(['targetName']);
    expect(fields({ ...breb, reference: 'r'.repeat(101), description: 'd'.repeat(256) })).toEqual(['reference', 'description']);
    expect(fields({ ...breb, targetDocument: 'x!' })).toEqual(['targetDocument']);
    expect(
      fields({
        ...ach,
        bankAccount: {
          ...ach.bankAccount!,
          bankId: 0,
          accountTypeId: 23,
          accountNumber: '12a',
          documentTypeId: 2,
          documentNumber: '1234',
          holderFirstName: ' ',
          holderLastName: 'x'.repeat(65),
        },
      }),
    ).toEqual([
      'destination.bankAccount.bankId',
      'destination.bankAccount.accountTypeId',
      'destination.bankAccount.accountNumber',
      'destination.bankAccount.documentTypeId',
      'destination.bankAccount.documentNumber',
      'destination.bankAccount.holderFirstName',
      'destination.bankAccount.holderLastName',
    ]);
  });

  it('a missing target document is not a schema problem (422 TARGET_DOCUMENT_REQUIRED comes later)', () => {
    expect(validateSend({ ...breb, targetDocument: undefined }).targetDocument).toBeNull();
    expect(validateSend({ ...breb, targetDocument: '  ' }).targetDocument).toBeNull();
  });

  it('without a gateway hash, one is computed from the fields that define the send', () => {
    const a = validateSend({ ...breb, requestHash: '' }).requestHash;
    expect(a).toMatch(/^svc:[0-9a-f]{64}$/);
    expect(validateSend({ ...breb, requestHash: '' }).requestHash).toBe(a);
    expect(validateSend({ ...breb, amount: 10_001n, requestHash: '' }).requestHash).not.toBe(a);
  });
});
