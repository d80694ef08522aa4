import { AppError } from '@wallet/platform';
import { ledgerV1 } from '@wallet/proto';
import { inMoveTerms, moveLedgerKey, moveRequestOf } from './move-request.js';

describe('a move as the ledger takes it', () => {
  it("the client's key as it is (the ledger keeps it per company and kind); a long one hashed to fit the ledger's 200; none: a fresh key each time", () => {
    expect(moveLedgerKey('fondeo-2026-11-29')).toBe('fondeo-2026-11-29');
    expect(moveLedgerKey('payout:abc:hold')).toBe('payout:abc:hold');
    const long = 'k'.repeat(255);
    expect(moveLedgerKey(long)).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(moveLedgerKey(long)).toBe(moveLedgerKey(long));
    expect(moveLedgerKey('k'.repeat(200))).toHaveLength(200);
    expect(moveLedgerKey('k'.repeat(201))).toMatch(/^sha256:/);
    expect(moveLedgerKey(undefined)).toMatch(/^auto:[0-9a-f-]{36}$/);
    expect(moveLedgerKey(undefined)).not.toBe(moveLedgerKey(undefined));
  });

  it('the body: rails as the proto names them, the amount as bigint, texts only when given', () => {
    expect(moveRequestOf({ from: 'ACH', to: 'BREB', amountCents: 150_000 }, 'k1')).toEqual({
      idempotencyKey: 'k1',
      fromRail: ledgerV1.Rail.ACH,
      toRail: ledgerV1.Rail.BREB,
      amountCents: 150_000n,
    });
    expect(moveRequestOf({ from: 'BREB', to: 'ACH', amountCents: 1, reference: 'r', description: 'd' }, 'k1')).toMatchObject({
      reference: 'r',
      description: 'd',
    });
  });

  it("the ledger's REFERENCE_CONFLICT (the key with another body) is the API's IDEMPOTENCY_KEY_REUSED; anything else passes", () => {
    expect(inMoveTerms(new AppError('REFERENCE_CONFLICT'))).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED' });
    const other = new AppError('INSUFFICIENT_BALANCE');
    expect(inMoveTerms(other)).toBe(other);
  });
});
