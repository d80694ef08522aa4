import type { AuthFactor } from '../auth/dashboard-lockouts.js';
import type { Queryable } from './sql.js';

const COLUMN: Record<AuthFactor, string> = { password: 'password_failures', totp: 'totp_failures' };

/** Failures within the window of a factor's column, as an SQL array (one `?`: the window in seconds). */
const recent = (factor: AuthFactor) => `array(select t from unnest(${COLUMN[factor]}) t where t > now() - ?::int * interval '1 second')`;

/**
 * Sign-in lockout rows (gateway.dashboard_lockouts: the dashboard's and, under their own HMAC
 * domain, the operators'), keyed by `subject`.
 */
export class SignInLockoutStore {
  /** Creates the subject's row unless it exists. */
  async ensure(q: Queryable, subject: string): Promise<void> {
    await q.query('insert into gateway.dashboard_lockouts (subject) values (?) on conflict (subject) do nothing', [subject]);
  }

  /**
   * Counts one failure of `factor` unless the row is locked: drops failures older than the
   * window, appends now, and sets `locked_until` when this one reaches `limit`. Undefined when the
   * row is locked (or gone); otherwise whether this attempt set the lock.
   */
  async count(
    q: Queryable,
    subject: string,
    factor: AuthFactor,
    p: { windowSeconds: number; limit: number; lockSeconds: number },
  ): Promise<boolean | undefined> {
    const col = COLUMN[factor];
    const rows = await q.query<{ locked_now: boolean }>(
      `update gateway.dashboard_lockouts set
          ${col} = ${recent(factor)} || now(),
          locked_until = case when cardinality(${recent(factor)}) + 1 >= ?::int then now() + ?::int * interval '1 second' else null end,
          updated_at = now()
        where subject = ? and (locked_until is null or locked_until <= now())
        returning locked_until is not null as locked_now`,
      [p.windowSeconds, p.windowSeconds, p.limit, p.lockSeconds, subject],
    );
    return rows[0]?.locked_now;
  }

  /** Clears `factor`'s failures; the lock stays only if `other` has `otherLimit` failures within the window. */
  async clear(q: Queryable, subject: string, factor: AuthFactor, other: AuthFactor, p: { windowSeconds: number; otherLimit: number }): Promise<void> {
    await q.query(
      `update gateway.dashboard_lockouts set
          ${COLUMN[factor]} = '{}',
          locked_until = case when cardinality(${recent(other)}) >= ?::int
                              then locked_until else null end,
          updated_at = now()
        where subject = ?`,
      [p.windowSeconds, p.otherLimit, subject],
    );
  }

  /** Seconds until the subject's lock ends (at least 1), or undefined when it is not locked. */
  async retryAfter(q: Queryable, subject: string): Promise<number | undefined> {
    const [r] = await q.query<{ seconds: number }>(
      `select greatest(1, ceil(extract(epoch from locked_until - now())))::int as seconds
         from gateway.dashboard_lockouts where subject = ? and locked_until > now()`,
      [subject],
    );
    return r ? Number(r.seconds) : undefined;
  }

  /** Deletes rows untouched for `idleSeconds` whose lock (if any) has ended. */
  async purge(q: Queryable, idleSeconds: number): Promise<void> {
    await q.query(
      `delete from gateway.dashboard_lockouts
        where updated_at < now() - ?::int * interval '1 second' and (locked_until is null or locked_until <= now())`,
      [idleSeconds],
    );
  }
}
