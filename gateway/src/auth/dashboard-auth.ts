import { PeriodicTask, SecretBox, type Logger } from '@wallet/platform';
import { DashboardSessionStore } from '../persistence/dashboard-session.store.js';
import { DashboardUserStore } from '../persistence/dashboard-user.store.js';
import type { Queryable } from '../persistence/sql.js';
import { DashboardLockouts } from './dashboard-lockouts.js';
import { DashboardInvitations } from './dashboard/invitations.js';
import type {
  DashboardAuthOptions,
  DashboardDb,
  DashboardDeps,
  DashboardRole,
  DashboardUser,
  InvitationView,
  InvitedDashboardUser,
  SessionPrincipal,
} from './dashboard/model.js';
import { SESSION_PREFIX } from './dashboard/model.js';
import { DashboardSessions } from './dashboard/sessions.js';
import { DashboardTotp } from './dashboard/totp.js';
import { DashboardUsers } from './dashboard/users.js';
import { Passwords, tokenHash, TotpCodes } from './secrets.js';

export {
  DASHBOARD_ROLES,
  INVITATION_TOKEN,
  type DashboardAuthOptions,
  type DashboardDb,
  type DashboardRole,
  type DashboardUser,
  type InvitationView,
  type InvitedDashboardUser,
  type SessionPrincipal,
} from './dashboard/model.js';
export { ARGON2, randomBase62 } from './secrets.js';

/**
 * Dashboard users, their sessions and TOTP second factor, in the gateway's schema: one object for
 * the routes, each part in its own file under auth/dashboard/.
 * - Passwords: argon2id. Login answers the same INVALID_CREDENTIALS, after the same work, whether
 *   the e-mail exists or not (a dummy hash is verified for unknown e-mails).
 * - Lockouts (dashboard-lockouts.ts): 10 wrong passwords for one e-mail from one client IP in the
 *   window lock that caller out of that account (not the owner elsewhere); 5 wrong TOTP codes lock
 *   the account whatever the IPs. An unknown e-mail locks the same way.
 * - Sessions (dashboard/sessions.ts): `wsess_` + 43 base62 characters (256 bits), stored as an
 *   HMAC, 8 h by default, revocable (logout, user disabled); every request re-reads the session,
 *   user and company.
 * - TOTP (dashboard/totp.ts; RFC 6238, SHA-1, 6 digits, 30 s, ±1 step): a code is accepted once —
 *   the last accepted time step is kept per user and only a later step passes (no replay).
 * - Self-enrolment (dashboard/users.ts, dashboard/invitations.ts): an invited user has no password
 *   and no secret until they redeem a single-use invitation (`winv_` + 256 bits, stored as an
 *   HMAC): they choose the password, receive the secret, and only a first valid TOTP code
 *   activates the account. The operator who invited them never holds either credential.
 */
export class DashboardAuth {
  private readonly purge: PeriodicTask;
  readonly lockouts: DashboardLockouts;
  private readonly users: DashboardUsers;
  private readonly invitations: DashboardInvitations;
  private readonly sessions: DashboardSessions;
  private readonly totp: DashboardTotp;

  constructor(db: DashboardDb, opts: DashboardAuthOptions, log: Logger) {
    this.lockouts = new DashboardLockouts(db, opts.pepper, opts.lockout, log);
    const deps: DashboardDeps = {
      db,
      opts,
      log,
      box: new SecretBox(opts.secretKey),
      passwords: new Passwords(),
      codes: new TotpCodes(opts.issuer),
      lockouts: this.lockouts,
      users: new DashboardUserStore(),
      sessions: new DashboardSessionStore(),
      hmac: (kind, token) => tokenHash(opts.pepper, kind, token),
    };
    this.users = new DashboardUsers(deps);
    this.invitations = new DashboardInvitations(deps);
    this.sessions = new DashboardSessions(deps);
    this.totp = new DashboardTotp(deps);
    this.purge = new PeriodicTask('dashboard-auth-purge', 60 * 60_000, () => this.purgeExpired(), log);
  }

  /** Hourly deletion of dead sessions, lockout rows and invitations. */
  start(): void {
    this.purge.start();
  }

  close(): Promise<void> {
    return this.purge.stop();
  }

  // ───────────── users (admin): dashboard/users.ts ─────────────

  createUser(
    companyId: string,
    input: { email: string; password: string; role: DashboardRole },
  ): Promise<DashboardUser & { totpSecret: string; otpauthUrl: string }> {
    return this.users.createUser(companyId, input);
  }

  inviteUser(companyId: string, input: { email: string; role: DashboardRole }, q?: Queryable): Promise<InvitedDashboardUser> {
    return this.users.inviteUser(companyId, input, q);
  }

  reinviteUser(companyId: string, userId: string, q?: Queryable): Promise<InvitedDashboardUser> {
    return this.users.reinviteUser(companyId, userId, q);
  }

  listUsers(companyId: string): Promise<DashboardUser[]> {
    return this.users.listUsers(companyId);
  }

  disableUser(companyId: string, userId: string): Promise<DashboardUser> {
    return this.users.disableUser(companyId, userId);
  }

  // ───────────── invitations (the invited user, no session): dashboard/invitations.ts ─────────────

  lookupInvitation(token: string): Promise<InvitationView> {
    return this.invitations.lookupInvitation(token);
  }

  acceptInvitation(token: string, password: string): Promise<{ email: string; totpSecret: string; otpauthUrl: string; expiresAt: string }> {
    return this.invitations.acceptInvitation(token, password);
  }

  confirmInvitation(token: string, code: string, now?: number): Promise<DashboardUser> {
    return this.invitations.confirmInvitation(token, code, now);
  }

  // ───────────── sessions: dashboard/sessions.ts ─────────────

  login(emailRaw: string, password: string, clientIp?: string): Promise<{ token: string; expiresAt: string }> {
    return this.sessions.login(emailRaw, password, clientIp);
  }

  authenticate(token: string): Promise<SessionPrincipal> {
    return this.sessions.authenticate(token);
  }

  logout(sessionId: string): Promise<void> {
    return this.sessions.logout(sessionId);
  }

  purgeExpired(): Promise<void> {
    return this.sessions.purgeExpired();
  }

  // ───────────── TOTP: dashboard/totp.ts ─────────────

  assertNotLocked(email: string): Promise<void> {
    return this.totp.assertNotLocked(email);
  }

  verifyTotp(userId: string, code: string, now?: number): Promise<void> {
    return this.totp.verifyTotp(userId, code, now);
  }
}

export function looksLikeSessionToken(token: string): boolean {
  return token.startsWith(SESSION_PREFIX);
}
