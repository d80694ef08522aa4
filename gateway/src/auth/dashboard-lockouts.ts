import { createHmac } from 'node:crypto';
import { Counter } from 'prom-client';
import { AppError, metricsRegistry, type Logger } from '@wallet/platform';
import { SignInLockoutStore } from '../persistence/sign-in-lockout.store.js';
import type { Queryable } from '../persistence/sql.js';

/** The two secrets a user proves: the password (login) and the TOTP code (login of operators, signing, enrolment). */
export type AuthFactor = 'password' | 'totp';

/** Wrong answers of one factor, within the window, that lock. */
export const MAX_FAILURES: Readonly<Record<AuthFactor, number>> = { password: 10, totp: 5 };

/**
 * Whom a factor's failures lock:
 * - `caller`: wrong passwords lock the (account, client IP) pair only. Anyone who knows an e-mail
 *   can send wrong passwords; counting them per account would let them keep the owner out.
 * - `account`: wrong TOTP codes lock the account from every IP. Only someone holding the password
 *   (or a session, or an invitation) reaches the code, which is exactly when the account must lock.
 */
export type LockScope = 'caller' | 'account';
export const SCOPE_OF: Readonly<Record<AuthFactor, LockScope>> = { password: 'caller', totp: 'account' };

/** The sign-in surfaces that keep lockouts: their rows are domain-separated and never shared. */
export type LockoutSurface = 'dashboard' | 'operator';

export interface LockoutPolicy {
  /** Failures older than this no longer count (15 min). */
  windowSeconds: number;
  /** How long the account (or the caller) stays locked once a factor reaches its limit (15 min). */
  lockSeconds: number;
}

/** What an attempt that set a lock reports (for the audit log and alerts). */
export interface LockEvent {
  surface: LockoutSurface;
  factor: AuthFactor;
  scope: LockScope;
  lockSeconds: number;
}

export interface AttemptOptions {
  /** For the log line when a lock is set. */
  userId?: string;
  /** The caller's IP (rate-limit resolution): the password factor counts per (account, this IP). */
  clientIp?: string;
  /** Called (awaited) when this attempt's failure set the lock, before the attempt answers. */
  onLocked?: (event: LockEvent) => Promise<void> | void;
}

const OTHER: Record<AuthFactor, AuthFactor> = { password: 'totp', totp: 'password' };

const locksSet = new Counter({
  name: 'gateway_auth_lockouts_total',
  help: 'locks set by repeated sign-in failures, by surface (dashboard, operator), factor (password, totp) and scope (caller: one client IP for one account; account: every IP)',
  labelNames: ['surface', 'factor', 'scope'],
  registers: [metricsRegistry],
});

/**
 * Sign-in lockouts in Postgres (gateway.dashboard_lockouts, which also holds the operators' rows
 * under their own HMAC domain), so every gateway replica sees the same counts and a restart forgets
 * nothing. The per-IP rate limit stays in front of it.
 *
 * - A row's key (`subject`) is HMAC(pepper, surface + normalized e-mail [+ client IP]): no e-mail or
 *   IP in clear, and an unknown e-mail is counted and locked exactly like a real one, so a lockout
 *   reveals nothing about who exists.
 * - Wrong passwords count per (account, client IP) and lock that caller only; wrong TOTP codes
 *   count per account and lock it whatever the IP (see LockScope).
 * - An attempt is counted BEFORE its secret is checked (one conditional UPDATE under the row lock),
 *   and the count is cleared only when the secret was right. So however many attempts race, at
 *   most the limit are ever checked per window: the next ones find the row locked.
 * - While locked, nothing is checked or counted (the right secret is refused too) and the lock is
 *   not extended.
 */
export class SignInLockouts {
  private readonly store = new SignInLockoutStore();

  constructor(
    private readonly db: Queryable,
    private readonly pepper: string,
    private readonly policy: LockoutPolicy,
    private readonly log: Logger,
    private readonly surface: LockoutSurface = 'dashboard',
  ) {}

