import { anchorHandleFor, holderFor } from './holders.js';
import { detectKeyType, directoryStatus, normalizeKeyValue, parseKey } from './keys.js';

describe('directory keys', () => {
  it('normalizes: e-mails and aliases lower-case, digits as they are', () => {
    expect(normalizeKeyValue(' Ana@Example.COM ')).toBe('ana@example.com');
    expect(normalizeKeyValue('@MiTienda')).toBe('@mitienda');
    expect(normalizeKeyValue('0012345')).toBe('0012345');
  });

  it('detects the type', () => {
    expect(detectKeyType('3001234567')).toBe('PHONE');
    expect(detectKeyType('2001234567')).toBe('NRIC');
    expect(detectKeyType('12345')).toBe('NRIC');
    expect(detectKeyType('123456789012345')).toBe('NRIC');
    expect(detectKeyType('1234')).toBe('ALPHANUM');
    expect(detectKeyType('1234567890123456')).toBe('ALPHANUM');
    expect(detectKeyType('a@b.co')).toBe('EMAIL');
    expect(detectKeyType('@tienda')).toBe('ALPHANUM');
  });

  it('parses only well-formed keys of the given type', () => {
    expect(parseKey('@Tienda')).toEqual({ keyType: 'ALPHANUM', keyValue: '@tienda' });
    expect(parseKey('3001234567', 'NRIC')).toEqual({ keyType: 'NRIC', keyValue: '3001234567' });
    expect(parseKey('300123456', 'PHONE')).toBeNull();
    expect(parseKey('a b c')).toBeNull();
    expect(parseKey('')).toBeNull();
    expect(parseKey('@ab')).toBeNull();
    expect(parseKey('x@y')).toBeNull();
  });

  it('knows the magic values', () => {
    expect(directoryStatus('3009999999')).toBe('not_found');
    expect(directoryStatus('notfound@example.com')).toBe('not_found');
    expect(directoryStatus('@notfound')).toBe('not_found');
    expect(directoryStatus('notfound')).toBe('active');
    expect(directoryStatus('3008888888')).toBe('inactive');
    expect(directoryStatus('@inactive')).toBe('inactive');
  });
});

describe('holders', () => {
  it('are a pure function of the normalized key', () => {
    expect(holderFor('@tienda')).toEqual(holderFor('@tienda'));
    expect(anchorHandleFor('@tienda')).toBe(anchorHandleFor('@tienda'));
    expect(anchorHandleFor('@tienda')).not.toBe(anchorHandleFor('@tienda2'));
  });

  it('have plausible documents: the key itself for NRIC keys, else a CC of 8 or 10 digits', () => {
    expect(holderFor('98765432').idValue).toBe('98765432');
    for (let i = 0; i < 200; i++) {
      const h = holderFor(`@cliente${i}`);
      expect(h.idType).toBe('CC');
      expect(h.idValue).toMatch(/^([1-9]\d{7}|1[01]\d{8})$/);
      expect(h.firstName).toMatch(/^[A-Z]+( [A-Z]+)?$/);
      expect(h.lastName).toMatch(/^[A-Z]+ [A-Z]+$/);
      if (['Nequi', 'Daviplata'].includes(h.bankName)) expect(h.bankAccountType).toBe('Ahorros');
    }
  });
});
