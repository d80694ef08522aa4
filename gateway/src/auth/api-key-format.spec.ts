import { displayPrefix, generateApiKey, hashApiKey, isWellFormedApiKey, looksLikeApiKey } from './api-key-format.js';

describe('API key format', () => {
  it('is the environment prefix plus 40 base62 characters', () => {
    const k = generateApiKey('wk_test_');
    expect(k).toMatch(/^wk_test_[0-9A-Za-z]{40}$/);
    expect(generateApiKey('wk_live_')).toMatch(/^wk_live_[0-9A-Za-z]{40}$/);
    expect(displayPrefix(k)).toBe(k.slice(0, 12));
  });

  it('never repeats and uses the whole alphabet', () => {
    const keys = new Set(Array.from({ length: 2000 }, () => generateApiKey('wk_test_')));
    expect(keys.size).toBe(2000);
    const chars = new Set([...keys].join('').replaceAll('wk_test_', ''));
    expect(chars.size).toBe(62);
  });

  it('accepts only keys of this environment', () => {
    const k = generateApiKey('wk_test_');
    expect(isWellFormedApiKey(k, 'wk_test_')).toBe(true);
    expect(isWellFormedApiKey(k, 'wk_live_')).toBe(false);
    expect(isWellFormedApiKey('wk_test_short', 'wk_test_')).toBe(false);
    expect(isWellFormedApiKey(`${k}!`, 'wk_test_')).toBe(false);
    expect(looksLikeApiKey(k)).toBe(true);
    expect(looksLikeApiKey('dev-admin-token')).toBe(false);
  });

  it('hashes with the pepper (HMAC-SHA256)', () => {
    const k = generateApiKey('wk_test_');
    expect(hashApiKey('pepper-one-xxxxxxxx', k)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashApiKey('pepper-one-xxxxxxxx', k)).toBe(hashApiKey('pepper-one-xxxxxxxx', k));
    expect(hashApiKey('pepper-two-xxxxxxxx', k)).not.toBe(hashApiKey('pepper-one-xxxxxxxx', k));
  });
});
