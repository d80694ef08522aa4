import { randomUUID, timingSafeEqual } from 'node:crypto';
import { AppError, isUniqueViolation, SecretBox, type Database, type Logger } from '@wallet/platform';
import type { AuditTrail } from '../audit/admin-audit.js';
import { OperatorStore } from '../persistence/operator.store.js';
import type { Queryable } from '../persistence/sql.js';
import { BOOTSTRAP_OPERATORS, type AdminPrincipal } from './admin-principal.js';
// Dashboard users and operators share passwords (argon2id, OWASP's first setting), tokens and TOTP.
import { Passwords, randomBase62, tokenHash, TotpCodes } from './secrets.js';
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
/** Whether a bearer credential is shaped like an operator session token. */
export function looksLikeOperatorSession(token: string): boolean {
  return token.startsWith(SESSION_PREFIX);
}

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
  private readonly passwords = new Passwords();
  private readonly codes: TotpCodes;
  private readonly store = new OperatorStore();
  /** Login lockouts: wrong passwords per (e-mail, client IP), wrong codes per account (dashboard-lockouts.ts). */
  readonly lockouts: SignInLockouts;

  constructor(
    private readonly db: Database,
    private readonly opts: OperatorAuthOptions,
    private readonly log: Logger,
  ) {
    this.box = new SecretBox(opts.secretKey);
    this.codes = new TotpCodes(opts.issuer);
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
      await this.store.lockBootstrap(tx);
      if (await this.bootstrapped(tx)) throw new AppError('ADMIN_TOKEN_NOT_ALLOWED', undefined, { reason: 'BOOTSTRAPPED' });
      if ((await this.store.countLive(tx)) >= BOOTSTRAP_OPERATORS) throw new AppError('ADMIN_TOKEN_NOT_ALLOWED');
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
    if (await this.store.emailTaken(q, email))
      throw new AppError('INVALID_REQUEST', undefined, { fields: [{ path: 'email', message: 'ya existe un operador con este correo' }] });
    try {
      const { enrollmentExpiresAt, ...op } = await this.store.insert(q, {
        id: randomUUID(),
        name: input.name,
        email,
        enrollmentTokenHash: this.tokenHash('enroll', token),
        ttlSeconds: ENROLLMENT_TTL_SECONDS,
        createdBy,
      });
      this.log.info({ operatorId: op.id, by: createdBy ? 'operator' : 'bootstrap-token' }, 'operator invited');
      return { ...op, enrollmentToken: token, enrollmentExpiresAt };
    } catch (err) {
      if (isUniqueViolation(err)) {
        throw new AppError('INVALID_REQUEST', undefined, { fields: [{ path: 'email', message: 'ya existe un operador con este correo' }] });
      }
      throw err;
    }
  }

  /** Whether the first operators have enrolled: the shared token bootstraps nothing more, for ever (production). */
  async bootstrapped(q: Queryable = this.db): Promise<boolean> {
    return this.store.bootstrapped(q);
  }

  /** Redeems an invitation: sets the password, creates the TOTP secret (returned once). */
  async enroll(enrollmentToken: string, password: string, audit: AuditTrail): Promise<{ operator: Operator; totpSecret: string; otpauthUrl: string }> {
    if (!ENROLLMENT_TOKEN.test(enrollmentToken)) throw new AppError('OPERATOR_ENROLLMENT_INVALID');
    const secret = this.codes.newSecret();
    const passwordHash = await this.passwords.hash(password);
    return this.db.tx(async (tx) => {
      const op = await this.store.enroll(tx, {
        passwordHash,
        totpSecretEnc: this.box.seal(secret),
        enrollmentTokenHash: this.tokenHash('enroll', enrollmentToken),
      });
      if (!op) throw new AppError('OPERATOR_ENROLLMENT_INVALID');
      // The second enrolled operator makes the bootstrap permanent (the mark can never be removed).
      await this.store.markBootstrappedAt(tx, BOOTSTRAP_OPERATORS);
      await audit.record(tx, { principal: { kind: 'anonymous' }, targets: { operatorId: op.id }, before: { status: 'INVITED' }, after: op });
      this.log.info({ operatorId: op.id }, 'operator enrolled');
      return { operator: op, totpSecret: secret, otpauthUrl: this.codes.uri(secret, op.email) };
    });
  }

  async list(): Promise<Operator[]> {
    return this.store.list(this.db);
  }

  async get(q: Queryable, id: string): Promise<Operator | undefined> {
    return this.store.get(q, id);
  }

  /**
   * Disables the operator and revokes every session of theirs at once (idempotent), in the caller's
   * transaction: by the development token directly, by a named operator only through an approval
   * request (a second operator approves).
   */
  async disableWithin(q: Queryable, id: string, by: string | null): Promise<{ before: Operator; after: Operator }> {
    const before = await this.store.get(q, id, { forUpdate: true });
    if (!before) throw new AppError('OPERATOR_NOT_FOUND');
    const after = await this.store.disable(q, id, by);
    await this.store.revokeSessionsOf(q, id);
    this.log.info({ operatorId: id }, 'operator disabled');
    return { before, after };
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
  async login(
    emailRaw: string,
    password: string,
    totpCode: string,
    clientIp: string | undefined,
    audit: AuditTrail,
  ): Promise<{ token: string; expiresAt: string; operator: Operator }> {
    const email = emailRaw.trim().toLowerCase();
    const u = await this.store.findForLogin(this.db, email);
    if (u) audit.note({ targets: { operatorId: u.id } });
    // The attempt that sets a lock is audited as such (the router writes no second row for it).
    const onLocked = (e: LockEvent) =>
      audit.record(this.db, {
        outcome: 'FAILED',
        errorCode: 'OPERATOR_AUTH_FAILED',
        after: { lockout: { scope: e.scope, factor: e.factor, lockedForSeconds: e.lockSeconds } },
      });
    const op = await this.lockouts.attempt(
      'password',
      email,
      async () => {
        // Same work whether or not the operator exists or has enrolled: no e-mail enumeration by timing.
        const ok = await this.passwords.verify(u?.passwordHash, password);
        return u && u.passwordHash && u.totpSecretEnc && ok && !u.disabledAt ? { ...u, totpSecretEnc: u.totpSecretEnc } : undefined;
      },
      { userId: u?.id, clientIp, onLocked },
    );
    if (!op) throw new AppError('OPERATOR_AUTH_FAILED');
    const token = `${SESSION_PREFIX}${randomBase62(43)}`;
    const session = await this.lockouts.attempt(
      'totp',
      email,
      async () => {
        const step = this.matchTotp(op.totpSecretEnc, op.email, totpCode);
        if (step === null) return undefined;
        return this.db.tx(async (tx) => {
          // The code is consumed (compare-and-set on the last accepted step) with the session's creation.
          if (!(await this.store.consumeTotpStep(tx, op.id, step))) {
            this.log.warn({ operatorId: op.id }, 'operator TOTP code replayed');
            return undefined;
          }
          const sessionId = randomUUID();
          const expiresAt = await this.store.insertSession(tx, {
            id: sessionId,
            tokenHash: this.tokenHash('session', token),
            operatorId: op.id,
            clientIp: clientIp ?? null,
            ttlSeconds: this.opts.sessionTtlSeconds,
          });
          await audit.record(tx, {
            principal: { kind: 'operator', operatorId: op.id, email: op.email, sessionId },
            targets: { operatorId: op.id, sessionId },
            after: { sessionId, expiresAt },
          });
          return { expiresAt };
        });
      },
      { userId: op.id, onLocked },
    );
    if (!session) throw new AppError('OPERATOR_AUTH_FAILED');
    this.log.info({ operatorId: op.id }, 'operator login');
    const { passwordHash: _hash, totpSecretEnc: _secret, ...operator } = op;
    return { token, expiresAt: session.expiresAt, operator };
  }

  /** The operator behind a session token; SESSION_EXPIRED when unknown, expired, revoked or the operator disabled. */
  async authenticate(token: string): Promise<AdminPrincipal & { kind: 'operator' }> {
    if (!SESSION_TOKEN.test(token)) throw new AppError('SESSION_EXPIRED');
    const hash = this.tokenHash('session', token);
    const r = await this.store.findLiveSession(this.db, hash);
    if (!r || !timingSafeEqual(Buffer.from(r.tokenHash), Buffer.from(hash))) throw new AppError('SESSION_EXPIRED');
    return { kind: 'operator', operatorId: r.operatorId, email: r.email, sessionId: r.sessionId };
  }

  async logout(principal: AdminPrincipal & { kind: 'operator' }, audit: AuditTrail): Promise<void> {
    await this.db.tx(async (tx) => {
      await this.store.revokeSession(tx, principal.sessionId);
      await audit.record(tx, { targets: { operatorId: principal.operatorId, sessionId: principal.sessionId } });
    });
  }

  // ───────────── helpers ─────────────

  /** The time step a code matches (±1 step), or null. */
  private matchTotp(secretEnc: string, email: string, code: string, now = Date.now()): number | null {
    if (!/^\d{6}$/.test(code)) return null;
    return this.codes.matchStep(this.box.open(secretEnc), email, code, now) ?? null;
  }

  private tokenHash(kind: 'session' | 'enroll', token: string): string {
    return tokenHash(this.opts.pepper, `operator-${kind}`, token);
  }
}
