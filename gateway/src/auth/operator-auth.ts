import { createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { hash as argon2Hash, verify as argon2Verify } from '@node-rs/argon2';
import { Secret, TOTP } from 'otpauth';
import { AppError, isUniqueViolation, SecretBox, type Database, type Logger } from '@wallet/platform';
import type { AuditTrail } from '../audit/admin-audit.js';
import type { Queryable } from '../persistence/sql.js';
import { isoCol } from '../persistence/sql.js';
import { BOOTSTRAP_OPERATORS, type AdminPrincipal } from './admin-principal.js';
// Dashboard users and operators hash passwords the same way (argon2id, OWASP's first setting).
import { ARGON2, randomBase62 } from './dashboard-auth.js';
import { SignInLockouts, type LockEvent, type LockoutPolicy } from './dashboard-lockouts.js';

export type OperatorStatus = 'INVITED' | 'ACTIVE' | 'DISABLED';

export interface Operator {
  id: string;
  name: string;
  email: string;
  status: OperatorStatus;
  createdBy: string | null;
  createdAt: string;
  enrolledAt: string | null;
  disabledAt: string | null;
}

export type InvitedOperator = Operator & { enrollmentToken: string; enrollmentExpiresAt: string };

/** The operator without its enrolment token (what audit rows and stored results hold). */
export function toPublic(o: InvitedOperator): Operator & { enrollmentExpiresAt: string } {
  const { enrollmentToken: _secret, ...rest } = o;
  return rest;
}

export interface OperatorAuthOptions {
  /** HMAC key for session and enrollment tokens (the API-key pepper, domain-separated). */
  pepper: string;
  /** Encrypts TOTP secrets at rest (SecretBox, key from GATEWAY_ENCRYPTION_KEY). */
  secretKey: string;
  sessionTtlSeconds: number;
  /** In production the shared token may only bootstrap (BOOTSTRAP_OPERATORS active operators). */
  production: boolean;
  issuer: string;
  /** Sign-in lockouts (default 15 min window, 15 min lock; the limits are fixed: 10 passwords per caller, 5 codes per account). */
  lockout?: LockoutPolicy;
}

/** The operators' lockout window and duration unless configured (the dashboard's defaults). */
export const OPERATOR_LOCKOUT: LockoutPolicy = { windowSeconds: 900, lockSeconds: 900 };

const SESSION_PREFIX = 'wadm_';
const SESSION_TOKEN = /^wadm_[0-9A-Za-z]{43}$/;
const ENROLLMENT_PREFIX = 'wenr_';
const ENROLLMENT_TOKEN = /^wenr_[0-9A-Za-z]{43}$/;
/** How long an invitation can be redeemed. */
export const ENROLLMENT_TTL_SECONDS = 72 * 3600;
const TOTP_PERIOD = 30;

/** Whether a bearer credential is shaped like an operator session token. */
export function looksLikeOperatorSession(token: string): boolean {
  return token.startsWith(SESSION_PREFIX);
}

interface Row {
  id: string; name: string; email: string; created_by: string | null; created_at: string; enrolled_at: string | null;
  disabled_at: string | null; enrollment_expires_at: string | null;
}
const COLS = `id::text as id, name, email, created_by::text as created_by, ${isoCol('created_at', 'created_at')},
  ${isoCol('enrolled_at', 'enrolled_at')}, ${isoCol('disabled_at', 'disabled_at')}, ${isoCol('enrollment_expires_at', 'enrollment_expires_at')}`;
const toOperator = (r: Row): Operator => ({
  id: r.id, name: r.name, email: r.email, createdBy: r.created_by, createdAt: r.created_at, enrolledAt: r.enrolled_at, disabledAt: r.disabled_at,
  status: r.disabled_at ? 'DISABLED' : r.enrolled_at ? 'ACTIVE' : 'INVITED',
});

/**
 * Named operators of /admin: invitation → enrollment (the operator sets a password and receives a
 * TOTP secret; nobody else ever sees either) → login with password + TOTP → a short-lived session.
 * - Passwords: argon2id. Login answers the same OPERATOR_AUTH_FAILED, after the same work, whether
 *   the e-mail exists, the password is wrong, the code is wrong or the operator is disabled.
 * - Sessions: `wadm_` + 43 base62 (256 bits), stored as an HMAC, `ADMIN_SESSION_TTL_SECONDS`
 *   (30 min by default, absolute), revoked by logout or by disabling the operator.
 * - TOTP (RFC 6238, SHA-1, 6 digits, 30 s, ±1 step), each code accepted once per operator.
 * - Invitations: `wenr_` + 43 base62, stored as an HMAC, single use, 72 h.
 */
export class OperatorAuth {
  private readonly box: SecretBox;
  private dummyHash: Promise<string> | undefined;
  /** Login lockouts: wrong passwords per (e-mail, client IP), wrong codes per account (dashboard-lockouts.ts). */
  readonly lockouts: SignInLockouts;

  constructor(private readonly db: Database, private readonly opts: OperatorAuthOptions, private readonly log: Logger) {
    this.box = new SecretBox(opts.secretKey);
    this.lockouts = new SignInLockouts(db, opts.pepper, opts.lockout ?? OPERATOR_LOCKOUT, log, 'operator');
  }

  // ───────────── operators ─────────────

  /**
   * Invites an operator directly: by the shared token (in production only to bootstrap: never once
   * gateway.bootstrap_state holds its permanent mark, and only while fewer than BOOTSTRAP_OPERATORS
   * operators are live — an advisory lock serialises concurrent bootstraps), or by the development
   * token. A named operator's invitation is an approval request instead (approval-requests.ts),
   * applied by `inviteWithin` once a second operator approves.
   */
  async invite(tx: Queryable, input: { name: string; email: string }, by: AdminPrincipal, audit: AuditTrail): Promise<InvitedOperator> {
    if (by.kind === 'bootstrap-token' && this.opts.production) {
      await tx.query(`select pg_advisory_xact_lock(hashtext('gateway.operators.bootstrap'))`);
      if (await this.bootstrapped(tx)) throw new AppError('ADMIN_TOKEN_NOT_ALLOWED', undefined, { reason: 'BOOTSTRAPPED' });
      const [live] = await tx.query<{ n: string }>(
        `select count(*)::text as n from gateway.operators
          where disabled_at is null and (enrolled_at is not null or enrollment_expires_at > now())`);
      if (Number(live!.n) >= BOOTSTRAP_OPERATORS) throw new AppError('ADMIN_TOKEN_NOT_ALLOWED');
    }
    const op = await this.inviteWithin(tx, input, by.kind === 'operator' ? by.operatorId : null);
    await audit.record(tx, { targets: { operatorId: op.id }, before: null, after: toPublic(op) });
    return op;
  }

  /**
   * Creates the invited operator in the caller's transaction. `createdBy` is the inviter chain's
   * link (the operator who asked; null: the bootstrap token). The enrolment token is returned for
   * CredentialDelivery (e-mailed to the invitee in production), never stored but as an HMAC.
   */
  async inviteWithin(q: Queryable, input: { name: string; email: string }, createdBy: string | null): Promise<InvitedOperator> {
    const email = input.email.trim().toLowerCase();
    const token = `${ENROLLMENT_PREFIX}${randomBase62(43)}`;
    const taken = await q.query(`select 1 from gateway.operators where email = ?`, [email]);
    if (taken.length > 0) throw new AppError('INVALID_REQUEST', undefined, { fields: [{ path: 'email', message: 'ya existe un operador con este correo' }] });
    try {
      const [row] = await q.query<Row>(
        `insert into gateway.operators (id, name, email, enrollment_token_hash, enrollment_expires_at, created_by)
         values (?::uuid, ?, ?, ?, now() + (?::bigint * interval '1 second'), ?::uuid) returning ${COLS}`,
        [randomUUID(), input.name, email, this.tokenHash('enroll', token), String(ENROLLMENT_TTL_SECONDS), createdBy]) as [Row];
      const op = toOperator(row);
      this.log.info({ operatorId: op.id, by: createdBy ? 'operator' : 'bootstrap-token' }, 'operator invited');
      return { ...op, enrollmentToken: token, enrollmentExpiresAt: row.enrollment_expires_at! };
    } catch (err) {
      if (isUniqueViolation(err)) {
        throw new AppError('INVALID_REQUEST', undefined, { fields: [{ path: 'email', message: 'ya existe un operador con este correo' }] });
      }
      throw err;
    }
  }

  /** Whether the first operators have enrolled: the shared token bootstraps nothing more, for ever (production). */
  async bootstrapped(q: Queryable = this.db): Promise<boolean> {
    return (await q.query(`select 1 from gateway.bootstrap_state`)).length > 0;
  }

  /** Redeems an invitation: sets the password, creates the TOTP secret (returned once). */
  async enroll(enrollmentToken: string, password: string, audit: AuditTrail): Promise<{ operator: Operator; totpSecret: string; otpauthUrl: string }> {
    if (!ENROLLMENT_TOKEN.test(enrollmentToken)) throw new AppError('OPERATOR_ENROLLMENT_INVALID');
    const secret = new Secret({ size: 20 });
    const passwordHash = await argon2Hash(password, ARGON2);
    return this.db.tx(async (tx) => {
      const [row] = await tx.query<Row>(
        `update gateway.operators
            set password_hash = ?, totp_secret_enc = ?, enrolled_at = now(), enrollment_token_hash = null, enrollment_expires_at = null
          where enrollment_token_hash = ? and enrollment_expires_at > now() and enrolled_at is null and disabled_at is null
          returning ${COLS}`,
        [passwordHash, this.box.seal(secret.base32), this.tokenHash('enroll', enrollmentToken)]);
      if (!row) throw new AppError('OPERATOR_ENROLLMENT_INVALID');
      const op = toOperator(row);
      // The second enrolled operator makes the bootstrap permanent (the mark can never be removed).
      await tx.query(
        `insert into gateway.bootstrap_state (operator_ids)
         select array_agg(id order by enrolled_at, id) from (select id, enrolled_at from gateway.operators where enrolled_at is not null order by enrolled_at, id limit ?) f
         having count(*) >= ? on conflict (singleton) do nothing`, [BOOTSTRAP_OPERATORS, BOOTSTRAP_OPERATORS]);
      await audit.record(tx, { principal: { kind: 'anonymous' }, targets: { operatorId: op.id }, before: { status: 'INVITED' }, after: op });
      this.log.info({ operatorId: op.id }, 'operator enrolled');
      return { operator: op, totpSecret: secret.base32, otpauthUrl: this.totp(secret.base32, op.email).toString() };
    });
  }

  async list(): Promise<Operator[]> {
    const rows = await this.db.query<Row>(`select ${COLS} from gateway.operators order by created_at, id`);
    return rows.map(toOperator);
  }

  async get(q: Queryable, id: string): Promise<Operator | undefined> {
    const [row] = await q.query<Row>(`select ${COLS} from gateway.operators where id = ?::uuid`, [id]);
    return row ? toOperator(row) : undefined;
  }

  /**
   * Disables the operator and revokes every session of theirs at once (idempotent), in the caller's
   * transaction: by the development token directly, by a named operator only through an approval
   * request (a second operator approves).
   */
  async disableWithin(q: Queryable, id: string, by: string | null): Promise<{ before: Operator; after: Operator }> {
    const [before] = await q.query<Row>(`select ${COLS} from gateway.operators where id = ?::uuid for update`, [id]);
    if (!before) throw new AppError('OPERATOR_NOT_FOUND');
    const [row] = await q.query<Row>(
      `update gateway.operators set disabled_at = coalesce(disabled_at, now()), disabled_by = coalesce(disabled_by, ?::uuid),
              enrollment_token_hash = null
        where id = ?::uuid returning ${COLS}`, [by, id]) as [Row];
    await q.query('update gateway.operator_sessions set revoked_at = now() where operator_id = ?::uuid and revoked_at is null', [id]);
    this.log.info({ operatorId: id }, 'operator disabled');
    return { before: toOperator(before), after: toOperator(row) };
  }

  /** Disables directly (the development token). */
  async disable(id: string, by: AdminPrincipal, audit: AuditTrail): Promise<Operator> {
    return this.db.tx(async (tx) => {
      const { before, after } = await this.disableWithin(tx, id, by.kind === 'operator' ? by.operatorId : null);
      await audit.record(tx, { targets: { operatorId: id }, before, after });
      return after;
    });
  }

  /** Whether an operator exists (404 otherwise), for requests about them. */
  async assertExists(id: string): Promise<Operator> {
    const op = await this.get(this.db, id);
    if (!op) throw new AppError('OPERATOR_NOT_FOUND');
    return op;
  }

  // ───────────── sessions ─────────────

  /**
   * Password + TOTP login, with two lockouts (dashboard-lockouts.ts):
   * - The password attempt counts for this e-mail from this client IP before it is checked: 10
   *   wrong in 15 min lock that caller out of that account (423 ACCOUNT_LOCKED), never the operator
   *   elsewhere. Unknown, not enrolled and disabled operators count and answer the same.
   * - Past the right password, the code attempt counts for the account: 5 wrong codes (or replays)
   *   in 15 min lock the account from every IP. Only the password holder can set or see that lock:
   *   it is audited and logged as a warning (alert on it), and counted in gateway_auth_lockouts_total.
   * Every other failure is the same 401 OPERATOR_AUTH_FAILED.
   */
  async login(emailRaw: string, password: string, totpCode: string, clientIp: string | undefined, audit: AuditTrail): Promise<{ token: string; expiresAt: string; operator: Operator }> {
    const email = emailRaw.trim().toLowerCase();
    const [u] = await this.db.query<Row & { password_hash: string | null; totp_secret_enc: string | null }>(
      `select ${COLS}, password_hash, totp_secret_enc from gateway.operators where email = ?`, [email]);
    if (u) audit.note({ targets: { operatorId: u.id } });
    // The attempt that sets a lock is audited as such (the router writes no second row for it).
    const onLocked = (e: LockEvent) => audit.record(this.db, {
      outcome: 'FAILED', errorCode: 'OPERATOR_AUTH_FAILED',
      after: { lockout: { scope: e.scope, factor: e.factor, lockedForSeconds: e.lockSeconds } },
    });
    const op = await this.lockouts.attempt('password', email, async () => {
      // Same work whether or not the operator exists or has enrolled: no e-mail enumeration by timing.
      const ok = await argon2Verify(u?.password_hash ?? await this.dummy(), password).catch(() => false);
      return u && u.password_hash && u.totp_secret_enc && ok && !u.disabled_at ? { ...u, totp_secret_enc: u.totp_secret_enc } : undefined;
    }, { userId: u?.id, clientIp, onLocked });
    if (!op) throw new AppError('OPERATOR_AUTH_FAILED');
    const token = `${SESSION_PREFIX}${randomBase62(43)}`;
    const session = await this.lockouts.attempt('totp', email, async () => {
      const step = this.matchTotp(op.totp_secret_enc, op.email, totpCode);
      if (step === null) return undefined;
      return this.db.tx(async (tx) => {
        // The code is consumed (compare-and-set on the last accepted step) with the session's creation.
        const consumed = await tx.query(
          `update gateway.operators set totp_last_step = ?::bigint
            where id = ?::uuid and disabled_at is null and (totp_last_step is null or totp_last_step < ?::bigint) returning 1`,
          [String(step), op.id, String(step)]);
        if (consumed.length === 0) {
          this.log.warn({ operatorId: op.id }, 'operator TOTP code replayed');
          return undefined;
        }
        const sessionId = randomUUID();
        const [s] = await tx.query<{ expires_at: string }>(
          `insert into gateway.operator_sessions (id, token_hash, operator_id, client_ip, expires_at)
           values (?::uuid, ?, ?::uuid, ?, now() + (?::bigint * interval '1 second')) returning ${isoCol('expires_at', 'expires_at')}`,
          [sessionId, this.tokenHash('session', token), op.id, clientIp ?? null, String(this.opts.sessionTtlSeconds)]) as [{ expires_at: string }];
        await audit.record(tx, {
          principal: { kind: 'operator', operatorId: op.id, email: op.email, sessionId },
          targets: { operatorId: op.id, sessionId }, after: { sessionId, expiresAt: s.expires_at },
        });
        return { expiresAt: s.expires_at };
      });
    }, { userId: op.id, onLocked });
    if (!session) throw new AppError('OPERATOR_AUTH_FAILED');
    this.log.info({ operatorId: op.id }, 'operator login');
    return { token, expiresAt: session.expiresAt, operator: toOperator(op) };
  }

  /** The operator behind a session token; SESSION_EXPIRED when unknown, expired, revoked or the operator disabled. */
  async authenticate(token: string): Promise<AdminPrincipal & { kind: 'operator' }> {
    if (!SESSION_TOKEN.test(token)) throw new AppError('SESSION_EXPIRED');
    const hash = this.tokenHash('session', token);
    const [r] = await this.db.query<{ session_id: string; token_hash: string; operator_id: string; email: string }>(
      `select s.id::text as session_id, s.token_hash, o.id::text as operator_id, o.email
         from gateway.operator_sessions s join gateway.operators o on o.id = s.operator_id
        where s.token_hash = ? and s.revoked_at is null and s.expires_at > now() and o.disabled_at is null`, [hash]);
    if (!r || !timingSafeEqual(Buffer.from(r.token_hash), Buffer.from(hash))) throw new AppError('SESSION_EXPIRED');
    return { kind: 'operator', operatorId: r.operator_id, email: r.email, sessionId: r.session_id };
  }

  async logout(principal: AdminPrincipal & { kind: 'operator' }, audit: AuditTrail): Promise<void> {
    await this.db.tx(async (tx) => {
      await tx.query('update gateway.operator_sessions set revoked_at = now() where id = ?::uuid and revoked_at is null', [principal.sessionId]);
      await audit.record(tx, { targets: { operatorId: principal.operatorId, sessionId: principal.sessionId } });
    });
  }

  // ───────────── helpers ─────────────

  /** The time step a code matches (±1 step), or null. */
  private matchTotp(secretEnc: string, email: string, code: string, now = Date.now()): number | null {
    if (!/^\d{6}$/.test(code)) return null;
    const delta = this.totp(this.box.open(secretEnc), email).validate({ token: code, timestamp: now, window: 1 });
    return delta === null ? null : Math.floor(now / 1000 / TOTP_PERIOD) + delta;
  }

  private totp(base32: string, email: string): TOTP {
    return new TOTP({ issuer: this.opts.issuer, label: email, algorithm: 'SHA1', digits: 6, period: TOTP_PERIOD, secret: Secret.fromBase32(base32) });
  }

  private tokenHash(kind: 'session' | 'enroll', token: string): string {
    return createHmac('sha256', this.opts.pepper).update(`operator-${kind}:${token}`, 'utf8').digest('hex');
  }

  private dummy(): Promise<string> {
    return (this.dummyHash ??= argon2Hash(randomBytes(16).toString('hex'), ARGON2));
  }
}
