import { checkKey, detectKeyType } from './keys.js';

describe('Bre-B key detection and validation (§4.2, CONTRACT §9)', () => {
  it.each([
    ['3001234567', 'PHONE'],
    ['3999999999', 'PHONE'],
    ['2001234567', 'NRIC'], // 10 digits not starting with 3
    ['12345', 'NRIC'],
    ['123456789012345', 'NRIC'],
    ['30012345678', 'NRIC'], // 11 digits starting with 3: a document
    ['ana@example.com', 'EMAIL'],
    ['ana.maria+pagos@sub.example.co', 'EMAIL'],
    ['@tienda123', 'ALPHANUM'],
    ['tienda123', 'ALPHANUM'],
    ['abc', 'ALPHANUM'],
    ['1234', 'ALPHANUM'], // digits-only but too short for a document: an alias
    ['1234567890123456', 'ALPHANUM'], // 16 digits: an alias
  ])('AUTO detects %s as %s', (value, type) => {
    expect(detectKeyType(value)).toBe(type);
    expect(checkKey(value, 'AUTO')).toEqual({ ok: true, keyType: type, keyValue: value });
    expect(checkKey(value, '')).toEqual({ ok: true, keyType: type, keyValue: value });
  });

  it.each([
    ['no valid key!'],
    ['ana@'],
    ['@'.padEnd(5, '@')],
    ['alias_con_guion'],
    ['+573001234567'],
    ['a'.repeat(41)], // alias over 40
    ['3001234567 '],
  ])('%j within length but matching no form → INVALID_KEY', (value) => {
    expect(checkKey(value, 'AUTO')).toMatchObject({ ok: false, problem: 'INVALID_KEY' });
  });

  it('length outside 3-64 code points is a schema problem (400), counted in code points', () => {
    expect(checkKey('ab', 'AUTO')).toEqual({ ok: false, problem: 'LENGTH' });
    expect(checkKey('', 'AUTO')).toEqual({ ok: false, problem: 'LENGTH' });
    expect(checkKey(`${'a'.repeat(60)}@x.co`, 'AUTO')).toEqual({ ok: false, problem: 'LENGTH' }); // 65
    expect(checkKey('ñañ', 'AUTO')).toMatchObject({ problem: 'INVALID_KEY' }); // 3 code points: length ok, form not
  });

  it('an unknown key type is a schema problem; a given type the value does not match is INVALID_KEY', () => {
    expect(checkKey('3001234567', 'IBAN')).toEqual({ ok: false, problem: 'TYPE' });
    expect(checkKey('3001234567', 'NRIC')).toEqual({ ok: true, keyType: 'NRIC', keyValue: '3001234567' });
    expect(checkKey('12345', 'PHONE')).toMatchObject({ ok: false, problem: 'INVALID_KEY' });
    expect(checkKey('ana@example.com', 'ALPHANUM')).toMatchObject({ ok: false, problem: 'INVALID_KEY' });
    expect(checkKey('@tienda', 'EMAIL')).toMatchObject({ ok: false, problem: 'INVALID_KEY' });
    expect(checkKey('tienda', 'ALPHANUM')).toEqual({ ok: true, keyType: 'ALPHANUM', keyValue: 'tienda' });
  });
});
