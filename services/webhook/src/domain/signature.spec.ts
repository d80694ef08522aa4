import { signatureHeader, verifySignature } from './signature.js';
import { SecretBox } from '@wallet/platform';
import { newSigningSecret } from './secrets.js';

describe('webhook signatures', () => {
  const secret = newSigningSecret();
  const body = JSON.stringify({ id: 'evt_1', type: 'transfer.completed', createdAt: '2026-11-21T10:00:00.000Z', data: { id: 't1' } });
  const now = 1_800_000_000;

  it('verifies t.body with the secret, within the tolerance only', () => {
    const header = signatureHeader([secret], now, body);
    expect(header).toMatch(/^t=1800000000,v1=[0-9a-f]{64}$/);
    expect(verifySignature(secret, header, body, { now })).toEqual({ ok: true, timestamp: now });
    expect(verifySignature(secret, header, body.replace('t1', 't2'), { now })).toEqual({ ok: false, reason: 'mismatch' });
    expect(verifySignature(newSigningSecret(), header, body, { now })).toEqual({ ok: false, reason: 'mismatch' });
    expect(verifySignature(secret, header, body, { now: now + 301 })).toEqual({ ok: false, reason: 'too_old' });
    expect(verifySignature(secret, header, body, { now: now - 301 })).toEqual({ ok: false, reason: 'too_new' });
    expect(verifySignature(secret, 'v1=abc', body, { now })).toEqual({ ok: false, reason: 'malformed' });
  });

  it('carries one v1 per signing secret (rotation overlap): either secret verifies', () => {
    const next = newSigningSecret();
    const header = signatureHeader([next, secret], now, body);
    expect(header.split(',').filter((p) => p.startsWith('v1='))).toHaveLength(2);
    expect(verifySignature(next, header, body, { now }).ok).toBe(true);
    expect(verifySignature(secret, header, body, { now }).ok).toBe(true);
  });

  it('seals secrets at rest (AES-256-GCM) and opens them only with the same key', () => {
    const box = new SecretBox('k'.repeat(32));
    const sealed = box.seal(secret);
    expect(sealed).not.toContain(secret.slice(6));
    expect(box.open(sealed)).toBe(secret);
    expect(() => new SecretBox('x'.repeat(32)).open(sealed)).toThrow();
  });
});
