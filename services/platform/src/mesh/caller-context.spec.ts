import { generateKeyPairSync } from 'node:crypto';
import { AppError } from '../errors/catalogue.js';
import { CallerContextSigner, CallerContextVerifier, type CallerPrincipal } from './caller-context.js';

const profile = {
  nit: '900123456-7',
  name: 'Acme S.A.S.',
  ivaApplicable: true,
  multiSigThreshold: 0,
  counterpartyDailyLimitCents: 0n,
  counterpartyMonthlyLimitCents: 0n,
};
const apikey = (companyId: string, keyId = 'k1', p = profile): CallerPrincipal => ({ kind: 'apikey', companyId, keyId, scope: 'WRITE', profile: p });
const gateway = generateKeyPairSync('ed25519');
const code = (p: Promise<unknown>) =>
  p.then(
    () => 'OK',
    (e: unknown) => (e instanceof AppError ? e.code : String(e)),
  );

/** A clock the test moves (ms since the epoch). */
function clock(start = Date.UTC(2026, 10, 25, 12)) {
  const c = { t: start, now: () => c.t };
  return c;
}

describe('caller context: one signature per principal and window, one verification per token', () => {
  it('reuses a principal’s token for 30 s and signs a new one after; other claims get another token', async () => {
    const c = clock();
    const signer = new CallerContextSigner(gateway.privateKey, 120, c.now);
    const first = await signer.sign(apikey('co-1'));
    c.t += 29_000;
    expect(await signer.sign(apikey('co-1'))).toBe(first);
    expect(await signer.sign(apikey('co-2'))).not.toBe(first);
    expect(await signer.sign(apikey('co-1', 'k2'))).not.toBe(first);
    expect(await signer.sign(apikey('co-1', 'k1', { ...profile, multiSigThreshold: 2 }))).not.toBe(first);
    c.t += 1_000;
    const second = await signer.sign(apikey('co-1'));
    expect(second).not.toBe(first);
    // The new token lives its full 120 s from its own signature.
    const exp = (t: string) => JSON.parse(Buffer.from(t.split('.')[1]!, 'base64url').toString()) as { exp: number; iat: number };
    expect(exp(second).exp - exp(second).iat).toBe(120);
    expect(exp(second).iat).toBe(Math.floor(c.t / 1000));
  });

  it('answers a remembered token until its expiry plus the skew, and refuses it after', async () => {
    const c = clock();
    const token = await new CallerContextSigner(gateway.privateKey, 120, c.now).sign(apikey('co-1'));
    const verifier = new CallerContextVerifier(gateway.publicKey, c.now);
    expect(await verifier.verify(token)).toMatchObject({ kind: 'apikey', companyId: 'co-1', keyId: 'k1' });
    c.t += 150_000; // expiry (120 s) + skew (30 s): still valid
    expect(await verifier.verify(token)).toMatchObject({ companyId: 'co-1' });
    c.t += 1_000;
    expect(await code(verifier.verify(token))).toBe('CALLER_NOT_AUTHENTICATED');
    // …and stays refused (jose decides again: expired).
    expect(await code(verifier.verify(token))).toBe('CALLER_NOT_AUTHENTICATED');
  });

  it('never answers a tampered token or one signed by another key from the cache of a good one', async () => {
    const c = clock();
    const verifier = new CallerContextVerifier(gateway.publicKey, c.now);
    const good = await new CallerContextSigner(gateway.privateKey, 120, c.now).sign(apikey('co-1'));
    expect(await code(verifier.verify(good))).toBe('OK');
    const [h, p, s] = good.split('.') as [string, string, string];
    const otherClaims = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p, 'base64url').toString()), co: 'co-victim' })).toString('base64url');
    expect(await code(verifier.verify(`${h}.${otherClaims}.${s}`))).toBe('CALLER_NOT_AUTHENTICATED');
    const flipped = `${h}.${p}.${s.slice(0, -2)}${s.at(-2) === 'A' ? 'B' : 'A'}${s.at(-1)}`;
    expect(await code(verifier.verify(flipped))).toBe('CALLER_NOT_AUTHENTICATED');
    const attacker = generateKeyPairSync('ed25519');
    const forged = await new CallerContextSigner(attacker.privateKey, 120, c.now).sign(apikey('co-1'));
    expect(await code(verifier.verify(forged))).toBe('CALLER_NOT_AUTHENTICATED');
    expect(await code(verifier.verify(forged))).toBe('CALLER_NOT_AUTHENTICATED');
  });

  it('hands out a frozen principal (a handler cannot change what the next call of the token sees)', async () => {
    const verifier = new CallerContextVerifier(gateway.publicKey);
    const token = await new CallerContextSigner(gateway.privateKey).sign(apikey('co-1'));
    const p = await verifier.verify(token);
    expect(Object.isFrozen(p)).toBe(true);
    expect(() => {
      (p as { companyId: string }).companyId = 'co-2';
    }).toThrow(TypeError);
    expect(await verifier.verify(token)).toMatchObject({ companyId: 'co-1' });
  });
});
