import type { Operator } from '../auth/operator-auth.js';
import type { Queryable } from './sql.js';
import { isoCol } from './sql.js';

/** An operator as sign-in reads it: with the stored password hash and sealed TOTP secret. */
export type OperatorCredentials = Operator & { passwordHash: string | null; totpSecretEnc: string | null };

/** The operator session behind a token hash (live, its operator not disabled). */
export interface OperatorSessionRow {
  sessionId: string;
  tokenHash: string;
  operatorId: string;
  email: string;
}

interface Row {
  id: string;
  name: string;
  email: string;
  created_by: string | null;
  created_at: string;
  enrolled_at: string | null;
  disabled_at: string | null;
  enrollment_expires_at: string | null;
}
const COLS = `id::text as id, name, email, created_by::text as created_by, ${isoCol('created_at', 'created_at')},
  ${isoCol('enrolled_at', 'enrolled_at')}, ${isoCol('disabled_at', 'disabled_at')}, ${isoCol('enrollment_expires_at', 'enrollment_expires_at')}`;
const toOperator = (r: Row): Operator => ({
  id: r.id,
  name: r.name,
  email: r.email,
  createdBy: r.created_by,
  createdAt: r.created_at,
  enrolledAt: r.enrolled_at,
  disabledAt: r.disabled_at,
  status: r.disabled_at ? 'DISABLED' : r.enrolled_at ? 'ACTIVE' : 'INVITED',
});

/** Operators of /admin, their sessions and the bootstrap mark (gateway.operators, operator_sessions, bootstrap_state). */
export class OperatorStore {
  /** Serialises concurrent bootstraps (held until the transaction ends). */
  async lockBootstrap(tx: Queryable): Promise<void> {
    await tx.query(`select pg_advisory_xact_lock(hashtext('gateway.operators.bootstrap'))`);
  }

  /** Whether gateway.bootstrap_state holds its permanent mark. */
  async bootstrapped(q: Queryable): Promise<boolean> {
    return (await q.query(`select 1 from gateway.bootstrap_state`)).length > 0;
  }

  /** Operators not disabled that have enrolled or can still enrol. */
  async countLive(q: Queryable): Promise<number> {
    const [live] = await q.query<{ n: string }>(
      `select count(*)::text as n from gateway.operators
        where disabled_at is null and (enrolled_at is not null or enrollment_expires_at > now())`,
    );
    return Number(live!.n);
  }

  async emailTaken(q: Queryable, email: string): Promise<boolean> {
    return (await q.query(`select 1 from gateway.operators where email = ?`, [email])).length > 0;
  }

  async insert(
    q: Queryable,
    o: { id: string; name: string; email: string; enrollmentTokenHash: string; ttlSeconds: number; createdBy: string | null },
  ): Promise<Operator & { enrollmentExpiresAt: string }> {
    const [row] = (await q.query<Row>(
      `insert into gateway.operators (id, name, email, enrollment_token_hash, enrollment_expires_at, created_by)
       values (?::uuid, ?, ?, ?, now() + (?::bigint * interval '1 second'), ?::uuid) returning ${COLS}`,
      [o.id, o.name, o.email, o.enrollmentTokenHash, String(o.ttlSeconds), o.createdBy],
    )) as [Row];
    return { ...toOperator(row), enrollmentExpiresAt: row.enrollment_expires_at! };
  }

  /** Redeems a live enrolment token: sets the credentials, clears the token; undefined when none matches. */
  async enroll(q: Queryable, e: { enrollmentTokenHash: string; passwordHash: string; totpSecretEnc: string }): Promise<Operator | undefined> {
    const [row] = await q.query<Row>(
      `update gateway.operators
          set password_hash = ?, totp_secret_enc = ?, enrolled_at = now(), enrollment_token_hash = null, enrollment_expires_at = null
        where enrollment_token_hash = ? and enrollment_expires_at > now() and enrolled_at is null and disabled_at is null
        returning ${COLS}`,
      [e.passwordHash, e.totpSecretEnc, e.enrollmentTokenHash],
    );
    return row ? toOperator(row) : undefined;
  }

  /** Writes the permanent bootstrap mark once `operators` have enrolled (never removed; a repeat does nothing). */
  async markBootstrappedAt(q: Queryable, operators: number): Promise<void> {
    await q.query(
      `insert into gateway.bootstrap_state (operator_ids)
       select array_agg(id order by enrolled_at, id) from (select id, enrolled_at from gateway.operators where enrolled_at is not null order by enrolled_at, id limit ?) f
       having count(*) >= ? on conflict (singleton) do nothing`,
      [operators, operators],
    );
  }

