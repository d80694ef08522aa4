import { AppError } from '@wallet/platform';
import { isEmail, validateCreatePse, validateShare, type CreatePseInput } from './validation.js';

const good: CreatePseInput = {
  amountCents: 150_000n,
  payerDocumentTypeId: 1,
  payerDocumentNumber: '1020304050',
  payerFirstName: 'Ana',
  payerLastName: 'Pérez',
  payerEmail: 'ana@Example.COM',
  payerPhone: '3001234567',
  internalRef: 'pedido-1',
};

function fields(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('INVALID_REQUEST');
    return ((err as AppError).details!.fields as Array<{ path: string }>).map((f) => f.path);
  }
  throw new Error('expected INVALID_REQUEST');
}

describe('§4.6 field rules', () => {
  it('accepts a good request and normalizes the e-mail domain', () => {
    expect(validateCreatePse(good).payerEmail).toBe('ana@example.com');
    expect(validateCreatePse({ ...good, payerPhone: undefined, internalRef: undefined })).not.toHaveProperty('payerPhone');
  });

  it('reports every bad field at once', () => {
    expect(
      fields(() =>
        validateCreatePse({
          amountCents: 99n,
          payerDocumentTypeId: 2,
          payerDocumentNumber: '12a45',
          payerFirstName: '',
          payerLastName: 'x'.repeat(101),
          payerEmail: 'no-at',
          payerPhone: '2001234567',
          internalRef: 'r'.repeat(101),
        }),
      ).sort(),
    ).toEqual(
      ['amountCents', 'internalRef', 'payerDocumentNumber', 'payerDocumentTypeId', 'payerEmail', 'payerFirstName', 'payerLastName', 'payerPhone'].sort(),
    );
  });

  it('document numbers are 5 to 15 digits; types 1, 4, 5, 8; names count code points', () => {
    for (const n of ['1234', '1234567890123456', '12 345', ''])
      expect(fields(() => validateCreatePse({ ...good, payerDocumentNumber: n }))).toEqual(['payerDocumentNumber']);
    for (const t of [1, 4, 5, 8]) expect(() => validateCreatePse({ ...good, payerDocumentTypeId: t })).not.toThrow();
    for (const t of [0, 2, 3, 6, 7, 9]) expect(fields(() => validateCreatePse({ ...good, payerDocumentTypeId: t }))).toEqual(['payerDocumentTypeId']);
    expect(() => validateCreatePse({ ...good, payerFirstName: '😀'.repeat(100) })).not.toThrow();
    expect(fields(() => validateCreatePse({ ...good, payerFirstName: '😀'.repeat(101) }))).toEqual(['payerFirstName']);
    expect(fields(() => validateCreatePse({ ...good, payerLastName: 'Pérez\r\nBcc: x@y.co' }))).toEqual(['payerLastName']);
    expect(fields(() => validateCreatePse({ ...good, payerPhone: '30012345678' }))).toEqual(['payerPhone']);
  });

  it('e-mails', () => {
    for (const e of ['a@b.co', 'first.last+tag@sub.example.com']) expect(isEmail(e)).toBe(true);
    for (const e of ['a@b', 'a b@c.co', 'a@b.co\r\nBcc: z@z.co', '.a@b.co', 'a..b@c.co', '@b.co']) expect(isEmail(e)).toBe(false);
  });

  it('share: recipient e-mail, name ≤ 100, message ≤ 500 code points', () => {
    expect(validateShare({ depositId: 'dep_x', recipientEmail: 'x@y.co', customMessage: 'ñ'.repeat(500) }).customMessage).toHaveLength(500);
    expect(
      fields(() => validateShare({ depositId: 'dep_x', recipientEmail: 'bad', recipientName: 'n'.repeat(101), customMessage: 'm'.repeat(501) })).sort(),
    ).toEqual(['customMessage', 'recipientEmail', 'recipientName']);
    expect(validateShare({ depositId: 'dep_x', recipientEmail: 'x@y.co', recipientName: 'Luis\r\nBcc: e@x.co' }).recipientName).toBe('Luis Bcc: e@x.co');
  });
});
