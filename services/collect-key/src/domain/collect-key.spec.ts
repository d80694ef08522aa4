import { AppError } from '@wallet/platform';
import {
  CLAIMING_STATES,
  KEY_STATES,
  generateAlias,
  isPublicState,
  maskKeyValue,
  newDepositId,
  newKeyId,
  newQrId,
  parseKeyRef,
  validateCreateKey,
} from './collect-key.js';

const fieldsOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return ((e as AppError).details!.fields as Array<{ path: string }>).map((f) => f.path).sort();
  }
  throw new Error('expected INVALID_REQUEST');
};

describe('collect key rules', () => {
  it('ids and generated aliases', () => {
    expect(newKeyId()).toMatch(/^bkey_[a-z0-9]{24}$/);
    expect(newQrId()).toMatch(/^qr_[a-z0-9]{24}$/);
    expect(newDepositId()).toMatch(/^dep_[a-z0-9]{24}$/);
    const aliases = new Set(Array.from({ length: 200 }, generateAlias));
    for (const a of aliases) expect(a).toMatch(/^@[a-z0-9]{10}$/);
    expect(aliases.size).toBe(200);
  });

  it('validates the create request', () => {
    expect(validateCreateKey({ externalId: 'cust-1.a:b_c', name: ' Ana ', keyValue: '@MiTienda1' })).toEqual({
      externalId: 'cust-1.a:b_c',
      name: 'Ana',
      keyType: 'ALPHANUM',
      keyValue: '@mitienda1',
    });
    expect(validateCreateKey({ externalId: 'x', name: 'ñ'.repeat(100), keyType: 'ALPHANUM' }).keyValue).toBeNull();
    expect(fieldsOf(() => validateCreateKey({}))).toEqual(['externalId', 'name']);
    expect(fieldsOf(() => validateCreateKey({ externalId: 'a b', name: 'x'.repeat(101), keyType: 'PHONE', keyValue: 'abc' }))).toEqual([
      'externalId',
      'keyType',
      'keyValue',
      'name',
    ]);
    expect(fieldsOf(() => validateCreateKey({ externalId: 'e'.repeat(65), name: '  ', keyValue: '@ab' }))).toEqual(['externalId', 'keyValue', 'name']);
    expect(fieldsOf(() => validateCreateKey({ externalId: 'e', name: 'a\u0000b', keyValue: `@${'a'.repeat(41)}` }))).toEqual(['keyValue', 'name']);
  });

  it('parses key references', () => {
    expect(parseKeyRef('ext:cust-1')).toEqual({ kind: 'ext', externalId: 'cust-1' });
    expect(parseKeyRef(`bkey_${'a'.repeat(24)}`)).toEqual({ kind: 'id', id: `bkey_${'a'.repeat(24)}` });
    expect(parseKeyRef('ext:')).toBeNull();
    expect(parseKeyRef('bkey_x')).toBeNull();
  });

  it('REGISTERING and FAILED are not states clients see; REGISTERING holds its value like a live key', () => {
    expect(KEY_STATES).toEqual(['ACTIVE', 'SUSPENDED', 'DELETED']);
    expect(isPublicState('REGISTERING')).toBe(false);
    expect(isPublicState('FAILED')).toBe(false);
    expect(isPublicState('SUSPENDED')).toBe(true);
    expect(CLAIMING_STATES).toEqual(['REGISTERING', 'ACTIVE', 'SUSPENDED']);
  });

  it('masks key values for logs (phones, e-mails and documents are personal data)', () => {
    expect(maskKeyValue('@tiendapepa1')).toBe('@t***a1');
    expect(maskKeyValue('3001234567')).toBe('30***67');
    expect(maskKeyValue('juana.perez@correo.com')).toBe('ju***om');
    expect(maskKeyValue('@abc12')).toBe('@***2');
    expect(maskKeyValue('@ab')).toBe('@***');
    expect(maskKeyValue('')).toBe('***');
    for (const v of ['3001234567', 'juana.perez@correo.com', '1020304050', '@tiendapepa1']) expect(maskKeyValue(v)).not.toContain(v.slice(2, -2));
  });
});
