import { randomUUID, timingSafeEqual } from 'node:crypto';
import { AppError } from '@wallet/platform';
import { randomBase62 } from '../secrets.js';
import { normalizeEmail, SESSION_PREFIX, SESSION_TOKEN, type DashboardDeps, type SessionPrincipal } from './model.js';

/**
 * Dashboard sessions: `wsess_` + 43 base62 characters (256 bits), stored as an HMAC, 8 h by
 * default, revocable (logout, user disabled); every request re-reads the session, user and company.
 */
export class DashboardSessions {
  constructor(private readonly d: DashboardDeps) {}

  /**
   * Password login. The attempt counts toward the lockout of this e-mail from this client IP
   * before the password is checked (ACCOUNT_LOCKED while that caller is locked, even with the right
   * password); a success clears that caller's failures. Wrong passwords from one IP never lock the
   * user out of another IP: whoever knows an e-mail cannot keep its owner out. The account's own
   * lock (wrong TOTP codes: someone holds the password or a session) refuses the right password
   * from any IP, and is told only to whoever gave the right password. Unknown, inactive (invited)
   * and disabled users get INVALID_CREDENTIALS after the same work, and count the same.
   */
  async login(emailRaw: string, password: string, clientIp?: string): Promise<{ token: string; expiresAt: string }> {
    const email = normalizeEmail(emailRaw);
    const u = await this.d.users.findForLogin(this.d.db, email);
    const user = await this.d.lockouts.attempt(
      'password',
      email,
      async () => {
        // Same work whether or not the user exists: no e-mail enumeration by timing.
        const ok = await this.d.passwords.verify(u?.passwordHash, password);
        return u && ok && u.usable ? u : undefined;
      },
      { userId: u?.id, clientIp },
    );
    if (!user) throw new AppError('INVALID_CREDENTIALS');
    await this.d.lockouts.assertNotLocked(email);
    if (user.companyStatus !== 'ACTIVE') throw new AppError('COMPANY_INACTIVE');
    const token = `${SESSION_PREFIX}${randomBase62(43)}`;
    const expiresAt = await this.d.sessions.insert(this.d.db, {
      id: randomUUID(),
      tokenHash: this.d.hmac('session', token),
      userId: user.id,
      ttlSeconds: this.d.opts.sessionTtlSeconds,
    });
    this.d.log.info({ userId: user.id }, 'dashboard login');
    return { token, expiresAt };
  }

  /** The session behind a bearer token; SESSION_EXPIRED when unknown, expired, revoked or its user disabled. */
  async authenticate(token: string): Promise<SessionPrincipal> {
    if (!SESSION_TOKEN.test(token)) throw new AppError('SESSION_EXPIRED');
    const hash = this.d.hmac('session', token);
    const r = await this.d.sessions.findLive(this.d.db, hash);
    if (!r || !timingSafeEqual(Buffer.from(r.tokenHash), Buffer.from(hash))) throw new AppError('SESSION_EXPIRED');
    if (r.companyStatus !== 'ACTIVE') throw new AppError('COMPANY_INACTIVE');
    return {
      sessionId: r.sessionId,
      userId: r.userId,
      email: r.email,
      role: r.role,
      companyId: r.companyId,
      companyName: r.companyName,
      profile: r.profile,
      expiresAt: r.expiresAt,
    };
  }

  async logout(sessionId: string): Promise<void> {
    await this.d.sessions.revoke(this.d.db, sessionId);
  }

  /** Expired and revoked sessions older than a day, lockout rows with nothing left to count, invitations dead for a week. */
  async purgeExpired(): Promise<void> {
    await this.d.sessions.purge(this.d.db);
    await this.d.users.purgeInvitations(this.d.db);
    await this.d.lockouts.purge();
  }
}
