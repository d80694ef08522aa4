import type { Queryable } from './sql.js';
import { isoCol } from './sql.js';

export type ScheduleStatus = 'ACTIVE' | 'PAUSED' | 'CANCELLED' | 'COMPLETED';
export type RunStatus = 'STARTING' | 'STARTED' | 'FAILED' | 'SKIPPED';

/** The rule as stored (instants as RFC 3339 strings). */
export interface StoredRule {
  recurrence: Record<string, unknown> & { kind: string };
  businessDayRule: string;
  startAt: string;
  endAt: string | null;
  maxRuns: number | null;
}

export interface ScheduleRow {
  id: string;
  companyId: string;
  status: ScheduleStatus;
  description: string | null;
  rule: StoredRule;
  action: Record<string, unknown> & { kind: string };
  authorKind: 'apikey' | 'user';
  authorId: string;
  runsStarted: number;
  lastNominalAt: string | null;
  next: { seq: number; nominalAt: string; nominalLocal: string; dueAt: string } | null;
  version: number;
  createdAt: string;
  updatedAt: string;
}

export interface RunRow {
  id: string;
  scheduleId: string;
  companyId: string;
  seq: number;
  nominalAt: string;
  nominalLocal: string;
  dueAt: string;
  runKey: string;
  action: Record<string, unknown> & { kind: string };
  status: RunStatus;
  amountCents: bigint | null;
  transferId: string | null;
  moveId: string | null;
  batchId: string | null;
  outcomeStatus: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  attempts: number;
  claimedAt: string;
  finishedAt: string | null;
  /** The schedule's author as it is when the run is leased (who the run acts as). */
  author: { kind: 'apikey' | 'user'; id: string } | null;
}

const SCHEDULE_COLUMNS = `id::text as id, company_id::text as company_id, status, description, rule, action, author_kind, author_id,
  runs_started, ${isoCol('last_nominal_at', 'last_nominal_at')}, next_seq, ${isoCol('next_nominal_at', 'next_nominal_at')}, next_nominal_local,
  ${isoCol('next_due_at', 'next_due_at')}, version, ${isoCol('created_at', 'created_at')}, ${isoCol('updated_at', 'updated_at')}`;

/** A run's columns, qualified by `t` (a table alias and a dot) when the statement joins another table. */
const runColumns = (t = '') => `${t}id::text as id, ${t}schedule_id::text as schedule_id, ${t}company_id::text as company_id, ${t}seq,
  ${isoCol(`${t}nominal_at`, 'nominal_at')}, ${t}nominal_local, ${isoCol(`${t}due_at`, 'due_at')}, ${t}run_key, ${t}action, ${t}status,
  ${t}amount_cents::text as amount_cents, ${t}transfer_id, ${t}move_id, ${t}batch_id, ${t}outcome_status, ${t}error_code, ${t}error_message, ${t}attempts,
  ${isoCol(`${t}claimed_at`, 'claimed_at')}, ${isoCol(`${t}finished_at`, 'finished_at')}`;
const RUN_COLUMNS = runColumns();

type Raw = Record<string, unknown>;
const json = <T>(v: unknown): T => (typeof v === 'string' ? (JSON.parse(v) as T) : (v as T));

function scheduleOf(r: Raw): ScheduleRow {
  return {
    id: String(r.id),
    companyId: String(r.company_id),
    status: r.status as ScheduleStatus,
    description: (r.description as string | null) ?? null,
    rule: json<StoredRule>(r.rule),
    action: json<ScheduleRow['action']>(r.action),
    authorKind: r.author_kind as 'apikey' | 'user',
    authorId: String(r.author_id),
    runsStarted: Number(r.runs_started),
    lastNominalAt: (r.last_nominal_at as string | null) ?? null,
    next:
      r.next_due_at == null
        ? null
        : { seq: Number(r.next_seq), nominalAt: String(r.next_nominal_at), nominalLocal: String(r.next_nominal_local), dueAt: String(r.next_due_at) },
    version: Number(r.version),
    createdAt: String(r.created_at),
    updatedAt: String(r.updated_at),
  };
}

