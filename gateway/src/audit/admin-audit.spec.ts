import { redact } from './admin-audit.js';

describe('redact (what reaches the audit log)', () => {
  it('replaces secrets at any depth, keeps the rest', () => {
    expect(
      redact({
        email: 'a@b.co',
        password: 'p',
        totpCode: '123456',
        nested: { key: 'wk_test_x', keyId: 'k1', totpSecret: 'S', otpauthUrl: 'otpauth://x' },
        list: [{ enrollmentToken: 'wenr_x', name: 'n' }],
        token: 'wadm_x',
        amount: 10n,
        when: new Date(0),
        skip: undefined,
      }),
    ).toEqual({
      email: 'a@b.co',
      password: '[redacted]',
      totpCode: '[redacted]',
      nested: { key: '[redacted]', keyId: 'k1', totpSecret: '[redacted]', otpauthUrl: '[redacted]' },
      list: [{ enrollmentToken: '[redacted]', name: 'n' }],
      token: '[redacted]',
      amount: '10',
      when: '1970-01-01T00:00:00.000000Z',
    });
  });

  it('makes text storable in jsonb: lone surrogates and NUL become U+FFFD; long text is cut', () => {
    expect(redact({ a: 'x\uD800y', b: '\uDFFFz', c: 'ok 🏦', d: 'n\u0000l', ['k\uD800']: 1 })).toEqual({
      a: 'x\uFFFDy',
      b: '\uFFFDz',
      c: 'ok 🏦',
      d: 'n\uFFFDl',
      'k\uFFFD': 1,
    });
    expect((redact('a'.repeat(5000)) as string).length).toBe(2001);
    expect(redact(Number.NaN)).toBe('NaN');
  });
});
