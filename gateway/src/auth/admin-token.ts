import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Checks the operator's admin bearer token in constant time. Both sides are HMAC'd with a
 * per-process random key first, so the comparison is over equal-length digests and leaks neither
 * the token's content nor its length.
 */
export class AdminTokenVerifier {
  private readonly hmacKey = randomBytes(32);
  private readonly expected: Buffer;

  constructor(token: string) {
    this.expected = this.digest(token);
  }

  verify(candidate: string): boolean {
    return timingSafeEqual(this.digest(candidate), this.expected);
  }

  private digest(value: string): Buffer {
    return createHmac('sha256', this.hmacKey).update(value, 'utf8').digest();
  }
}
