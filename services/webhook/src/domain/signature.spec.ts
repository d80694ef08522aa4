import { createHmac } from 'node:crypto';
import { SecretBox } from '@wallet/platform';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { signatureHeader, signingKey } from './signature.js';
import { newSigningSecret } from './secrets.js';

/** Checked with the reference library of the specification (`standardwebhooks`), not with code of ours. */
describe('webhook signatures (Standard Webhooks)', () => {
  const secret = newSigningSecret();
  const id = 'evt_3f6c0e11';
  const body = JSON.stringify({ id, type: 'transfer.completed', createdAt: '2026-11-21T10:00:00.000Z', data: { id: 't1' } });
  const now = () => Math.floor(Date.now() / 1000);
  const headers = (sig: string, ts = now(), msgId = id) => ({ 'webhook-id': msgId, 'webhook-timestamp': String(ts), 'webhook-signature': sig });

  it('issues secrets as whsec_ + standard base64 of 32 key bytes, which the library accepts', () => {
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(signingKey(secret)).toHaveLength(32);
    expect(() => new Webhook(secret)).not.toThrow();
  });

  it('signs v1,<base64> over id.timestamp.body: the library verifies it, and nothing altered', () => {
    const ts = now();
    const sig = signatureHeader([secret], id, ts, body);
    expect(sig).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    const wh = new Webhook(secret);
    expect(wh.verify(body, headers(sig, ts))).toEqual(JSON.parse(body));
    expect(wh.sign(id, new Date(ts * 1000), body)).toBe(sig);
    expect(() => wh.verify(body.replace('t1', 't2'), headers(sig, ts))).toThrow(WebhookVerificationError);
    expect(() => wh.verify(body, headers(sig, ts, 'evt_other'))).toThrow('No matching signature found');
    expect(() => wh.verify(body, headers(sig, ts + 1))).toThrow('No matching signature found');
    expect(() => new Webhook(newSigningSecret()).verify(body, headers(sig, ts))).toThrow('No matching signature found');
  });

  it('is refused by the library outside its 5-minute tolerance (replays)', () => {
    const old = now() - 301;
    expect(() => new Webhook(secret).verify(body, headers(signatureHeader([secret], id, old, body), old))).toThrow('Message timestamp too old');
    const ahead = now() + 301;
    expect(() => new Webhook(secret).verify(body, headers(signatureHeader([secret], id, ahead, body), ahead))).toThrow('Message timestamp too new');
  });

  it('carries one space-separated entry per signing secret during a rotation overlap: either secret verifies', () => {
    const next = newSigningSecret();
    const ts = now();
    const sig = signatureHeader([next, secret], id, ts, body);
    expect(sig.split(' ')).toHaveLength(2);
    expect(new Webhook(next).verify(body, headers(sig, ts))).toBeTruthy();
    expect(new Webhook(secret).verify(body, headers(sig, ts))).toBeTruthy();
  });

  it('keeps signing with the key bytes of a secret issued before the standard format (unpadded base64url)', () => {
    const key = Buffer.alloc(32, 0xfb); // base64url of these bytes has '-' and '_', which the library refuses
    const legacy = `whsec_${key.toString('base64url')}`;
    expect(legacy).toMatch(/[-_]/);
    expect(() => new Webhook(legacy)).toThrow();
    const ts = now();
    const sig = signatureHeader([legacy], id, ts, body);
    expect(sig).toBe(`v1,${createHmac('sha256', key).update(`${id}.${ts}.${body}`).digest('base64')}`);
    expect(new Webhook(`whsec_${key.toString('base64')}`).verify(body, headers(sig, ts))).toBeTruthy();
  });

  it('refuses a secret that is not whsec_ or too short to be a key', () => {
    expect(() => signingKey('plain-secret')).toThrow();
    expect(() => signingKey('whsec_AAAA')).toThrow();
  });

  it('seals secrets at rest (AES-256-GCM) and opens them only with the same key', () => {
    const box = new SecretBox('k'.repeat(32));
    const sealed = box.seal(secret);
    expect(sealed).not.toContain(secret.slice(6));
    expect(box.open(sealed)).toBe(secret);
    expect(() => new SecretBox('x'.repeat(32)).open(sealed)).toThrow();
  });
});
