import { createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { hash as argon2Hash, verify as argon2Verify } from '@node-rs/argon2';
import { Secret, TOTP } from 'otpauth';
import { AppError, isUniqueViolation, PeriodicTask, SecretBox, type Logger } from '@wallet/platform';
import type { CompanyStatus } from '../persistence/company.repository.js';
import type { Queryable } from '../persistence/sql.js';
import { isoCol } from '../persistence/sql.js';

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
  disabledAt: string | null;
}

export interface DashboardAuthOptions {
  /** HMAC key for session tokens (the API-key pepper, domain-separated). */
  pepper: string;
  /** Encrypts TOTP secrets at rest (SecretBox: AES-256-GCM, key = SHA-256 of GATEWAY_ENCRYPTION_KEY). */
  secretKey: string;
  sessionTtlSeconds: number;
  /** Shown in authenticator apps. */
  issuer: string;
}

const SESSION_PREFIX = 'wsess_';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SESSION_TOKEN = /^wsess_[0-9A-Za-z]{43}$/;
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
  id: string; company_id: string; email: string; role: DashboardRole; created_at: string; disabled_at: string | null;
}
const USER_COLS = `id::text as id, company_id::text as company_id, email, role, ${isoCol('created_at', 'created_at')}, ${isoCol('disabled_at', 'disabled_at')}`;
const toUser = (r: UserRow): DashboardUser => ({ id: r.id, companyId: r.company_id, email: r.email, role: r.role, createdAt: r.created_at, disabledAt: r.disabled_at });

/**
 * Dashboard users, their sessions and TOTP second factor, in the gateway's schema.
 * - Passwords: argon2id. Login answers the same INVALID_CREDENTIALS, after the same work, whether
 *   the e-mail exists or not (a dummy hash is verified for unknown e-mails).
 * - Sessions: `wsess_` + 43 base62 characters (256 bits), stored as an HMAC, 8 h by default,
 *   revocable (logout, user disabled); every request re-reads the session, user and company.
 * - TOTP (RFC 6238, SHA-1, 6 digits, 30 s, ±1 step): a code is accepted once — the last accepted
 *   time step is kept per user and only a later step passes (no replay).
 */
export class DashboardAuth {
  private readonly box: SecretBox;
  private dummyHash: Promise<string> | undefined;
  private readonly purge: PeriodicTask;

  constructor(private readonly db: Queryable, private readonly opts: DashboardAuthOptions, private readonly log: Logger) {
    this.box = new SecretBox(opts.secretKey);
    this.purge = new PeriodicTask('dashboard-sessions-purge', 60 * 60_000, () => this.purgeSessions(), log);
  }

  /** Hourly deletion of sessions expired or revoked more than a day ago. */
  start(): void {
    this.purge.start();
  }

  close(): Promise<void> {
    return this.purge.stop();
  }

  // ───────────── users (admin) ─────────────

  async createUser(companyId: string, input: { email: string; password: string; role: DashboardRole }): Promise<DashboardUser & { totpSecret: string; otpauthUrl: string }> {
    const companies = await this.db.query<{ n: number }>('select 1 as n from gateway.companies where id = ?::uuid', [companyId]);
    if (!companies[0]) throw new AppError('COMPANY_NOT_FOUND');
    const email = input.email.trim().toLowerCase();
    const secret = new Secret({ size: 20 });
    const passwordHash = await argon2Hash(input.password, ARGON2);
    let row: UserRow;
    try {
      [row] = await this.db.query<UserRow>(
        `insert into gateway.dashboard_users (id, company_id, email, password_hash, role, totp_secret_enc)
         values (?::uuid, ?::uuid, ?, ?, ?, ?) returning ${USER_COLS}`,
        [randomUUID(), companyId, email, passwordHash, input.role, this.box.seal(secret.base32)]) as [UserRow];
    } catch (err) {
      if (isUniqueViolation(err)) {
        throw new AppError('INVALID_REQUEST', undefined, { fields: [{ path: 'email', message: 'ya existe un usuario con este correo' }] });
      }
      throw err;
    }
    const totp = this.totp(secret.base32, email);
    this.log.info({ userId: row.id, companyId, role: input.role }, 'dashboard user created');
    return { ...toUser(row), totpSecret: secret.base32, otpauthUrl: totp.toString() };
  }

  async listUsers(companyId: string): Promise<DashboardUser[]> {
    const rows = await this.db.query<UserRow>(
      `select ${USER_COLS} from gateway.dashboard_users where company_id = ?::uuid order by created_at, id`, [companyId]);
    return rows.map(toUser);
  }

