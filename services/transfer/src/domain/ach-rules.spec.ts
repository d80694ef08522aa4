import { bankRoutable, placeholderAccount } from './ach-rules.js';

describe('ACH internal destination rules', () => {
  it('a bank is routable only with a name and a 4-digit ACH code', () => {
    expect(bankRoutable('Bancolombia', '1007')).toBe(true);
    expect(bankRoutable('', '1007')).toBe(false);
    expect(bankRoutable('Bancolombia', '')).toBe(false);
    expect(bankRoutable('Bancolombia', '10070')).toBe(false);
  });

  it('one repeated digit is a placeholder account', () => {
    for (const a of ['0000', '00000000000', '1111111111', '99999']) expect(placeholderAccount(a)).toBe(true);
    for (const a of ['12345678901', '0000000001', '1010']) expect(placeholderAccount(a)).toBe(false);
  });
});
