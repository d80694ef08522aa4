import { canonicalJson } from '@wallet/platform';
import { requestHash } from './request-hash.js';

describe('request hash', () => {
  it('ignores key order and undefined fields, keeps bigints exact', () => {
    expect(canonicalJson({ b: 1n, a: { y: undefined, x: 2n ** 64n } })).toBe('{"a":{"x":"18446744073709551616"},"b":"1"}');
    expect(requestHash('credit', 'c1', { amount: 1n, rail: 'BREB' })).toBe(requestHash('credit', 'c1', { rail: 'BREB', amount: 1n, memo: undefined }));
  });
  it('differs by company, kind and any input', () => {
    const base = requestHash('credit', 'c1', { amount: 1n });
    expect(requestHash('credit', 'c2', { amount: 1n })).not.toBe(base);
    expect(requestHash('reserve', 'c1', { amount: 1n })).not.toBe(base);
    expect(requestHash('credit', 'c1', { amount: 2n })).not.toBe(base);
  });
});
