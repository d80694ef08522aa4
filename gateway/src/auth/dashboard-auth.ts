import { createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { hash as argon2Hash, verify as argon2Verify } from '@node-rs/argon2';
import { Secret, TOTP } from 'otpauth';
import { AppError, isUniqueViolation, PeriodicTask, SecretBox, type Logger } from '@wallet/platform';
import type { CompanyStatus } from '../persistence/company.store.js';
import type { Queryable } from '../persistence/sql.js';
import { isoCol } from '../persistence/sql.js';
import { DashboardLockouts, type LockoutPolicy } from './dashboard-lockouts.js';

export type DashboardRole = 'ADMIN' | 'OPERATOR' | 'VIEWER';
export const DASHBOARD_ROLES: readonly DashboardRole[] = ['ADMIN', 'OPERATOR', 'VIEWER'];

/** Who is behind a dashboard session (CONTRACT §5). */
export interface SessionPrincipal {
  sessionId: string;
  userId: string;
  email: string;
  role: DashboardRole;
  companyId: string;
  companyName: string;
  expiresAt: string;
}

export interface DashboardUser {
  id: string;
  companyId: string;
  email: string;
  role: DashboardRole;
  createdAt: string;
  /** Null while an invited user has not confirmed a first TOTP code. */
  activatedAt: string | null;
  disabledAt: string | null;
}

/** What the operator gets for an invited user: a link to hand to the user, never a password or secret. */
export interface InvitedDashboardUser extends DashboardUser {
  invitationUrl: string;
  invitationExpiresAt: string;
}

/** What the holder of an invitation may see before redeeming it. */
export interface InvitationView {
  email: string;
  role: DashboardRole;
  companyName: string;
  status: 'PENDING' | 'ACCEPTED';
  expiresAt: string;
}

/** Database access: single statements, and a transaction where several must agree. */
export interface DashboardDb extends Queryable {
  tx<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
}

export interface DashboardAuthOptions {
  /** HMAC key for session tokens (the API-key pepper, domain-separated). */
  pepper: string;
  /** Encrypts TOTP secrets at rest (SecretBox: AES-256-GCM, key = SHA-256 of GATEWAY_ENCRYPTION_KEY). */
  secretKey: string;
  sessionTtlSeconds: number;
  /** Shown in authenticator apps. */
  issuer: string;
  /** Per-account lockout window and duration (the failure limits are fixed: 10 passwords, 5 codes). */
  lockout: LockoutPolicy;
  /** How long an invitation can be redeemed (72 h). */
  invitationTtlSeconds: number;
  /** Origin of the dashboard page in invitation links (`https://…`); without it the link is a path on the gateway. */
  publicUrl?: string;
}

const SESSION_PREFIX = 'wsess_';
const INVITATION_PREFIX = 'winv_';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SESSION_TOKEN = /^wsess_[0-9A-Za-z]{43}$/;
/** `winv_` + 43 base62 characters (256 bits). */
export const INVITATION_TOKEN = /^winv_[0-9A-Za-z]{43}$/;
const TOTP_PERIOD = 30;
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

interface UserRow {
  id: string; company_id: string; email: string; role: DashboardRole; created_at: string; activated_at: string | null; disabled_at: string | null;
}
const USER_COLS = `id::text as id, company_id::text as company_id, email, role, ${isoCol('created_at', 'created_at')}, `
  + `${isoCol('activated_at', 'activated_at')}, ${isoCol('disabled_at', 'disabled_at')}`;
const toUser = (r: UserRow): DashboardUser => ({
  id: r.id, companyId: r.company_id, email: r.email, role: r.role, createdAt: r.created_at, activatedAt: r.activated_at, disabledAt: r.disabled_at,
});

/** An invitation with its user, as every redeeming step reads it. */
interface InvitationRow {
  id: string; user_id: string; email: string; role: DashboardRole; company_name: string; expires_at: string; live: boolean;
  accepted: boolean; used: boolean; revoked: boolean; activated: boolean; disabled: boolean; totp_secret_enc: string | null;
}

/**
 * Dashboard users, their sessions and TOTP second factor, in the gateway's schema.
 * - Passwords: argon2id. Login answers the same INVALID_CREDENTIALS, after the same work, whether
 *   the e-mail exists or not (a dummy hash is verified for unknown e-mails).
 * - Lockouts (dashboard-lockouts.ts): 10 wrong passwords for one e-mail from one client IP in the
 *   window lock that caller out of that account (not the owner elsewhere); 5 wrong TOTP codes lock
 *   the account whatever the IPs. An unknown e-mail locks the same way.
 * - Sessions: `wsess_` + 43 base62 characters (256 bits), stored as an HMAC, 8 h by default,
 *   revocable (logout, user disabled); every request re-reads the session, user and company.
 * - TOTP (RFC 6238, SHA-1, 6 digits, 30 s, ±1 step): a code is accepted once — the last accepted
 *   time step is kept per user and only a later step passes (no replay).
 * - Self-enrolment: an invited user has no password and no secret until they redeem a single-use
 *   invitation (`winv_` + 256 bits, stored as an HMAC): they choose the password, receive the
 *   secret, and only a first valid TOTP code activates the account. The operator who invited them
 *   never holds either credential.
 */
export class DashboardAuth {
  private readonly box: SecretBox;
  private dummyHash: Promise<string> | undefined;
  private readonly purge: PeriodicTask;
  readonly lockouts: DashboardLockouts;

  constructor(private readonly db: DashboardDb, private readonly opts: DashboardAuthOptions, private readonly log: Logger) {
    this.box = new SecretBox(opts.secretKey);
    this.lockouts = new DashboardLockouts(db, opts.pepper, opts.lockout, log);
    this.purge = new PeriodicTask('dashboard-auth-purge', 60 * 60_000, () => this.purgeExpired(), log);
  }

  /** Hourly deletion of dead sessions, lockout rows and invitations. */
  start(): void {
    this.purge.start();
  }

  close(): Promise<void> {
    return this.purge.stop();
  }

  // ───────────── users (admin) ─────────────

  /** Development provisioning (DASHBOARD_ENROLMENT=direct): the operator sets the password and receives the TOTP secret. */
  async createUser(companyId: string, input: { email: string; password: string; role: DashboardRole }): Promise<DashboardUser & { totpSecret: string; otpauthUrl: string }> {
    await this.requireCompany(companyId);
    const email = normalizeEmail(input.email);
    const secret = new Secret({ size: 20 });
    const passwordHash = await argon2Hash(input.password, ARGON2);
    const [row] = await this.insertUnique(() => this.db.query<UserRow>(
      `insert into gateway.dashboard_users (id, company_id, email, password_hash, role, totp_secret_enc, activated_at)
       values (?::uuid, ?::uuid, ?, ?, ?, ?, now()) returning ${USER_COLS}`,
      [randomUUID(), companyId, email, passwordHash, input.role, this.box.seal(secret.base32)])) as [UserRow];
    const totp = this.totp(secret.base32, email);
    this.log.info({ userId: row.id, companyId, role: input.role }, 'dashboard user created');
    return { ...toUser(row), totpSecret: secret.base32, otpauthUrl: totp.toString() };
  }

  /**
   * Production provisioning: the user exists (e-mail reserved, not active, no credentials) with a
   * single-use invitation; the link goes to the user (CredentialDelivery), in production never to an operator.
   * `q`: the caller's transaction (an approved request applies it with its own state change).
   */
  async inviteUser(companyId: string, input: { email: string; role: DashboardRole }, q: Queryable = this.db): Promise<InvitedDashboardUser> {
    await this.requireCompany(companyId);
    const email = normalizeEmail(input.email);
    const token = `${INVITATION_PREFIX}${randomBase62(43)}`;
    const [row] = await this.insertUnique(() => q.query<UserRow & { invitation_expires_at: string }>(
      `with u as (
         insert into gateway.dashboard_users (id, company_id, email, role) values (?::uuid, ?::uuid, ?, ?) returning *
       ), i as (
         insert into gateway.dashboard_invitations (id, user_id, token_hash, expires_at)
         select ?::uuid, u.id, ?, now() + ?::int * interval '1 second' from u returning expires_at
       )
       select ${USER_COLS}, (select ${isoCol('i.expires_at', 'e')} from i) as invitation_expires_at from u`,
      [randomUUID(), companyId, email, input.role, randomUUID(), this.hmac('invitation', token), this.opts.invitationTtlSeconds])) as [UserRow & { invitation_expires_at: string }];
    this.log.info({ userId: row.id, companyId, role: input.role }, 'dashboard user invited');
    return { ...toUser(row), invitationUrl: this.invitationUrl(token), invitationExpiresAt: row.invitation_expires_at };
  }

  /**
   * A new invitation for a user who has not activated yet (the first one expired or was lost):
   * earlier invitations are revoked and anything chosen with them (password, secret) is cleared.
   */
  async reinviteUser(companyId: string, userId: string, q?: Queryable): Promise<InvitedDashboardUser> {
    const token = `${INVITATION_PREFIX}${randomBase62(43)}`;
    const within = async (tx: Queryable) => {
      const [u] = await tx.query<UserRow>(
        `select ${USER_COLS} from gateway.dashboard_users where id = ?::uuid and company_id = ?::uuid for update`, [userId, companyId]);
      if (!u) throw new AppError('USER_NOT_FOUND');
      if (u.activated_at || u.disabled_at) throw new AppError('USER_ALREADY_ACTIVE');
      await tx.query(
        `update gateway.dashboard_invitations set revoked_at = now() where user_id = ?::uuid and used_at is null and revoked_at is null`, [userId]);
      await tx.query(
        `update gateway.dashboard_users set password_hash = null, totp_secret_enc = null, totp_last_step = null where id = ?::uuid`, [userId]);
      const [i] = await tx.query<{ expires_at: string }>(
        `insert into gateway.dashboard_invitations (id, user_id, token_hash, expires_at)
         values (?::uuid, ?::uuid, ?, now() + ?::int * interval '1 second') returning ${isoCol('expires_at', 'expires_at')}`,
        [randomUUID(), userId, this.hmac('invitation', token), this.opts.invitationTtlSeconds]) as [{ expires_at: string }];
      return { user: toUser(u), expiresAt: i.expires_at };
    };
    const out = q ? await within(q) : await this.db.tx(within);
    this.log.info({ userId, companyId }, 'dashboard user re-invited');
    return { ...out.user, invitationUrl: this.invitationUrl(token), invitationExpiresAt: out.expiresAt };
  }

  async listUsers(companyId: string): Promise<DashboardUser[]> {
    const rows = await this.db.query<UserRow>(
      `select ${USER_COLS} from gateway.dashboard_users where company_id = ?::uuid order by created_at, id`, [companyId]);
    return rows.map(toUser);
  }

  /** Disables the user and revokes every session and open invitation of theirs at once. */
  async disableUser(companyId: string, userId: string): Promise<DashboardUser> {
    const rows = await this.db.query<UserRow>(
      `with u as (update gateway.dashboard_users set disabled_at = coalesce(disabled_at, now())
                   where id = ?::uuid and company_id = ?::uuid returning *),
            s as (update gateway.dashboard_sessions set revoked_at = now()
                   where user_id in (select id from u) and revoked_at is null returning 1),
            i as (update gateway.dashboard_invitations set revoked_at = now()
                   where user_id in (select id from u) and used_at is null and revoked_at is null returning 1)
       select ${USER_COLS} from u`, [userId, companyId]);
    if (!rows[0]) throw new AppError('USER_NOT_FOUND');
    return toUser(rows[0]);
  }

  // ───────────── invitations (the invited user, no session) ─────────────

  /** What an invitation is for, while it can still be redeemed. */
  async lookupInvitation(token: string): Promise<InvitationView> {
    const inv = await this.redeemable(token, 'lookup');
    return { email: inv.email, role: inv.role, companyName: inv.company_name, status: inv.accepted ? 'ACCEPTED' : 'PENDING', expiresAt: inv.expires_at };
  }

  /**
   * Step 1: the user chooses the password and receives a fresh TOTP secret (shown once). The
   * invitation moves to ACCEPTED in the same conditional statement, so it is accepted once: a
   * second acceptance (replay, or someone else holding the link) is INVITATION_USED and writes
   * nothing. The account is still inactive.
   */
  async acceptInvitation(token: string, password: string): Promise<{ email: string; totpSecret: string; otpauthUrl: string; expiresAt: string }> {
    const inv = await this.redeemable(token, 'accept');
    const secret = new Secret({ size: 20 });
    const passwordHash = await argon2Hash(password, ARGON2);
    const rows = await this.db.query<{ id: string }>(
      `with i as (
         update gateway.dashboard_invitations i set accepted_at = now()
          where i.id = ?::uuid and i.accepted_at is null and i.used_at is null and i.revoked_at is null and i.expires_at > now()
            and exists (select 1 from gateway.dashboard_users u where u.id = i.user_id and u.activated_at is null and u.disabled_at is null)
          returning i.user_id
       )
       update gateway.dashboard_users u set password_hash = ?, totp_secret_enc = ?, totp_last_step = null
         from i where u.id = i.user_id returning u.id::text as id`,
      [inv.id, passwordHash, this.box.seal(secret.base32)]);
    if (!rows[0]) {
      // Lost a race with another acceptance, a revocation or the expiry: say which.
      await this.redeemable(token, 'accept');
      throw new AppError('INVITATION_USED');
    }
    this.log.info({ userId: inv.user_id, invitationId: inv.id }, 'dashboard invitation accepted');
    return { email: inv.email, totpSecret: secret.base32, otpauthUrl: this.totp(secret.base32, inv.email).toString(), expiresAt: inv.expires_at };
  }

  /**
   * Step 2: a first code of the new secret proves the user holds it; only then is the account
   * active (and the invitation USED). Wrong codes count toward the TOTP lockout of the e-mail. The
   * code's time step is recorded, so the same code cannot then sign an approval.
   */
  async confirmInvitation(token: string, code: string, now = Date.now()): Promise<DashboardUser> {
    const inv = await this.redeemable(token, 'confirm');
    if (!/^\d{6}$/.test(code)) throw new AppError('INVALID_TOTP_CODE');
    const sealed = inv.totp_secret_enc!;
    const user = await this.lockouts.attempt('totp', inv.email, async () => {
      const step = this.matchStep(this.box.open(sealed), inv.email, code, now);
      if (step === undefined) return undefined;
      return this.db.tx(async (tx) => {
        const [i] = await tx.query<{ ok: boolean }>(
          `select (used_at is null and revoked_at is null and accepted_at is not null and expires_at > now()) as ok
             from gateway.dashboard_invitations where id = ?::uuid for update`, [inv.id]);
        if (!i?.ok) throw new AppError('INVITATION_USED');
        const [u] = await tx.query<UserRow>(
          `update gateway.dashboard_users set activated_at = now(), totp_last_step = ?::bigint
            where id = ?::uuid and activated_at is null and disabled_at is null and totp_secret_enc = ?
            returning ${USER_COLS}`, [String(step), inv.user_id, sealed]);
        if (!u) throw new AppError('INVITATION_USED');
        await tx.query('update gateway.dashboard_invitations set used_at = now() where id = ?::uuid', [inv.id]);
        return toUser(u);
      });
    }, { userId: inv.user_id });
    if (!user) throw new AppError('INVALID_TOTP_CODE');
    this.log.info({ userId: user.id, invitationId: inv.id }, 'dashboard user activated');
    return user;
  }

  /**
   * The invitation behind a token, refused with the precise reason: unknown → 404
   * INVITATION_NOT_FOUND; used (or accepted, for a second acceptance) → 410 INVITATION_USED;
   * revoked, its user disabled, or past `expires_at` → 410 INVITATION_EXPIRED; confirming before
   * accepting → 409 INVALID_STATE_TRANSITION.
   */
  private async redeemable(token: string, step: 'lookup' | 'accept' | 'confirm'): Promise<InvitationRow> {
    if (!INVITATION_TOKEN.test(token)) throw new AppError('INVITATION_NOT_FOUND');
    const hash = this.hmac('invitation', token);
    const [r] = await this.db.query<InvitationRow & { token_hash: string }>(
      `select i.id::text as id, i.user_id::text as user_id, i.token_hash, u.email, u.role, c.name as company_name,
              ${isoCol('i.expires_at', 'expires_at')}, i.expires_at > now() as live,
              i.accepted_at is not null as accepted, i.used_at is not null as used, i.revoked_at is not null as revoked,
              u.activated_at is not null as activated, u.disabled_at is not null as disabled, u.totp_secret_enc
         from gateway.dashboard_invitations i
         join gateway.dashboard_users u on u.id = i.user_id
         join gateway.companies c on c.id = u.company_id
        where i.token_hash = ?`, [hash]);
    if (!r || !timingSafeEqual(Buffer.from(r.token_hash), Buffer.from(hash))) throw new AppError('INVITATION_NOT_FOUND');
    if (r.used || r.activated) throw new AppError('INVITATION_USED');
    if (r.revoked || r.disabled || !r.live) throw new AppError('INVITATION_EXPIRED');
    if (step === 'accept' && r.accepted) throw new AppError('INVITATION_USED');
    if (step === 'confirm' && (!r.accepted || !r.totp_secret_enc)) throw new AppError('INVALID_STATE_TRANSITION');
    return r;
  }

  // ───────────── sessions ─────────────

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
    const [u] = await this.db.query<{ id: string; password_hash: string | null; usable: boolean; company_status: CompanyStatus }>(
      `select u.id::text as id, u.password_hash, (u.disabled_at is null and u.activated_at is not null) as usable, c.status as company_status
         from gateway.dashboard_users u join gateway.companies c on c.id = u.company_id where u.email = ?`, [email]);
    const user = await this.lockouts.attempt('password', email, async () => {
      // Same work whether or not the user exists: no e-mail enumeration by timing.
      const ok = await argon2Verify(u?.password_hash ?? await this.dummy(), password).catch(() => false);
      return u && ok && u.usable ? u : undefined;
    }, { userId: u?.id, clientIp });
    if (!user) throw new AppError('INVALID_CREDENTIALS');
    await this.lockouts.assertNotLocked(email);
    if (user.company_status !== 'ACTIVE') throw new AppError('COMPANY_INACTIVE');
    const token = `${SESSION_PREFIX}${randomBase62(43)}`;
    const [s] = await this.db.query<{ expires_at: string }>(
      `insert into gateway.dashboard_sessions (id, token_hash, user_id, expires_at)
       values (?::uuid, ?, ?::uuid, now() + (?::bigint * interval '1 second')) returning ${isoCol('expires_at', 'expires_at')}`,
      [randomUUID(), this.hmac('session', token), user.id, String(this.opts.sessionTtlSeconds)]) as [{ expires_at: string }];
    this.log.info({ userId: user.id }, 'dashboard login');
    return { token, expiresAt: s.expires_at };
  }

  /** The session behind a bearer token; SESSION_EXPIRED when unknown, expired, revoked or its user disabled. */
  async authenticate(token: string): Promise<SessionPrincipal> {
    if (!SESSION_TOKEN.test(token)) throw new AppError('SESSION_EXPIRED');
    const hash = this.hmac('session', token);
    const [r] = await this.db.query<{
      session_id: string; token_hash: string; user_id: string; email: string; role: DashboardRole; company_id: string;
      company_name: string; company_status: CompanyStatus; expires_at: string;
    }>(
      `select s.id::text as session_id, s.token_hash, u.id::text as user_id, u.email, u.role, c.id::text as company_id,
              c.name as company_name, c.status as company_status, ${isoCol('s.expires_at', 'expires_at')}
         from gateway.dashboard_sessions s
         join gateway.dashboard_users u on u.id = s.user_id
         join gateway.companies c on c.id = u.company_id
        where s.token_hash = ? and s.revoked_at is null and s.expires_at > now() and u.disabled_at is null`, [hash]);
    if (!r || !timingSafeEqual(Buffer.from(r.token_hash), Buffer.from(hash))) throw new AppError('SESSION_EXPIRED');
    if (r.company_status !== 'ACTIVE') throw new AppError('COMPANY_INACTIVE');
    return {
      sessionId: r.session_id, userId: r.user_id, email: r.email, role: r.role, companyId: r.company_id,
      companyName: r.company_name, expiresAt: r.expires_at,
    };
  }

  async logout(sessionId: string): Promise<void> {
    await this.db.query('update gateway.dashboard_sessions set revoked_at = now() where id = ?::uuid and revoked_at is null', [sessionId]);
  }

  /** Expired and revoked sessions older than a day, lockout rows with nothing left to count, invitations dead for a week. */
  async purgeExpired(): Promise<void> {
    await this.db.query(`delete from gateway.dashboard_sessions where expires_at < now() - interval '1 day' or revoked_at < now() - interval '1 day'`);
    await this.db.query(`delete from gateway.dashboard_invitations where coalesce(used_at, revoked_at, expires_at) < now() - interval '7 days'`);
    await this.lockouts.purge();
  }

  // ───────────── TOTP ─────────────

  /**
   * ACCOUNT_LOCKED when the user's account is locked: for TOTP-gated actions, checked before
   * anything else is looked at, so a locked user gets the same answer whatever the approval.
   */
  async assertNotLocked(email: string): Promise<void> {
    await this.lockouts.assertNotLocked(email);
  }

  /**
   * Checks a 6-digit code of the user's authenticator and consumes it: the matched time step must
   * be later than the last one accepted for this user (compare-and-set), so a code works once.
   * The attempt counts toward the user's TOTP lockout (5 wrong codes); ACCOUNT_LOCKED while locked.
   */
  async verifyTotp(userId: string, code: string, now = Date.now()): Promise<void> {
    if (!/^\d{6}$/.test(code)) throw new AppError('INVALID_TOTP_CODE');
    const [u] = await this.db.query<{ email: string; totp_secret_enc: string }>(
      'select email, totp_secret_enc from gateway.dashboard_users where id = ?::uuid and disabled_at is null and activated_at is not null', [userId]);
    if (!u) throw new AppError('INVALID_TOTP_CODE');
    const ok = await this.lockouts.attempt('totp', u.email, async () => {
      const step = this.matchStep(this.box.open(u.totp_secret_enc), u.email, code, now);
      if (step === undefined) return undefined;
      const consumed = await this.db.query(
        `update gateway.dashboard_users set totp_last_step = ?::bigint
          where id = ?::uuid and (totp_last_step is null or totp_last_step < ?::bigint) returning 1`,
        [String(step), userId, String(step)]);
      if (consumed.length === 0) {
        this.log.warn({ userId }, 'TOTP code replayed');
        return undefined;
      }
      return true;
    }, { userId });
    if (!ok) throw new AppError('INVALID_TOTP_CODE');
  }

  /** The time step a code matches (±1 step around `now`), or undefined. */
  private matchStep(base32: string, email: string, code: string, now: number): number | undefined {
    const delta = this.totp(base32, email).validate({ token: code, timestamp: now, window: 1 });
    return delta === null ? undefined : Math.floor(now / 1000 / TOTP_PERIOD) + delta;
  }

  private totp(base32: string, email: string): TOTP {
    return new TOTP({ issuer: this.opts.issuer, label: email, algorithm: 'SHA1', digits: 6, period: TOTP_PERIOD, secret: Secret.fromBase32(base32) });
  }

  // ───────────── helpers ─────────────

  /** Stored form of a session or invitation token: HMAC-SHA256 under the pepper, domain-separated. */
  private hmac(kind: 'session' | 'invitation', token: string): string {
    return createHmac('sha256', this.opts.pepper).update(`${kind}:${token}`, 'utf8').digest('hex');
  }

  /** The dashboard page with the token in the fragment: browsers never send it to a server (no access log, proxy or Referer sees it). */
  private invitationUrl(token: string): string {
    return `${(this.opts.publicUrl ?? '').replace(/\/+$/, '')}/dashboard#invitation=${token}`;
  }

  private async requireCompany(companyId: string): Promise<void> {
    const companies = await this.db.query<{ n: number }>('select 1 as n from gateway.companies where id = ?::uuid', [companyId]);
    if (!companies[0]) throw new AppError('COMPANY_NOT_FOUND');
  }

  /** An insert into dashboard_users; a taken e-mail is a 400 on `email`. */
  private async insertUnique<T>(insert: () => Promise<T>): Promise<T> {
    try {
      return await insert();
    } catch (err) {
      if (isUniqueViolation(err)) {
        throw new AppError('INVALID_REQUEST', undefined, { fields: [{ path: 'email', message: 'ya existe un usuario con este correo' }] });
      }
      throw err;
    }
  }

  private dummy(): Promise<string> {
    return (this.dummyHash ??= argon2Hash(randomBytes(16).toString('hex'), ARGON2));
  }
}

function normalizeEmail(raw: string): string {
  return raw.trim().toLowerCase();
}

export function looksLikeSessionToken(token: string): boolean {
  return token.startsWith(SESSION_PREFIX);
}
