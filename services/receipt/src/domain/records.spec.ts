import { depositEventsV1 } from '@wallet/proto';
import { depositStatusRank, merge, returnPatch, transferStatusRank, ensureMasked, TRANSACTION_FIELDS, type Patch, type TransactionFields } from './records.js';
import { formatBogota, receiptNumber } from './receipt-view.js';
import { winAnsi } from './render-pdf.js';

const patch = (at: string, status: string | undefined, fields: Partial<TransactionFields>, eventId = at): Patch<TransactionFields> => ({
  id: 't1',
  companyId: 'c1',
  eventId,
  status,
  occurredAt: new Date(at),
  fields,
});

describe('read-model merge', () => {
  it('completed before created: keeps COMPLETED and the completion, fills creation fields', () => {
    const a = merge(
      undefined,
      patch('2026-01-01T00:00:10Z', 'COMPLETED', { completedAt: new Date('2026-01-01T00:00:10Z'), amount: 5n }),
      TRANSACTION_FIELDS,
      transferStatusRank,
    ).record;
    const b = merge(
      a,
      patch('2026-01-01T00:00:00Z', 'PENDING', { targetName: 'Ana', amount: 5n, createdAt: new Date('2026-01-01T00:00:00Z') }),
      TRANSACTION_FIELDS,
      transferStatusRank,
    );
    expect(b.changed).toBe(true);
    expect(b.record.status).toBe('COMPLETED');
    expect(b.record.targetName).toBe('Ana');
    expect(b.record.completedAt?.toISOString()).toBe('2026-01-01T00:00:10.000Z');
    expect(b.record.lastEventAt.toISOString()).toBe('2026-01-01T00:00:10.000Z');
  });

  it('an older event never overwrites a newer value; a repeat changes nothing', () => {
    const a = merge(undefined, patch('2026-01-01T00:00:10Z', 'FAILED', { errorMessage: 'nuevo' }), TRANSACTION_FIELDS, transferStatusRank).record;
    expect(merge(a, patch('2026-01-01T00:00:05Z', 'PENDING', { errorMessage: 'viejo' }), TRANSACTION_FIELDS, transferStatusRank).record.errorMessage).toBe(
      'nuevo',
    );
    expect(merge(a, patch('2026-01-01T00:00:10Z', 'FAILED', { errorMessage: 'nuevo' }, 'other-id'), TRANSACTION_FIELDS, transferStatusRank).changed).toBe(
      false,
    );
  });

  it('ranks: final states beat pending ones; among finals the later wins', () => {
    expect(transferStatusRank('COMPLETED')).toBeGreaterThan(transferStatusRank('PENDING'));
    expect(depositStatusRank('REVERSED')).toBe(depositStatusRank('ASSIGNED'));
    expect(depositStatusRank('PENDING_CONFIRM')).toBeLessThan(depositStatusRank('UNASSIGNED'));
  });
});

describe('receipt formatting', () => {
  it('masks accounts, formats Bogotá time, derives stable receipt numbers, keeps WinAnsi text', () => {
    expect(ensureMasked('****1234')).toBe('****1234');
    expect(ensureMasked('0012345678')).toBe('****5678');
    expect(formatBogota(new Date('2026-11-21T04:59:59Z'))).toBe('20 de noviembre de 2026, 11:59:59 p. m.');
    expect(formatBogota(new Date('2026-11-21T17:00:00Z'))).toBe('21 de noviembre de 2026, 12:00:00 p. m.');
    expect(receiptNumber('TRANSACTION', 'x')).toBe(receiptNumber('TRANSACTION', 'x'));
    expect(receiptNumber('DEPOSIT', 'x')).toMatch(/^DEP-[0-9A-Z]{10}$/);
    expect(winAnsi('Peñaloza Ávila “ok” ✓ Łódź 漢')).toBe('Peñaloza Ávila “ok” ? ?ódz ?');
  });
});

describe('a return of a deposit in the read model (docs/returns.md)', () => {
  const event = (status: string, extra: Record<string, unknown> = {}) =>
    depositEventsV1.DepositReturnEvent.toJSON({
      eventId: 'e1',
      companyId: 'c1',
      occurredAt: new Date('2026-11-29T15:00:00Z'),
      depositReturn: {
        id: 'ret_aaaaaaaaaaaaaaaaaaaaaaaa',
        depositId: 'dep_bbbbbbbbbbbbbbbbbbbbbbbb',
        rail: 'BREB',
        amountCents: 30_000n,
        reason: 'OVERPAYMENT',
        status,
        transactionId: '6f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b',
        createdAt: new Date('2026-11-29T14:59:59Z'),
        depositAmountCents: 80_000n,
        returnedAmountCents: 30_000n,
        payerName: 'Pedro Pérez',
        payerDocument: 'CC 79123456',
        ...extra,
      },
    });
  it("is its wallet movement's transaction: kind RETURN, to the payer, for the amount, without fee; RETURNED shows COMPLETED", () => {
    const d = returnPatch(event('RETURNED', { returnedAt: new Date('2026-11-29T15:00:00Z') }), 'fallback');
    expect(d).toEqual({
      ok: true,
      patch: expect.objectContaining({ id: '6f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b', companyId: 'c1', status: 'COMPLETED' }),
    });
    if (!d.ok) throw new Error('not decoded');
    expect(d.patch.fields).toMatchObject({
      kind: 'RETURN',
      rail: 'BREB',
      amount: 30_000n,
      netAmount: 30_000n,
      targetName: 'Pedro Pérez',
      targetDocument: 'CC 79123456',
      reference: 'ret_aaaaaaaaaaaaaaaaaaaaaaaa',
      completedAt: new Date('2026-11-29T15:00:00Z'),
    });
    expect(returnPatch(event('FAILED', { failureMessage: 'La red rechazó la devolución' }), 'x')).toMatchObject({
      ok: true,
      patch: { status: 'FAILED', fields: { errorMessage: 'La red rechazó la devolución' } },
    });
    expect(returnPatch({ eventId: 'x' }, 'x')).toMatchObject({ ok: false });
  });
});