function runOf(r: Raw): RunRow {
  return {
    id: String(r.id),
    scheduleId: String(r.schedule_id),
    companyId: String(r.company_id),
    seq: Number(r.seq),
    nominalAt: String(r.nominal_at),
    nominalLocal: String(r.nominal_local),
    dueAt: String(r.due_at),
    runKey: String(r.run_key),
    action: json<RunRow['action']>(r.action),
    status: r.status as RunStatus,
    amountCents: r.amount_cents == null ? null : BigInt(String(r.amount_cents)),
    transferId: (r.transfer_id as string | null) ?? null,
    moveId: (r.move_id as string | null) ?? null,
    batchId: (r.batch_id as string | null) ?? null,
    outcomeStatus: (r.outcome_status as string | null) ?? null,
    errorCode: (r.error_code as string | null) ?? null,
    errorMessage: (r.error_message as string | null) ?? null,
    attempts: Number(r.attempts),
    claimedAt: String(r.claimed_at),
    finishedAt: (r.finished_at as string | null) ?? null,
    author: r.author_kind ? { kind: r.author_kind as 'apikey' | 'user', id: String(r.author_id) } : null,
  };
}

export interface NextRun {
  seq: number;
  nominalAt: string;
  nominalLocal: string;
  dueAt: string;
}

/** A run being claimed: its row, and where its schedule goes next (null: no run left → COMPLETED). */
export interface RunClaim {
  run: {
    id: string;
    scheduleId: string;
    companyId: string;
    seq: number;
    nominalAt: string;
    nominalLocal: string;
    dueAt: string;
    runKey: string;
    action: unknown;
  };
  next: NextRun | null;
}

/** The scheduler's storage (schema `gateway`): schedules and their runs, in plain SQL. */
export class ScheduleStore {
  async insert(
    q: Queryable,
    s: Pick<ScheduleRow, 'id' | 'companyId' | 'description' | 'rule' | 'action' | 'authorKind' | 'authorId'> & { next: NextRun | null },
  ): Promise<ScheduleRow> {
    const rows = await q.query<Raw>(
      `insert into gateway.schedules (id, company_id, status, description, rule, action, author_kind, author_id, next_seq, next_nominal_at, next_nominal_local, next_due_at)
       values (?, ?, ?, ?, ?::jsonb, ?::jsonb, ?, ?, ?, ?::timestamptz, ?, ?::timestamptz) returning ${SCHEDULE_COLUMNS}`,
      [
        s.id,
        s.companyId,
        s.next ? 'ACTIVE' : 'COMPLETED',
        s.description,
        JSON.stringify(s.rule),
        JSON.stringify(s.action),
        s.authorKind,
        s.authorId,
        s.next?.seq ?? null,
        s.next?.nominalAt ?? null,
        s.next?.nominalLocal ?? null,
        s.next?.dueAt ?? null,
      ],
    );
    return scheduleOf(rows[0]!);
  }

  async find(q: Queryable, companyId: string, id: string, opts: { forUpdate?: boolean } = {}): Promise<ScheduleRow | undefined> {
    const rows = await q.query<Raw>(`select ${SCHEDULE_COLUMNS} from gateway.schedules where company_id = ? and id = ?${opts.forUpdate ? ' for update' : ''}`, [
      companyId,
      id,
    ]);
    return rows[0] ? scheduleOf(rows[0]) : undefined;
  }

  /** Newest first; the cursor is the last row's (created_at, id). */
  async list(
    q: Queryable,
    companyId: string,
    opts: { limit: number; after?: { createdAt: string; id: string }; status?: ScheduleStatus },
  ): Promise<ScheduleRow[]> {
    const params: unknown[] = [companyId];
    let where = 'company_id = ?';
    if (opts.status) {
      where += ' and status = ?';
      params.push(opts.status);
    }
    if (opts.after) {
      where += ' and (created_at, id) < (?::timestamptz, ?::uuid)';
      params.push(opts.after.createdAt, opts.after.id);
    }
    params.push(opts.limit);
    const rows = await q.query<Raw>(`select ${SCHEDULE_COLUMNS} from gateway.schedules s where ${where} order by s.created_at desc, s.id desc limit ?`, params);
    return rows.map(scheduleOf);
  }

