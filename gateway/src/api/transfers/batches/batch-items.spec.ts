import { AppError } from '@wallet/platform';
import { assertUniqueReferences, toBatchItemInput, validateItems, type BatchItemDraft } from './batch-items.js';

const json = (inputs: unknown[]): BatchItemDraft[] => inputs.map((input) => ({ line: null, input }));
const breb = { amount: 10_000, destination: { brebKey: { type: 'PHONE', value: '3001234567' } }, targetName: 'Ana Pérez', targetDocument: '1012345678' };
const ach = {
  amount: 25_000,
  destination: {
    bankAccount: {
      bankId: 14,
      accountTypeId: 21,
      accountNumber: '99887766',
      documentTypeId: 1,
      documentNumber: '1012345678',
      holderFirstName: 'Luis',
      holderLastName: 'Gómez',
    },
  },
};

describe('validateItems (JSON items)', () => {
  it('checks each item with the send schema: valid ones become sends, the others invalid items with path-named Spanish messages', () => {
    const r = validateItems(json([breb, { ...breb, amount: 50 }, { ...breb, extra: 1 }, 'texto', ach]));
    expect(r[0]).toEqual({ seq: 1, line: null, send: breb });
    expect(r[1]).toEqual({ seq: 2, line: null, invalidMessage: expect.stringMatching(/^amount: .+/) });
    expect(r[2]).toEqual({ seq: 3, line: null, invalidMessage: 'extra: Campo no permitido.' });
    expect(r[3]!.invalidMessage).toBeDefined();
    expect(r[3]!.invalidMessage).not.toMatch(/^: /); // the whole item: no empty path
    expect(r[4]!.send).toEqual(ach);
  });

  it('maps to the proto item: JSON items on line 0; a bank account with its dictionary name and ACH code; an invalid item with INVALID_REQUEST', () => {
    const [a, b, c] = validateItems(json([ach, { ...breb, targetDocument: '' }, {}]));
    expect(toBatchItemInput(a!)).toEqual({
      seq: 1,
      line: 0,
      send: {
        amount: 25_000n,
        reference: undefined,
        description: undefined,
        brebKey: undefined,
        targetAnchorHandle: undefined,
        targetName: undefined,
        targetDocument: undefined,
        bankAccount: { ...ach.destination.bankAccount, bankName: 'Banco Davivienda', bankAchCode: '1051' },
        requestHash: '',
      },
    });
    // An empty targetDocument is no document (as on POST /transfers/send).
    expect(toBatchItemInput(b!).send!.targetDocument).toBeUndefined();
    expect(toBatchItemInput(c!)).toEqual({ seq: 3, line: 0, invalidCode: 'INVALID_REQUEST', invalidMessage: expect.any(String) });
  });
});

describe('assertUniqueReferences', () => {
  it('passes distinct, missing and empty references', () => {
    expect(() =>
      assertUniqueReferences(
        json([{ reference: 'a' }, { reference: 'b' }, {}, { reference: '' }, { reference: '  ' }, 'x', { reference: 5 }, { reference: 5 }]),
      ),
    ).not.toThrow();
  });

  it('422 VALIDATION_ERROR naming each repetition (items.<i>.reference) and where it first appeared; an invalid item counts too', () => {
    try {
      assertUniqueReferences(json([{ reference: 'nómina' }, { reference: 'otra' }, { ...breb, amount: -1, reference: 'nómina' }, { reference: 'otra' }]));
      throw new Error('expected a refusal');
    } catch (err) {
      expect(err).toBeInstanceOf(AppError);
      const e = err as AppError;
      expect(e.code).toBe('VALIDATION_ERROR');
      expect(e.details).toEqual({
        fields: [
          { path: 'items.2.reference', message: 'La referencia "nómina" se repite en items.2.reference; apareció antes en items.0.reference.' },
          { path: 'items.3.reference', message: 'La referencia "otra" se repite en items.3.reference; apareció antes en items.1.reference.' },
        ],
      });
    }
  });
});
