import { createHmac } from 'node:crypto';
import { parseSignatureHeader, signPayload, verifySignature } from './provider-signature.js';

const secret = 'dev-rail-callback-secret';
const body = Buffer.from('{"eventId":"e1","status":"COMPLETED"}');
const sign = (t: number, b: Buffer | string = body) => `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${b.toString()}`).digest('hex')}`;

describe('provider callback signatures', () => {
  const now = 1_800_000_000;

  it('accepts the provider format over the raw bytes, within 300 s either way', () => {
    expect(verifySignature(secret, body, sign(now), now)).toBe('OK');
    expect(verifySignature(secret, body, sign(now - 300), now)).toBe('OK');
    expect(verifySignature(secret, body, sign(now + 300), now)).toBe('OK');
    expect(signPayload(secret, body, now)).toBe(sign(now));
  });

  it('refuses a stale or future timestamp, a changed body, another secret, and malformed headers', () => {
    expect(verifySignature(secret, body, sign(now - 301), now)).toBe('STALE');
    expect(verifySignature(secret, body, sign(now + 301), now)).toBe('STALE');
    expect(verifySignature(secret, Buffer.from(`${body.toString()} `), sign(now), now)).toBe('BAD_SIGNATURE');
    expect(verifySignature('other-secret', body, sign(now), now)).toBe('BAD_SIGNATURE');
    expect(verifySignature(secret, body, `t=${now},v1=${'0'.repeat(64)}`, now)).toBe('BAD_SIGNATURE');
    for (const h of ['', 'v1=abc', `t=${now}`, `t=abc,v1=${'0'.repeat(64)}`, `t=${now},v1=xyz`]) {
      expect(verifySignature(secret, body, h, now)).toBe('MALFORMED');
    }
  });

  it('accepts one matching v1 among several (secret rotation)', () => {
    const good = sign(now).split(',')[1]!;
    expect(parseSignatureHeader(`t=${now},v1=${'1'.repeat(64)},${good}`)?.v1).toHaveLength(2);
    expect(verifySignature(secret, body, `t=${now},v1=${'1'.repeat(64)},${good}`, now)).toBe('OK');
  });
});