  /** Every ACTIVE schedule of the company (the projection reads them all; a company has few). */
  async active(q: Queryable, companyId: string): Promise<ScheduleRow[]> {
    const rows = await q.query<Raw>(`select ${SCHEDULE_COLUMNS} from gateway.schedules where company_id = ? and status = 'ACTIVE' order by next_due_at`, [
      companyId,
    ]);
    return rows.map(scheduleOf);
  }

  /** Writes a schedule's new state (after a PATCH or a cancel), in the transaction that locked it. */
  async update(
    q: Queryable,
    id: string,
    s: Pick<ScheduleRow, 'status' | 'description' | 'rule' | 'action' | 'next'> & {
      /** The key that changed it becomes the one its runs act as; absent: unchanged (a cancel). */
      author?: { kind: 'apikey' | 'user'; id: string };
    },
  ): Promise<ScheduleRow> {
    const rows = await q.query<Raw>(
      `update gateway.schedules set status = ?, description = ?, rule = ?::jsonb, action = ?::jsonb, next_seq = ?, next_nominal_at = ?::timestamptz,
              next_nominal_local = ?, next_due_at = ?::timestamptz, author_kind = coalesce(?, author_kind), author_id = coalesce(?, author_id),
              version = version + 1, updated_at = now()
        where id = ? returning ${SCHEDULE_COLUMNS}`,
      [
        s.status,
        s.description,
        JSON.stringify(s.rule),
        JSON.stringify(s.action),
        s.next?.seq ?? null,
        s.next?.nominalAt ?? null,
        s.next?.nominalLocal ?? null,
        s.next?.dueAt ?? null,
        s.author?.kind ?? null,
        s.author?.id ?? null,
        id,
      ],
    );
    return scheduleOf(rows[0]!);
  }

  /** Due schedules, locked for this transaction; other replicas skip them (and take the next ones). */
  async lockDue(q: Queryable, now: string, limit: number): Promise<ScheduleRow[]> {
    const rows = await q.query<Raw>(
      `select ${SCHEDULE_COLUMNS} from gateway.schedules
        where status = 'ACTIVE' and next_due_at <= ?::timestamptz
        order by next_due_at limit ? for update skip locked`,
      [now, limit],
    );
    return rows.map(scheduleOf);
  }

  /**
   * Records the claimed runs (one statement; a run already recorded — the same schedule and nominal
   * time — is left as it is) and moves each schedule on to its next run, or COMPLETED. Answers the
   * runs this call recorded.
   */
  async recordClaims(q: Queryable, claims: readonly RunClaim[], now: string, leaseSeconds: number): Promise<string[]> {
    if (claims.length === 0) return [];
    const runs = await q.query<{ id: string }>(
      `insert into gateway.schedule_runs (id, schedule_id, company_id, seq, nominal_at, nominal_local, due_at, run_key, action, status, lease_until, claimed_at)
       select r.id, r.schedule_id, r.company_id, r.seq, r.nominal_at, r.nominal_local, r.due_at, r.run_key, r.action, 'STARTING',
              ?::timestamptz + make_interval(secs => ?), ?::timestamptz
         from jsonb_to_recordset(?::jsonb) as r(id uuid, schedule_id uuid, company_id uuid, seq int, nominal_at timestamptz, nominal_local text,
                                              due_at timestamptz, run_key text, action jsonb)
       on conflict (schedule_id, nominal_local) do nothing returning id::text as id`,
      [
        now,
        leaseSeconds,
        now,
        JSON.stringify(
          claims.map((c) => ({
            ...c.run,
            schedule_id: c.run.scheduleId,
            company_id: c.run.companyId,
            nominal_at: c.run.nominalAt,
            nominal_local: c.run.nominalLocal,
            due_at: c.run.dueAt,
            run_key: c.run.runKey,
          })),
        ),
      ],
    );
    await q.query(
      `update gateway.schedules s set runs_started = n.seq, last_nominal_at = n.nominal_at,
              status = case when n.next_due_at is null then 'COMPLETED' else s.status end,
              next_seq = n.next_seq, next_nominal_at = n.next_nominal_at, next_nominal_local = n.next_nominal_local, next_due_at = n.next_due_at,
              updated_at = now()
         from jsonb_to_recordset(?::jsonb) as n(id uuid, seq int, nominal_at timestamptz, next_seq int, next_nominal_at timestamptz,
                                              next_nominal_local text, next_due_at timestamptz)
        where s.id = n.id`,
      [
        JSON.stringify(
          claims.map((c) => ({
            id: c.run.scheduleId,
            seq: c.run.seq,
            nominal_at: c.run.nominalAt,
            next_seq: c.next?.seq ?? null,
            next_nominal_at: c.next?.nominalAt ?? null,
            next_nominal_local: c.next?.nominalLocal ?? null,
            next_due_at: c.next?.dueAt ?? null,
          })),
        ),
      ],
    );
    return runs.map((r) => r.id);
  }

