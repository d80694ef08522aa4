/**
 * Bre-B keys (§4.2, CONTRACT §9): the accepted forms, AUTO detection and the length rule.
 *
 * - length outside 3-64 code points            → a schema problem (400 INVALID_REQUEST)
 * - a key type outside the accepted values      → a schema problem (400 INVALID_REQUEST)
 * - within length but matching no accepted form → INVALID_KEY (422)
 * - a given type the value does not match       → INVALID_KEY (422)
 *
 * Digits-only values: 10 digits starting with 3 → PHONE, otherwise 5-15 digits → NRIC (CONTRACT
 * §9); other digit strings of 3-40 characters are aliases (the directory does the same).
 */

export const KEY_TYPES = ['PHONE', 'EMAIL', 'ALPHANUM', 'NRIC'] as const;
export type KeyType = (typeof KEY_TYPES)[number];
export type KeyTypeInput = KeyType | 'AUTO';

export const KEY_MIN_LENGTH = 3;
export const KEY_MAX_LENGTH = 64;

const PHONE = /^3\d{9}$/;
const NRIC = /^\d{5,15}$/;
const ALIAS = /^@?[A-Za-z0-9]{3,40}$/;
// Pragmatic e-mail shape: local@domain.tld (labels of letters, digits and inner hyphens), no spaces.
const EMAIL = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

export function isKeyType(v: string): v is KeyType {
  return (KEY_TYPES as readonly string[]).includes(v);
}

/** '' (proto3 default) and 'AUTO' both mean detect; anything else must be one of the four types. */
export function parseKeyTypeInput(v: string | null | undefined): KeyTypeInput | null {
  if (v == null || v === '' || v === 'AUTO') return 'AUTO';
  return isKeyType(v) ? v : null;
}

export function keyLengthOk(value: string): boolean {
  const n = [...value].length;
  return n >= KEY_MIN_LENGTH && n <= KEY_MAX_LENGTH;
}

export function matchesForm(type: KeyType, value: string): boolean {
  switch (type) {
    case 'PHONE':
      return PHONE.test(value);
    case 'NRIC':
      return NRIC.test(value);
    case 'EMAIL':
      return EMAIL.test(value);
    case 'ALPHANUM':
      return ALIAS.test(value);
  }
}

/** The type AUTO detection gives, or null when the value matches no accepted form. */
export function detectKeyType(value: string): KeyType | null {
  if (PHONE.test(value)) return 'PHONE';
  if (NRIC.test(value)) return 'NRIC';
  if (EMAIL.test(value)) return 'EMAIL';
  if (ALIAS.test(value)) return 'ALPHANUM';
  return null;
}

export type KeyCheck =
  { ok: true; keyType: KeyType; keyValue: string } | { ok: false; problem: 'LENGTH' | 'TYPE' } | { ok: false; problem: 'INVALID_KEY'; reason: string };

/** Classifies a key value (and optional requested type) per the rules above. */
export function checkKey(value: string, requested: string | null | undefined): KeyCheck {
  const type = parseKeyTypeInput(requested);
  if (type === null) return { ok: false, problem: 'TYPE' };
  if (!keyLengthOk(value)) return { ok: false, problem: 'LENGTH' };
  if (type === 'AUTO') {
    const detected = detectKeyType(value);
    return detected
      ? { ok: true, keyType: detected, keyValue: value }
      : { ok: false, problem: 'INVALID_KEY', reason: 'El valor no corresponde a ninguna forma de llave aceptada (celular, correo, alias o documento).' };
  }
  return matchesForm(type, value)
    ? { ok: true, keyType: type, keyValue: value }
    : { ok: false, problem: 'INVALID_KEY', reason: `El valor no es una llave válida de tipo ${type}.` };
}
