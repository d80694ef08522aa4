import { createHmac, randomBytes } from 'node:crypto';
import { hash as argon2Hash, verify as argon2Verify } from '@node-rs/argon2';
import { Secret, TOTP } from 'otpauth';

/**
 * What dashboard users and operators share: random tokens, how a token is stored, argon2id
 * passwords and RFC 6238 TOTP codes. One copy, so the two sign-in surfaces cannot drift apart.
 */

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** argon2id (memory-hard), OWASP's first recommended setting: 19 MiB, 2 passes, 1 lane. */
export const ARGON2 = { memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export function randomBase62(n: number): string {
  const out: string[] = [];
  while (out.length < n) {
    for (const b of randomBytes(n * 2)) {
      if (b < 248 && out.length < n) out.push(BASE62[b % 62]!); // 248 = 4·62: no modulo bias
    }
  }
  return out.join('');
}

/** Stored form of a session, invitation or enrolment token: HMAC-SHA256 under the pepper, `domain`-separated. */
export function tokenHash(pepper: string, domain: string, token: string): string {
  return createHmac('sha256', pepper).update(`${domain}:${token}`, 'utf8').digest('hex');
}

/**
 * argon2id passwords. `verify` does the same work whether or not there is a stored hash (a dummy
 * hash is verified for unknown accounts): no account enumeration by timing.
 */
export class Passwords {
  private dummyHash: Promise<string> | undefined;

  hash(password: string): Promise<string> {
    return argon2Hash(password, ARGON2);
  }

  async verify(stored: string | null | undefined, password: string): Promise<boolean> {
    return argon2Verify(stored ?? (await this.dummy()), password).catch(() => false);
  }

  private dummy(): Promise<string> {
    return (this.dummyHash ??= argon2Hash(randomBytes(16).toString('hex'), ARGON2));
  }
}

const TOTP_PERIOD = 30;

/** TOTP (RFC 6238, SHA-1, 6 digits, 30 s, ±1 step) under one issuer name (shown in authenticator apps). */
export class TotpCodes {
  constructor(private readonly issuer: string) {}

  /** A fresh 160-bit secret, base32. */
  newSecret(): string {
    return new Secret({ size: 20 }).base32;
  }

  /** The `otpauth://` URI an authenticator app scans. */
  uri(base32: string, email: string): string {
    return this.totp(base32, email).toString();
  }

  /** The time step a code matches (±1 step around `now`), or undefined. */
  matchStep(base32: string, email: string, code: string, now: number): number | undefined {
    const delta = this.totp(base32, email).validate({ token: code, timestamp: now, window: 1 });
    return delta === null ? undefined : Math.floor(now / 1000 / TOTP_PERIOD) + delta;
  }

  private totp(base32: string, email: string): TOTP {
    return new TOTP({ issuer: this.issuer, label: email, algorithm: 'SHA1', digits: 6, period: TOTP_PERIOD, secret: Secret.fromBase32(base32) });
  }
}
