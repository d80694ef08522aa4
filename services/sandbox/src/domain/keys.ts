/**
 * Bre-B directory keys: how a key value is normalized, which type it is, whether it is
 * well-formed, and the magic values that answer "not found" or "inactive" (docs/sandbox.md).
 */

export const KEY_TYPES = ['PHONE', 'EMAIL', 'ALPHANUM', 'NRIC'] as const;
export type KeyType = (typeof KEY_TYPES)[number];
export type KeyTypeQuery = KeyType | 'AUTO';

export type DirectoryStatus = 'active' | 'inactive' | 'not_found';

const DIGITS = /^\d+$/;
const PHONE = /^3\d{9}$/;
const NRIC = /^\d{5,15}$/;
// Pragmatic e-mail shape (what a directory would accept): local@domain.tld, no spaces.
const EMAIL = /^[a-z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;
// An alias ("llave alfanumérica"): an optional leading @, then 3-40 letters, digits, '.', '_' or '-'.
const ALIAS = /^@?[a-z0-9][a-z0-9._-]{2,39}$/;

/** Lower-cases e-mails and aliases (an alias keeps its `@`); digits stay as they are. */
export function normalizeKeyValue(raw: string): string {
  const v = raw.trim();
  return DIGITS.test(v) ? v : v.toLowerCase();
}

/** AUTO detection: 10 digits starting with 3 → PHONE, other 5-15 digits → NRIC, an e-mail → EMAIL, else ALPHANUM. */
export function detectKeyType(normalized: string): KeyType {
  if (PHONE.test(normalized)) return 'PHONE';
  if (NRIC.test(normalized)) return 'NRIC';
  if (normalized.includes('@') && !normalized.startsWith('@')) return 'EMAIL';
  return 'ALPHANUM';
}

export function isWellFormed(type: KeyType, normalized: string): boolean {
  switch (type) {
    case 'PHONE':
      return PHONE.test(normalized);
    case 'NRIC':
      return NRIC.test(normalized);
    case 'EMAIL':
      return normalized.length <= 254 && EMAIL.test(normalized);
    case 'ALPHANUM':
      return ALIAS.test(normalized);
  }
}

export interface ParsedKey {
  keyType: KeyType;
  keyValue: string;
}

/** The key as the directory understands it, or null when it is not a well-formed key of that type. */
export function parseKey(raw: string, type: KeyTypeQuery = 'AUTO'): ParsedKey | null {
  const keyValue = normalizeKeyValue(raw);
  if (keyValue === '') return null;
  const keyType = type === 'AUTO' ? detectKeyType(keyValue) : type;
  return isWellFormed(keyType, keyValue) ? { keyType, keyValue } : null;
}

const NOT_FOUND = new Set(['3009999999', 'notfound@example.com', '@notfound']);
const INACTIVE = new Set(['3008888888', '@inactive']);

/** Magic values for tests and demos; every other well-formed key is registered and active. */
export function directoryStatus(normalized: string): DirectoryStatus {
  if (NOT_FOUND.has(normalized)) return 'not_found';
  if (INACTIVE.has(normalized)) return 'inactive';
  return 'active';
}
