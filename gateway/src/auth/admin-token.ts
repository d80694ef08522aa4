import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { AppError } from '@wallet/platform';
import type { AdminPrincipal, SharedTokenPolicy } from './admin-principal.js';
import { looksLikeOperatorSession, type OperatorAuth } from './operator-auth.js';

/**
 * Checks the operator's admin bearer token in constant time. Both sides are HMAC'd with a
 * per-process random key first, so the comparison is over equal-length digests and leaks neither
 * the token's content nor its length.
 */
export class AdminTokenVerifier {
  private readonly hmacKey = randomBytes(32);
  private readonly expected: Buffer | undefined;

  /** `undefined`: no shared token (production after the bootstrap): every candidate is refused. */
  constructor(token: string | undefined) {
    this.expected = token === undefined ? undefined : this.digest(token);
  }

  verify(candidate: string): boolean {
    if (this.expected === undefined) {
      this.digest(candidate); // the same work either way
      return false;
    }
    return timingSafeEqual(this.digest(candidate), this.expected);
  }

  private digest(value: string): Buffer {
    return createHmac('sha256', this.hmacKey).update(value, 'utf8').digest();
  }
}

/**
 * Who is calling /admin: an operator session (`wadm_…`, see OperatorAuth) or the shared
 * ADMIN_TOKEN, which the route's SharedTokenPolicy may refuse (403 ADMIN_TOKEN_NOT_ALLOWED) —
 * always for `never`, in production for `development`.
 */
export class AdminAuthenticator {
  constructor(
    private readonly token: AdminTokenVerifier,
    private readonly operators: Pick<OperatorAuth, 'authenticate'>,
    private readonly opts: { production: boolean },
  ) {}

  async authenticate(bearer: string, policy: SharedTokenPolicy): Promise<AdminPrincipal> {
    if (looksLikeOperatorSession(bearer)) return this.operators.authenticate(bearer);
    if (!this.token.verify(bearer)) throw new AppError('INVALID_ADMIN_TOKEN');
    if (policy === 'never' || (policy === 'development' && this.opts.production)) throw new AppError('ADMIN_TOKEN_NOT_ALLOWED');
    return { kind: 'bootstrap-token' };
  }
}