  async list(q: Queryable): Promise<Operator[]> {
    const rows = await q.query<Row>(`select ${COLS} from gateway.operators order by created_at, id`);
    return rows.map(toOperator);
  }

  async get(q: Queryable, id: string, opts: { forUpdate?: boolean } = {}): Promise<Operator | undefined> {
    const [row] = await q.query<Row>(`select ${COLS} from gateway.operators where id = ?::uuid${opts.forUpdate ? ' for update' : ''}`, [id]);
    return row ? toOperator(row) : undefined;
  }

  /** Disables (idempotent: the first time and author stay) and drops any enrolment token. */
  async disable(q: Queryable, id: string, by: string | null): Promise<Operator> {
    const [row] = (await q.query<Row>(
      `update gateway.operators set disabled_at = coalesce(disabled_at, now()), disabled_by = coalesce(disabled_by, ?::uuid),
              enrollment_token_hash = null
        where id = ?::uuid returning ${COLS}`,
      [by, id],
    )) as [Row];
    return toOperator(row);
  }

  async findForLogin(q: Queryable, email: string): Promise<OperatorCredentials | undefined> {
    const [u] = await q.query<Row & { password_hash: string | null; totp_secret_enc: string | null }>(
      `select ${COLS}, password_hash, totp_secret_enc from gateway.operators where email = ?`,
      [email],
    );
    return u ? { ...toOperator(u), passwordHash: u.password_hash, totpSecretEnc: u.totp_secret_enc } : undefined;
  }

  /** Compare-and-set of the last accepted TOTP step: true when `step` is later (the code is consumed). */
  async consumeTotpStep(q: Queryable, operatorId: string, step: number): Promise<boolean> {
    const consumed = await q.query(
      `update gateway.operators set totp_last_step = ?::bigint
        where id = ?::uuid and disabled_at is null and (totp_last_step is null or totp_last_step < ?::bigint) returning 1`,
      [String(step), operatorId, String(step)],
    );
    return consumed.length > 0;
  }

  /** Creates a session; returns when it expires. */
  async insertSession(q: Queryable, s: { id: string; tokenHash: string; operatorId: string; clientIp: string | null; ttlSeconds: number }): Promise<string> {
    const [row] = (await q.query<{ expires_at: string }>(
      `insert into gateway.operator_sessions (id, token_hash, operator_id, client_ip, expires_at)
       values (?::uuid, ?, ?::uuid, ?, now() + (?::bigint * interval '1 second')) returning ${isoCol('expires_at', 'expires_at')}`,
      [s.id, s.tokenHash, s.operatorId, s.clientIp, String(s.ttlSeconds)],
    )) as [{ expires_at: string }];
    return row.expires_at;
  }

  async findLiveSession(q: Queryable, tokenHash: string): Promise<OperatorSessionRow | undefined> {
    const [r] = await q.query<{ session_id: string; token_hash: string; operator_id: string; email: string }>(
      `select s.id::text as session_id, s.token_hash, o.id::text as operator_id, o.email
         from gateway.operator_sessions s join gateway.operators o on o.id = s.operator_id
        where s.token_hash = ? and s.revoked_at is null and s.expires_at > now() and o.disabled_at is null`,
      [tokenHash],
    );
    return r ? { sessionId: r.session_id, tokenHash: r.token_hash, operatorId: r.operator_id, email: r.email } : undefined;
  }

  async revokeSession(q: Queryable, sessionId: string): Promise<void> {
    await q.query('update gateway.operator_sessions set revoked_at = now() where id = ?::uuid and revoked_at is null', [sessionId]);
  }

  async revokeSessionsOf(q: Queryable, operatorId: string): Promise<void> {
    await q.query('update gateway.operator_sessions set revoked_at = now() where operator_id = ?::uuid and revoked_at is null', [operatorId]);
  }

  /**
   * Whether the two operators' inviter chains meet: each chain is the operator and every operator
   * above them by `created_by` (at most 64 links).
   */
  async inviterChainsMeet(q: Queryable, a: string, b: string): Promise<boolean> {
    const shared = await q.query<{ id: string }>(
      `with recursive chain(root, member, depth) as (
         select o.id, o.id, 0 from gateway.operators o where o.id in (?::uuid, ?::uuid)
         union
         select c.root, o.created_by, c.depth + 1 from chain c join gateway.operators o on o.id = c.member
          where o.created_by is not null and c.depth < 64
       )
       select a.member::text as id from chain a join chain b on a.member = b.member
        where a.root = ?::uuid and b.root = ?::uuid limit 1`,
      [a, b, a, b],
    );
    return shared.length > 0;
  }
}
