import { AdminTokenVerifier } from './admin-token.js';

describe('AdminTokenVerifier', () => {
  it('accepts only the exact token, whatever the candidate length', () => {
    const v = new AdminTokenVerifier('dev-admin-token');
    expect(v.verify('dev-admin-token')).toBe(true);
    expect(v.verify('dev-admin-toke')).toBe(false);
    expect(v.verify('dev-admin-token ')).toBe(false);
    expect(v.verify('')).toBe(false);
    expect(v.verify('x'.repeat(10_000))).toBe(false);
  });
});