  /** Runs to make now: the ids given (just claimed), or STARTING ones whose lease ran out (their replica died, a service was down). Each is leased again. */
  async leaseRuns(q: Queryable, opts: { ids?: readonly string[]; now: string; leaseSeconds: number; limit: number }): Promise<RunRow[]> {
    const pick = opts.ids
      ? `select id as pid from gateway.schedule_runs where id = any(?::uuid[]) and status = 'STARTING' for update skip locked`
      : `select id as pid from gateway.schedule_runs where status = 'STARTING' and lease_until <= ?::timestamptz order by lease_until limit ${Math.trunc(opts.limit)} for update skip locked`;
    // Each run with its schedule's author as it is now (who the run acts as), in the statement that leases it.
    const rows = await q.query<Raw>(
      `with picked as (${pick}),
       leased as (
         update gateway.schedule_runs set lease_until = ?::timestamptz + make_interval(secs => ?), attempts = attempts + 1
           from picked where id = picked.pid returning *)
       select ${runColumns('leased.')}, s.author_kind, s.author_id
         from leased join gateway.schedules s on s.id = leased.schedule_id`,
      [opts.ids ? `{${opts.ids.join(',')}}` : opts.now, opts.now, opts.leaseSeconds],
    );
    return rows.map(runOf);
  }

  /** The amount a top-up computed, kept before its move is asked so a retry moves the same (a run's first amount stands). */
  async fixAmount(q: Queryable, runId: string, amountCents: bigint): Promise<bigint> {
    const rows = await q.query<{ amount_cents: string }>(
      `update gateway.schedule_runs set amount_cents = coalesce(amount_cents, ?::bigint) where id = ? returning amount_cents::text as amount_cents`,
      [amountCents.toString(), runId],
    );
    return BigInt(rows[0]!.amount_cents);
  }

  /** Ends a STARTING run (the transition is won here: a run ends once); false when another replica ended it. */
  async finishRun(
    q: Queryable,
    runId: string,
    o: {
      status: Exclude<RunStatus, 'STARTING'>;
      amountCents: bigint | null;
      transferId?: string | null;
      moveId?: string | null;
      batchId?: string | null;
      outcomeStatus?: string | null;
      errorCode?: string | null;
      errorMessage?: string | null;
      now: string;
    },
  ): Promise<boolean> {
    const rows = await q.query(
      `update gateway.schedule_runs set status = ?, amount_cents = coalesce(?::bigint, amount_cents), transfer_id = ?, move_id = ?, batch_id = ?, outcome_status = ?,
              error_code = ?, error_message = ?, finished_at = ?::timestamptz, lease_until = null
        where id = ? and status = 'STARTING' returning id`,
      [
        o.status,
        o.amountCents?.toString() ?? null,
        o.transferId ?? null,
        o.moveId ?? null,
        o.batchId ?? null,
        o.outcomeStatus ?? null,
        o.errorCode ?? null,
        o.errorMessage ?? null,
        o.now,
        runId,
      ],
    );
    return rows.length === 1;
  }

  async listRuns(q: Queryable, companyId: string, scheduleId: string, opts: { limit: number; beforeSeq?: number }): Promise<RunRow[]> {
    const params: unknown[] = [companyId, scheduleId];
    let where = 'company_id = ? and schedule_id = ?';
    if (opts.beforeSeq !== undefined) {
      where += ' and seq < ?';
      params.push(opts.beforeSeq);
    }
    params.push(opts.limit);
    const rows = await q.query<Raw>(`select ${RUN_COLUMNS} from gateway.schedule_runs where ${where} order by seq desc limit ?`, params);
    return rows.map(runOf);
  }
}
