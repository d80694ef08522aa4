import { createHmac } from 'node:crypto';
import { AppError, type Logger } from '@wallet/platform';
import type { Queryable } from '../persistence/sql.js';

/** The two secrets a dashboard user proves: the password (login) and the TOTP code (signing, enrolment). */
export type AuthFactor = 'password' | 'totp';

/** Wrong answers of one factor, within the window, that lock the account. */
export const MAX_FAILURES: Readonly<Record<AuthFactor, number>> = { password: 10, totp: 5 };

export interface LockoutPolicy {
  /** Failures older than this no longer count (15 min). */
  windowSeconds: number;
  /** How long the account stays locked once a factor reaches its limit (15 min). */
  lockSeconds: number;
}

const COLUMN: Record<AuthFactor, string> = { password: 'password_failures', totp: 'totp_failures' };
const OTHER: Record<AuthFactor, AuthFactor> = { password: 'totp', totp: 'password' };

/**
 * Per-account lockouts of the dashboard, in Postgres (gateway.dashboard_lockouts), so every gateway
 * replica sees the same counts and a restart forgets nothing. The per-IP rate limit stays in front
 * of it; this one holds whatever IPs an attacker spreads the guesses over.
 *
 * - The account is the normalized login e-mail, stored as HMAC(pepper, e-mail): an unknown e-mail
 *   is counted and locked exactly like a real one, so a lockout reveals nothing about who exists.
 * - An attempt is counted BEFORE its secret is checked (one conditional UPDATE under the row lock),
 *   and the count is cleared only when the secret was right. So however many attempts race, at
 *   most the limit are ever checked per window: the next ones find the account locked.
 * - While locked, nothing is checked or counted (the right password and code are refused too) and
 *   the lock is not extended.
 * - A success clears that factor's failures only: a password login does not wipe the TOTP
 *   failures of someone who knows the password and is guessing codes.
 */
export class DashboardLockouts {
  constructor(
    private readonly db: Queryable,
    private readonly pepper: string,
    private readonly policy: LockoutPolicy,
    private readonly log: Logger,
  ) {}

  /**
   * Runs `check` (the password or code verification) as one counted attempt of `factor` for the
   * account of `email`. ACCOUNT_LOCKED (with `retryAfter` seconds) when the account is locked;
   * otherwise `check`'s result, where `undefined` means a wrong secret (it stays counted).
   */
  async attempt<T>(factor: AuthFactor, email: string, check: () => Promise<T | undefined>, userId?: string): Promise<T | undefined> {
    const subject = this.subject(email);
    const lockedNow = await this.reserve(factor, subject);
    const result = await check();
    if (result !== undefined) {
      await this.clear(factor, subject);
      return result;
    }
    if (lockedNow) {
      this.log.warn({ factor, userId, lockoutId: subject.slice(0, 16), lockSeconds: this.policy.lockSeconds }, 'dashboard account locked after repeated failures');
    }
    return undefined;
  }

  /** ACCOUNT_LOCKED when the account is locked now (a cheap read, for refusing early). */
  async assertNotLocked(email: string): Promise<void> {
    const retryAfter = await this.retryAfter(this.subject(email));
    if (retryAfter !== undefined) throw locked(retryAfter);
  }

  /** Rows with no failure left in the window and no lock in force. */
  async purge(): Promise<void> {
    await this.db.query(
      `delete from gateway.dashboard_lockouts
        where updated_at < now() - ?::int * interval '1 second' and (locked_until is null or locked_until <= now())`,
      [Math.max(this.policy.windowSeconds, this.policy.lockSeconds)]);
  }

  /** HMAC of the normalized e-mail: the lockout row's key (no e-mail in clear, a fixed length). */
  subject(email: string): string {
    return createHmac('sha256', this.pepper).update(`dashboard-lockout:${email.trim().toLowerCase()}`, 'utf8').digest('hex');
  }

  /**
   * Counts one attempt unless the account is locked: drops failures older than the window, appends
   * now, and sets `locked_until` when this attempt reaches the limit. Concurrent attempts serialize
   * on the row; a waiting UPDATE re-checks the lock against the row the previous one wrote.
   * Returns whether this attempt set the lock; throws ACCOUNT_LOCKED when it was locked already.
   */
  private async reserve(factor: AuthFactor, subject: string): Promise<boolean> {
    const col = COLUMN[factor];
    const recent = `array(select t from unnest(${col}) t where t > now() - ?::int * interval '1 second')`;
    for (let i = 0; i < 3; i++) {
      await this.db.query('insert into gateway.dashboard_lockouts (subject) values (?) on conflict (subject) do nothing', [subject]);
      const rows = await this.db.query<{ locked_now: boolean }>(
        `update gateway.dashboard_lockouts set
            ${col} = ${recent} || now(),
            locked_until = case when cardinality(${recent}) + 1 >= ?::int then now() + ?::int * interval '1 second' else null end,
            updated_at = now()
          where subject = ? and (locked_until is null or locked_until <= now())
          returning locked_until is not null as locked_now`,
        [this.policy.windowSeconds, this.policy.windowSeconds, MAX_FAILURES[factor], this.policy.lockSeconds, subject]);
      if (rows[0]) return rows[0].locked_now;
      const retryAfter = await this.retryAfter(subject);
      if (retryAfter !== undefined) throw locked(retryAfter);
      // Neither counted nor locked: the lock ended or the purge removed the row in between. Again.
    }
    throw new Error('dashboard lockout row kept changing under the attempt');
  }

  /** Clears the factor's failures; the lock stays only if the other factor is at its own limit. */
  private async clear(factor: AuthFactor, subject: string): Promise<void> {
    const other = COLUMN[OTHER[factor]];
    await this.db.query(
      `update gateway.dashboard_lockouts set
          ${COLUMN[factor]} = '{}',
          locked_until = case when cardinality(array(select t from unnest(${other}) t where t > now() - ?::int * interval '1 second')) >= ?::int
                              then locked_until else null end,
          updated_at = now()
        where subject = ?`,
      [this.policy.windowSeconds, MAX_FAILURES[OTHER[factor]], subject]);
  }

  private async retryAfter(subject: string): Promise<number | undefined> {
    const [r] = await this.db.query<{ seconds: number }>(
      `select greatest(1, ceil(extract(epoch from locked_until - now())))::int as seconds
         from gateway.dashboard_lockouts where subject = ? and locked_until > now()`, [subject]);
    return r ? Number(r.seconds) : undefined;
  }
}

function locked(retryAfter: number): AppError {
  return new AppError('ACCOUNT_LOCKED', undefined, { retryAfter });
}