  /** Disables the user and revokes every session of theirs at once. */
  async disableUser(companyId: string, userId: string): Promise<DashboardUser> {
    const rows = await this.db.query<UserRow>(
      `with u as (update gateway.dashboard_users set disabled_at = coalesce(disabled_at, now())
                   where id = ?::uuid and company_id = ?::uuid returning *),
            s as (update gateway.dashboard_sessions set revoked_at = now()
                   where user_id in (select id from u) and revoked_at is null returning 1)
       select ${USER_COLS} from u`, [userId, companyId]);
    if (!rows[0]) throw new AppError('USER_NOT_FOUND');
    return toUser(rows[0]);
  }

  // ───────────── sessions ─────────────

  async login(emailRaw: string, password: string): Promise<{ token: string; expiresAt: string }> {
    const email = emailRaw.trim().toLowerCase();
    const [u] = await this.db.query<{ id: string; password_hash: string; disabled_at: string | null; company_status: CompanyStatus }>(
      `select u.id::text as id, u.password_hash, u.disabled_at::text as disabled_at, c.status as company_status
         from gateway.dashboard_users u join gateway.companies c on c.id = u.company_id where u.email = ?`, [email]);
    // Same work whether or not the user exists: no e-mail enumeration by timing.
    const ok = await argon2Verify(u ? u.password_hash : await this.dummy(), password).catch(() => false);
    if (!u || !ok || u.disabled_at) throw new AppError('INVALID_CREDENTIALS');
    if (u.company_status !== 'ACTIVE') throw new AppError('COMPANY_INACTIVE');
    const token = `${SESSION_PREFIX}${randomBase62(43)}`;
    const [s] = await this.db.query<{ expires_at: string }>(
      `insert into gateway.dashboard_sessions (id, token_hash, user_id, expires_at)
       values (?::uuid, ?, ?::uuid, now() + (?::bigint * interval '1 second')) returning ${isoCol('expires_at', 'expires_at')}`,
      [randomUUID(), this.tokenHash(token), u.id, String(this.opts.sessionTtlSeconds)]) as [{ expires_at: string }];
    this.log.info({ userId: u.id }, 'dashboard login');
    return { token, expiresAt: s.expires_at };
  }

  /** The session behind a bearer token; SESSION_EXPIRED when unknown, expired, revoked or its user disabled. */
  async authenticate(token: string): Promise<SessionPrincipal> {
    if (!SESSION_TOKEN.test(token)) throw new AppError('SESSION_EXPIRED');
    const hash = this.tokenHash(token);
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

  /** Expired and revoked sessions older than a day are deleted. */
  async purgeSessions(): Promise<void> {
    await this.db.query(`delete from gateway.dashboard_sessions where expires_at < now() - interval '1 day' or revoked_at < now() - interval '1 day'`);
  }

  // ───────────── TOTP ─────────────

  /**
   * Checks a 6-digit code of the user's authenticator and consumes it: the matched time step must
   * be later than the last one accepted for this user (compare-and-set), so a code works once.
   */
  async verifyTotp(userId: string, code: string, now = Date.now()): Promise<void> {
    if (!/^\d{6}$/.test(code)) throw new AppError('INVALID_TOTP_CODE');
    const [u] = await this.db.query<{ email: string; totp_secret_enc: string }>(
      'select email, totp_secret_enc from gateway.dashboard_users where id = ?::uuid and disabled_at is null', [userId]);
    if (!u) throw new AppError('INVALID_TOTP_CODE');
    const delta = this.totp(this.box.open(u.totp_secret_enc), u.email).validate({ token: code, timestamp: now, window: 1 });
    if (delta === null) throw new AppError('INVALID_TOTP_CODE');
    const step = Math.floor(now / 1000 / TOTP_PERIOD) + delta;
    const consumed = await this.db.query(
      `update gateway.dashboard_users set totp_last_step = ?::bigint
        where id = ?::uuid and (totp_last_step is null or totp_last_step < ?::bigint) returning 1`,
      [String(step), userId, String(step)]);
    if (consumed.length === 0) {
      this.log.warn({ userId }, 'TOTP code replayed');
      throw new AppError('INVALID_TOTP_CODE');
    }
  }

  private totp(base32: string, email: string): TOTP {
    return new TOTP({ issuer: this.opts.issuer, label: email, algorithm: 'SHA1', digits: 6, period: TOTP_PERIOD, secret: Secret.fromBase32(base32) });
  }

  private tokenHash(token: string): string {
    return createHmac('sha256', this.opts.pepper).update(`session:${token}`, 'utf8').digest('hex');
  }

  private dummy(): Promise<string> {
    return (this.dummyHash ??= argon2Hash(randomBytes(16).toString('hex'), ARGON2));
  }

}

export function looksLikeSessionToken(token: string): boolean {
  return token.startsWith(SESSION_PREFIX);
}
