import { createHmac, randomInt } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** Random part length: 40 base62 characters ≈ 238 bits (the contract asks for at least 32). */
export const API_KEY_RANDOM_LENGTH = 40;
/** How many leading characters are shown back as the key's `prefix` (e.g. `wk_test_Ab3x`). */
export const API_KEY_DISPLAY_LENGTH = 12;

const KEY_SHAPE = /^wk_(test|live)_[0-9A-Za-z]{32,128}$/;

/** `wk_test_` (outside production) or `wk_live_` + 40 uniformly random base62 characters. */
export function generateApiKey(prefix: 'wk_test_' | 'wk_live_'): string {
  let out = prefix;
  // randomInt draws without modulo bias from the CSPRNG.
  for (let i = 0; i < API_KEY_RANDOM_LENGTH; i++) out += BASE62[randomInt(62)];
  return out;
}

/** A key of this environment's prefix and the right alphabet/length; anything else is rejected without a lookup. */
export function isWellFormedApiKey(key: string, prefix: string): boolean {
  return key.startsWith(prefix) && KEY_SHAPE.test(key);
}

/** Keys are stored only as HMAC-SHA256(pepper, key), hex: a database leak alone does not reveal or verify keys. */
export function hashApiKey(pepper: string, key: string): string {
  return createHmac('sha256', pepper).update(key, 'utf8').digest('hex');
}

export function displayPrefix(key: string): string {
  return key.slice(0, API_KEY_DISPLAY_LENGTH);
}

/** Whether a bearer credential looks like a client API key (any environment). */
export function looksLikeApiKey(token: string): boolean {
  return token.startsWith('wk_');
}