  /**
   * Runs `check` (the password or code verification) as one counted attempt of `factor` for the
   * account of `email` (the password: for that account from `opts.clientIp`). ACCOUNT_LOCKED (with
   * `retryAfter` seconds) when locked; otherwise `check`'s result, where `undefined` means a wrong
   * secret (it stays counted).
   */
  async attempt<T>(factor: AuthFactor, email: string, check: () => Promise<T | undefined>, opts: AttemptOptions = {}): Promise<T | undefined> {
    const subject = this.subjectOf(factor, email, opts.clientIp);
    const lockedNow = await this.reserve(factor, subject);
    const result = await check();
    if (result !== undefined) {
      await this.clear(factor, subject);
      return result;
    }
    if (lockedNow) {
      const event: LockEvent = { surface: this.surface, factor, scope: SCOPE_OF[factor], lockSeconds: this.policy.lockSeconds };
      locksSet.inc({ surface: this.surface, factor, scope: event.scope });
      // An account lock means someone holds the password (or a session): worth an alert.
      const line = {
        surface: this.surface,
        factor,
        scope: event.scope,
        userId: opts.userId,
        lockoutId: subject.slice(0, 16),
        lockSeconds: this.policy.lockSeconds,
      };
      if (event.scope === 'account') this.log.warn(line, `${this.surface} account locked after repeated wrong TOTP codes`);
      else this.log.info(line, `${this.surface} sign-in locked for one client after repeated wrong passwords`);
      await opts.onLocked?.(event);
    }
    return undefined;
  }

  /** ACCOUNT_LOCKED when the account is locked now (account scope: wrong TOTP codes), a cheap read. */
  async assertNotLocked(email: string): Promise<void> {
    const retryAfter = await this.retryAfter(this.subject(email));
    if (retryAfter !== undefined) throw locked(retryAfter);
  }

  /** Rows with no failure left in the window and no lock in force (every surface's). */
  async purge(): Promise<void> {
    await this.store.purge(this.db, Math.max(this.policy.windowSeconds, this.policy.lockSeconds));
  }

  /** The account's row key: HMAC of the surface and the normalized e-mail (no e-mail in clear, a fixed length). */
  subject(email: string): string {
    return this.hmac(`${this.surface}-lockout:${normalize(email)}`);
  }

  /** The (account, client IP) row key of the password factor. */
  callerSubject(email: string, clientIp: string | undefined): string {
    return this.hmac(`${this.surface}-lockout:${normalize(email)}|ip:${clientIp ?? 'unknown'}`);
  }

  private subjectOf(factor: AuthFactor, email: string, clientIp: string | undefined): string {
    return SCOPE_OF[factor] === 'caller' ? this.callerSubject(email, clientIp) : this.subject(email);
  }

  private hmac(text: string): string {
    return createHmac('sha256', this.pepper).update(text, 'utf8').digest('hex');
  }

  /**
   * Counts one attempt unless the row is locked: drops failures older than the window, appends
   * now, and sets `locked_until` when this attempt reaches the limit. Concurrent attempts serialize
   * on the row; a waiting UPDATE re-checks the lock against the row the previous one wrote.
   * Returns whether this attempt set the lock; throws ACCOUNT_LOCKED when it was locked already.
   */
  private async reserve(factor: AuthFactor, subject: string): Promise<boolean> {
    for (let i = 0; i < 3; i++) {
      await this.store.ensure(this.db, subject);
      const lockedNow = await this.store.count(this.db, subject, factor, {
        windowSeconds: this.policy.windowSeconds,
        limit: MAX_FAILURES[factor],
        lockSeconds: this.policy.lockSeconds,
      });
      if (lockedNow !== undefined) return lockedNow;
      const retryAfter = await this.retryAfter(subject);
      if (retryAfter !== undefined) throw locked(retryAfter);
      // Neither counted nor locked: the lock ended or the purge removed the row in between. Again.
    }
    throw new Error('sign-in lockout row kept changing under the attempt');
  }

  /** Clears the factor's failures; the lock stays only if the other factor is at its own limit (rows from before the split). */
  private async clear(factor: AuthFactor, subject: string): Promise<void> {
    await this.store.clear(this.db, subject, factor, OTHER[factor], { windowSeconds: this.policy.windowSeconds, otherLimit: MAX_FAILURES[OTHER[factor]] });
  }

  private async retryAfter(subject: string): Promise<number | undefined> {
    return this.store.retryAfter(this.db, subject);
  }
}

/** The dashboard's lockouts (the class under its first name). */
export class DashboardLockouts extends SignInLockouts {
  constructor(db: Queryable, pepper: string, policy: LockoutPolicy, log: Logger) {
    super(db, pepper, policy, log, 'dashboard');
  }
}

function normalize(email: string): string {
  return email.trim().toLowerCase();
}

function locked(retryAfter: number): AppError {
  return new AppError('ACCOUNT_LOCKED', undefined, { retryAfter });
}
