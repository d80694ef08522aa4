import { randomUUID } from 'node:crypto';
import { MoneyExceptionsTable, currentTraceparent, externalMovementRef, type Database, type SqlTx } from '@wallet/platform';
import { reconciliationEventsV1 } from '@wallet/proto';
import type { BreakSink, BreakRecord, RunOutcome, RunRecord, RunStatus, RunTrigger } from '../app/ports.js';
import type { ReconcileResult } from '../app/reconcile.js';
import { isRefundBreak, isReturnBreak, type Break } from '../domain/matching.js';
import type { ReportRail } from '../domain/report.js';
import { breakToProto, runToProto } from '../app/messages.js';

export const RECONCILIATION_SCHEMA = 'reconciliation';

/** Subjects of the reconciliation's events (the RECONCILIATION stream). */
export const SUBJECTS = { completed: 'reconciliation.completed', break: 'reconciliation.break' } as const;

/** JSON with bigints as decimal strings (amounts past 2^53 stay exact). */
export const toJson = (v: unknown): string => JSON.stringify(v ?? null, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x));

/** The money exceptions' rail (the contract's BREB | ACH | PSE): breb-inbound is Bre-B. */
export const exceptionRail = (rail: string): string => (rail === 'ach' ? 'ACH' : rail === 'pse' ? 'PSE' : 'BREB');

interface RunRow {
  id: string;
  rail: ReportRail;
  date: string;
  started_at: Date;
  finished_at: Date | null;
  outcome: RunOutcome | null;
  reject_reason: string | null;
  detail: string | null;
  report_lines: string | null;
  report_amount_cents: string | null;
  report_fee_cents: string | null;
  ours_count: string | null;
  ours_amount_cents: string | null;
  matched_count: string | null;
  matched_amount_cents: string | null;
  breaks_total: number | null;
  breaks_opened: number | null;
  breaks_by_kind: Record<string, number> | null;
  trigger: RunTrigger;
  requested_by: string;
  status: RunStatus;
  report_net_cents: string | null;
  ours_net_cents: string | null;
  covers_until: Date | null;
}

const toRun = (r: RunRow): RunRecord => ({
  id: r.id,
  rail: r.rail,
  date: r.date,
  startedAt: new Date(r.started_at),
  finishedAt: r.finished_at && new Date(r.finished_at),
  trigger: r.trigger,
  requestedBy: r.requested_by,
  status: r.status,
  outcome: r.outcome,
  rejectReason: r.reject_reason,
  detail: r.detail,
  report:
    r.report_lines === null
      ? null
      : {
          lines: Number(r.report_lines),
          amountCents: BigInt(r.report_amount_cents!),
          feeCents: BigInt(r.report_fee_cents!),
          netCents: BigInt(r.report_net_cents ?? 0),
        },
  ours: r.ours_count === null ? null : { count: Number(r.ours_count), amountCents: BigInt(r.ours_amount_cents!), netCents: BigInt(r.ours_net_cents ?? 0) },
  matched: r.matched_count === null ? null : { count: Number(r.matched_count), amountCents: BigInt(r.matched_amount_cents!) },
  breaks: r.breaks_total === null ? null : { total: r.breaks_total, opened: r.breaks_opened!, byKind: r.breaks_by_kind ?? {} },
  openedBeforeFailure: r.outcome === 'FAILED' ? r.breaks_opened : null,
  coversUntil: r.covers_until && new Date(r.covers_until),
});

const RUN_COLUMNS = `id, rail, to_char(date, 'YYYY-MM-DD') as date, started_at, finished_at, outcome, reject_reason, detail,
  report_lines, report_amount_cents, report_fee_cents, ours_count, ours_amount_cents, matched_count, matched_amount_cents,
  breaks_total, breaks_opened, breaks_by_kind, trigger, requested_by, status, report_net_cents, ours_net_cents, covers_until`;

interface BreakRow {
  break_key: string;
  run_id: string;
  last_seen_run_id: string;
  kind: string;
  rail: string;
  date: string;
  our_id: string | null;
  provider_id: string | null;
  ours: Record<string, unknown> | null;
  theirs: Record<string, unknown> | null;
  opened_at: Date;
  status: 'OPEN' | 'RESOLVED';
  resolved_at: Date | null;
  resolution: string | null;
  exception_id: string | null;
  difference_cents: string;
  movement: string | null;
  adjustment_key: string | null;
  adjustment_state: 'POSTED' | 'REVERSING' | 'REVERSED' | null;
  adjustments: number;
  linked_case: string | null;
}

const BREAK_COLUMNS = `break_key, run_id, last_seen_run_id, kind, rail, to_char(date, 'YYYY-MM-DD') as date, our_id, provider_id, ours, theirs,
  opened_at, status, resolved_at, resolution, exception_id, difference_cents, movement, adjustment_key, adjustment_state, adjustments, linked_case`;

const toBreak = (r: BreakRow): BreakRecord => ({
  key: r.break_key,
  kind: r.kind,
  rail: r.rail as ReportRail,
  date: r.date,
  ourId: r.our_id,
  providerId: r.provider_id,
  ours: r.ours,
  theirs: r.theirs,
  status: r.status,
  runId: r.run_id,
  lastSeenRunId: r.last_seen_run_id,
  openedAt: new Date(r.opened_at),
  resolvedAt: r.resolved_at && new Date(r.resolved_at),
  resolution: r.resolution,
  exceptionId: r.exception_id ?? '',
  differenceCents: BigInt(r.difference_cents),
  movement: r.movement ?? '',
  adjustmentKey: r.adjustment_key,
  adjustmentState: r.adjustment_state,
  adjustments: r.adjustments ?? 0,
  linkedCase: r.linked_case,
});

/** The event with the trace context of the write (the run or call), so its consumers continue that trace. */
async function appendEvent(tx: SqlTx, subject: string, payload: unknown): Promise<void> {
  const traceparent = currentTraceparent();
  await tx.query(`insert into reconciliation.outbox (id, subject, payload, headers) values ($1::uuid, $2, $3::jsonb, $4::jsonb)`, [
    randomUUID(),
    subject,
    JSON.stringify(payload),
    JSON.stringify(traceparent ? { traceparent } : {}),
  ]);
}

/** A keyset cursor: base64url of "<ISO time with microseconds>|<id>". */
const encodeCursor = (at: string, id: string) => Buffer.from(`${at}|${id}`).toString('base64url');
export function decodeCursor(c: string): { at: string; id: string } | undefined {
  const s = Buffer.from(c, 'base64url').toString('utf8');
  const i = s.indexOf('|');
  if (i < 0) return undefined;
  const at = s.slice(0, i);
  const id = s.slice(i + 1);
  return !id || Number.isNaN(Date.parse(at)) ? undefined : { at, id };
}

export interface RunFilter {
  rail?: string | undefined;
  date?: string | undefined;
  status?: string | undefined;
  limit: number;
  cursor?: { at: string; id: string } | undefined;
}
export interface BreakFilter {
  runId?: string | undefined;
  rail?: string | undefined;
  date?: string | undefined;
  status?: string | undefined;
  kind?: string | undefined;
  limit: number;
  cursor?: { at: string; id: string } | undefined;
}

/**
 * `reconciliation.runs`: one row per run, RUNNING while under way (at most one per (rail, date):
 * the unique partial index `runs_one_running_uq`, whatever the number of replicas), completed with
 * its outcome in one transaction with the breaks' life cycle and the `reconciliation.completed` event.
 */
export class RunStore {
  constructor(
    private readonly db: Database,
    private readonly eventsWritten: () => void = () => {},
  ) {}

  /** Starts a run of (rail, date), or answers the one already RUNNING (`alreadyRunning`). */
  async start(rail: ReportRail, date: string, trigger: RunTrigger = 'ON_DEMAND', requestedBy = 'admin'): Promise<{ run: RunRecord; alreadyRunning: boolean }> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const id = `run_${randomUUID().replace(/-/g, '')}`;
      const rows = await this.db.prepared<RunRow>(
        // covers_until: the report covers the day up to now (a same-day run), or the whole day.
        `insert into reconciliation.runs (id, rail, date, trigger, requested_by, status, covers_until)
         values ($1, $2, $3::date, $4, $5, 'RUNNING', least(now(), (($3::date + 1)::timestamp + interval '5 hours') at time zone 'UTC'))
         on conflict (rail, date) where status = 'RUNNING' do nothing returning ${RUN_COLUMNS}`,
        [id, rail, date, trigger, requestedBy],
      );
      if (rows[0]) return { run: toRun(rows[0]), alreadyRunning: false };
      const running = await this.db.prepared<RunRow>(
        `select ${RUN_COLUMNS} from reconciliation.runs where rail = $1 and date = $2::date and status = 'RUNNING'`,
        [rail, date],
      );
      if (running[0]) return { run: toRun(running[0]), alreadyRunning: true };
      // It finished between the two statements: try again.
    }
    throw new Error(`could not start a run of ${rail} ${date}`);
  }

  /** The running process's sign of life (the sweeper fails RUNNING runs without one for its stale time). */
  async heartbeat(id: string): Promise<void> {
    await this.db.prepared(`update reconciliation.runs set heartbeat_at = now() where id = $1 and status = 'RUNNING'`, [id]);
  }

  /**
   * Completes the run with the engine's result, in one transaction with: (RECONCILED) the breaks of
   * (rail, date) this run no longer found resolved (`rerun`) with their money exceptions (OPEN ones,
   * or RESOLVING for a `rerun` action), the earlier days' `missing_at_provider` breaks of a record
   * this run found with a `value_date_mismatch` resolved (`superseded`) with theirs; and the run's
   * `reconciliation.completed` event.
   */
  async finish(id: string, r: ReconcileResult): Promise<RunRecord> {
    const run = await this.db.preparedTx(async (tx) => {
      const rows =
        r.outcome === 'RECONCILED'
          ? await tx.query<RunRow>(
              `update reconciliation.runs set finished_at = now(), outcome = 'RECONCILED', status = 'RECONCILED',
             report_lines = $2, report_amount_cents = $3, report_fee_cents = $4, ours_count = $5, ours_amount_cents = $6,
             matched_count = $7, matched_amount_cents = $8, breaks_total = $9, breaks_opened = $10, breaks_by_kind = $11::jsonb,
             report_net_cents = $12, ours_net_cents = $13
           where id = $1 and status = 'RUNNING' returning ${RUN_COLUMNS}`,
              [
                id,
                r.report.lines,
                r.report.amountCents.toString(),
                r.report.feeCents.toString(),
                r.ours.count,
                r.ours.amountCents.toString(),
                r.matched.count,
                r.matched.amountCents.toString(),
                r.breaks.total,
                r.breaks.opened,
                toJson(r.breaks.byKind),
                r.report.netCents.toString(),
                r.ours.netCents.toString(),
              ],
            )
          : await tx.query<RunRow>(
              `update reconciliation.runs set finished_at = now(), outcome = 'REJECTED', status = 'REJECTED', reject_reason = $2, detail = $3
           where id = $1 and status = 'RUNNING' returning ${RUN_COLUMNS}`,
              [id, r.reason, r.lineNo !== undefined ? `line ${r.lineNo}: ${r.detail}` : r.detail],
            );
      const row = rows[0];
      if (!row) return this.interrupted(tx, id);
      if (r.outcome === 'RECONCILED') await resolveAfterRun(tx, row.id, row.rail, row.date);
      const done = toRun(row);
      await appendEvent(tx, SUBJECTS.completed, reconciliationEventsV1.ReconciliationCompleted.toJSON({ run: runToProto(done) }));
      return done;
    });
    this.eventsWritten();
    return run;
  }

  async fail(id: string, detail: string, opened: number): Promise<RunRecord> {
    const run = await this.db.preparedTx(async (tx) => {
      const rows = await tx.query<RunRow>(
        `update reconciliation.runs set finished_at = now(), outcome = 'FAILED', status = 'FAILED', detail = $2, breaks_opened = $3
         where id = $1 and status = 'RUNNING' returning ${RUN_COLUMNS}`,
        [id, detail, opened],
      );
      if (!rows[0]) return this.interrupted(tx, id);
      const done = toRun(rows[0]);
      await appendEvent(tx, SUBJECTS.completed, reconciliationEventsV1.ReconciliationCompleted.toJSON({ run: runToProto(done) }));
      return done;
    });
    this.eventsWritten();
    return run;
  }

  /** The run was no longer RUNNING (the sweeper failed it as interrupted): it stays as the sweeper left it. */
  private async interrupted(tx: SqlTx, id: string): Promise<RunRecord> {
    const rows = await tx.query<RunRow>(`select ${RUN_COLUMNS} from reconciliation.runs where id = $1`, [id]);
    if (!rows[0]) throw new Error(`run ${id} not found`);
    return toRun(rows[0]);
  }

  /**
   * Runs left RUNNING by a process that died (no heartbeat for `staleMs`) become FAILED, detail
   * "interrupted", each with its `reconciliation.completed` event. Returns them.
   */
  async sweepStale(staleMs: number): Promise<RunRecord[]> {
    const runs = await this.db.preparedTx(async (tx) => {
      const rows = await tx.query<RunRow>(
        `update reconciliation.runs set finished_at = now(), outcome = 'FAILED', status = 'FAILED', detail = 'interrupted'
          where id in (select id from reconciliation.runs where status = 'RUNNING' and heartbeat_at < now() - ($1::bigint * interval '1 millisecond')
                        order by id for update skip locked)
          returning ${RUN_COLUMNS}`,
        [staleMs],
      );
      const done = rows.map(toRun);
      for (const run of done) await appendEvent(tx, SUBJECTS.completed, reconciliationEventsV1.ReconciliationCompleted.toJSON({ run: runToProto(run) }));
      return done;
    });
    if (runs.length > 0) this.eventsWritten();
    return runs;
  }

  async get(id: string): Promise<RunRecord | undefined> {
    const rows = await this.db.prepared<RunRow>(`select ${RUN_COLUMNS} from reconciliation.runs where id = $1`, [id]);
    return rows[0] && toRun(rows[0]);
  }

  /** Has (rail, date) a run with this trigger that reached the report (RECONCILED or REJECTED)? */
  async hasCompleted(rail: ReportRail, date: string, trigger: RunTrigger): Promise<boolean> {
    const rows = await this.db.prepared<{ n: number }>(
      `select count(*)::int as n from reconciliation.runs where rail = $1 and date = $2::date and trigger = $3 and status in ('RECONCILED', 'REJECTED')`,
      [rail, date, trigger],
    );
    return (rows[0]?.n ?? 0) > 0;
  }

  /** Newest first (started_at desc, id desc), keyset-paginated. */
  async list(f: RunFilter): Promise<{ items: RunRecord[]; nextCursor: string | null }> {
    const rows = await this.db.prepared<RunRow & { cursor_ts: string }>(
      `select ${RUN_COLUMNS}, to_char(started_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as cursor_ts from reconciliation.runs
        where ($1::text is null or rail = $1) and ($2::date is null or date = $2::date) and ($3::text is null or status = $3)
          and ($4::timestamptz is null or (started_at, id) < ($4::timestamptz, $5::text))
        order by started_at desc, id desc limit $6`,
      [f.rail ?? null, f.date ?? null, f.status ?? null, f.cursor?.at ?? null, f.cursor?.id ?? null, f.limit + 1],
    );
    const page = rows.slice(0, f.limit);
    const last = page[page.length - 1];
    return { items: page.map(toRun), nextCursor: rows.length > f.limit && last ? encodeCursor(last.cursor_ts, last.id) : null };
  }
}

/**
 * Whether the break (alias `t`) is about a breb-inbound return leg (domain `isReturnBreak`): its key ends
 * in `:return:<our id>` (our id: the return's id). The full return of a held payment has the deposit id
 * as its id, like the payment leg: the leg keeps their breaks apart.
 */
const RETURN_LEG = (t: string) => `(right(${t}.break_key, length(${t}.our_id) + 8) = ':return:' || ${t}.our_id)`;

/**
 * The breaks' life cycle at the end of a RECONCILED run (in its transaction):
 * - `rerun`: the OPEN breaks of (rail, date) this run did not find again (a corrected report),
 *   with their money exception (OPEN, or RESOLVING for an operator's `rerun`) RESOLVED;
 * - `superseded`: an OPEN `missing_at_provider` of an earlier day for a record this run found with a
 *   `value_date_mismatch` (the line came on a later day), with its money exception.
 */
async function resolveAfterRun(tx: SqlTx, runId: string, rail: string, date: string): Promise<void> {
  await tx.query(
    `with gone as (
       update reconciliation.breaks b set status = 'RESOLVED', resolution = 'rerun', resolved_at = now()
        where b.rail = $2 and b.date = $3::date and b.status = 'OPEN' and b.last_seen_run_id <> $1
          and not exists (select 1 from reconciliation.money_exceptions e where e.id = b.exception_id
                           and (e.status = 'RESOLVED' or (e.status = 'RESOLVING' and e.action <> 'rerun')))
        returning b.exception_id)
     update reconciliation.money_exceptions e set status = 'RESOLVED', resolved_at = now(), action = 'rerun',
            resolved_by = case when e.status = 'RESOLVING' then e.resolved_by else 'reconciliation' end,
            note = case when e.status = 'RESOLVING' then e.note else 'the break is no longer in the provider''s report' end
       from gone where e.id = gone.exception_id and e.status <> 'RESOLVED'`,
    [runId, rail, date],
  );
  await tx.query(
    `with later as (
       select our_id, date, break_key from reconciliation.breaks
        where last_seen_run_id = $1 and kind = 'value_date_mismatch' and our_id is not null),
     gone as (
       update reconciliation.breaks b set status = 'RESOLVED', resolution = 'superseded', resolved_at = now()
         from later
        where b.rail = $2 and b.kind = 'missing_at_provider' and b.status = 'OPEN' and b.our_id = later.our_id and b.date < later.date
          and ($2 <> 'pse' or split_part(b.break_key, ':', 5) = split_part(later.break_key, ':', 5))
          and ($2 <> 'breb-inbound' or ${RETURN_LEG('b')} = ${RETURN_LEG('later')})
          and not exists (select 1 from reconciliation.money_exceptions e where e.id = b.exception_id and e.status <> 'OPEN')
        returning b.exception_id, later.break_key as by_key)
     update reconciliation.money_exceptions e set status = 'RESOLVED', resolved_at = now(), action = 'superseded', resolved_by = 'reconciliation',
            note = 'the provider reported it on a later day: ' || gone.by_key
       from gone where e.id = gone.exception_id and e.status = 'OPEN'`,
    [runId, rail],
  );
  // An accepted break this run no longer finds (the provider's line now matches our books,
  // or the record was found on a later day) has its adjustment undone: the difference it booked is
  // gone. REVERSING here, in the run's transaction; the ledger call follows (reverseAdjustments).
  await tx.query(
    `update reconciliation.breaks b set adjustment_state = 'REVERSING'
      where b.adjustment_state = 'POSTED' and b.status = 'RESOLVED' and b.resolution = 'accept_provider'
        and ((b.rail = $2 and b.date = $3::date and b.last_seen_run_id <> $1)
          or (b.rail = $2 and b.kind = 'missing_at_provider' and b.date < $3::date and exists (
                select 1 from reconciliation.breaks l where l.last_seen_run_id = $1 and l.kind = 'value_date_mismatch' and l.our_id = b.our_id
                   and ($2 <> 'pse' or split_part(b.break_key, ':', 5) = split_part(l.break_key, ':', 5))
                   and ($2 <> 'breb-inbound' or ${RETURN_LEG('b')} = ${RETURN_LEG('l')}))))`,
    [runId, rail, date],
  );
}

/** `reconciliation.breaks` read and resolved by the operator's actions. */
export class BreakStore {
  constructor(private readonly db: Database) {}

  async get(key: string): Promise<BreakRecord | undefined> {
    const rows = await this.db.prepared<BreakRow>(`select ${BREAK_COLUMNS} from reconciliation.breaks where break_key = $1`, [key]);
    return rows[0] && toBreak(rows[0]);
  }

  /** The adjustment of an accepted break is in the ledger under `key` (the `n`th the break posted), for `cents`. */
  async markAdjusted(breakKey: string, adjustmentKey: string, n: number, cents: bigint): Promise<void> {
    await this.db.prepared(
      `update reconciliation.breaks set adjustment_key = $2, adjustment_state = 'POSTED', adjustments = $3, adjusted_cents = $4::bigint where break_key = $1`,
      [breakKey, adjustmentKey, n, cents.toString()],
    );
  }

  /** Accepted breaks whose adjustment is to be undone (REVERSING), oldest first. */
  async reversing(limit: number): Promise<BreakRecord[]> {
    const rows = await this.db.prepared<BreakRow>(
      `select ${BREAK_COLUMNS} from reconciliation.breaks where adjustment_state = 'REVERSING' order by break_key limit $1`,
      [limit],
    );
    return rows.map(toBreak);
  }

  /** REVERSING → REVERSED once the ledger undid the adjustment under `adjustmentKey`. */
  async markReversed(breakKey: string, adjustmentKey: string): Promise<void> {
    await this.db.prepared(
      `update reconciliation.breaks set adjustment_state = 'REVERSED' where break_key = $1 and adjustment_key = $2 and adjustment_state = 'REVERSING'`,
      [breakKey, adjustmentKey],
    );
  }

  async keysOfMovement(movement: string): Promise<string[]> {
    return (await this.db.prepared<{ k: string }>(`select break_key as k from reconciliation.breaks where movement = $1`, [movement])).map((r) => r.k);
  }

  async movementsOf(keys: readonly string[]): Promise<Map<string, string>> {
    if (keys.length === 0) return new Map();
    const rows = await this.db.prepared<{ k: string; m: string | null }>(
      `select break_key as k, movement as m from reconciliation.breaks where break_key = any($1::text[])`,
      [[...keys]],
    );
    return new Map(rows.filter((r) => r.m).map((r) => [r.k, r.m!]));
  }

  /** OPEN → RESOLVED 'linked': another case's correcting entry of the same movement stands for it. */
  async resolveLinked(key: string, caseId: string): Promise<void> {
    await this.db.prepared(
      `update reconciliation.breaks set status = 'RESOLVED', resolution = 'linked', linked_case = $2, resolved_at = now()
      where break_key = $1 and status = 'OPEN'`,
      [key, caseId],
    );
  }

  /** OPEN → RESOLVED with this resolution (idempotent: an already resolved break is answered as it is). */
  async resolve(key: string, resolution: string): Promise<BreakRecord | undefined> {
    // One round trip when it resolves; the read only for a break already resolved (or unknown).
    const rows = await this.db.prepared<BreakRow>(
      `update reconciliation.breaks set status = 'RESOLVED', resolution = $2, resolved_at = now() where break_key = $1 and status = 'OPEN'
        returning ${BREAK_COLUMNS}`,
      [key, resolution],
    );
    return rows[0] ? toBreak(rows[0]) : this.get(key);
  }

  /** Newest first (opened_at desc, key desc), keyset-paginated. */
  async list(f: BreakFilter): Promise<{ items: BreakRecord[]; nextCursor: string | null }> {
    const rows = await this.db.prepared<BreakRow & { cursor_ts: string }>(
      `select ${BREAK_COLUMNS}, to_char(opened_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as cursor_ts from reconciliation.breaks
        where ($1::text is null or run_id = $1 or last_seen_run_id = $1) and ($2::text is null or rail = $2) and ($3::date is null or date = $3::date)
          and ($4::text is null or status = $4) and ($5::text is null or kind = $5)
          and ($6::timestamptz is null or (opened_at, break_key) < ($6::timestamptz, $7::text))
        order by opened_at desc, break_key desc limit $8`,
      [f.runId ?? null, f.rail ?? null, f.date ?? null, f.status ?? null, f.kind ?? null, f.cursor?.at ?? null, f.cursor?.id ?? null, f.limit + 1],
    );
    const page = rows.slice(0, f.limit);
    const last = page[page.length - 1];
    return { items: page.map(toBreak), nextCursor: rows.length > f.limit && last ? encodeCursor(last.cursor_ts, last.break_key) : null };
  }
}

/** An accepted break whose difference is no longer the one its adjustment booked (`b` the stored row: SET reads the old row). */
const REOPENED = `(b.status = 'RESOLVED' and b.resolution = 'accept_provider' and b.adjustment_state = 'POSTED' and b.adjusted_cents is distinct from excluded.difference_cents)`;
/** A break seen again takes this run's sides and difference while OPEN or explained, or when it is reopened. */
const REFRESHED = `(b.status = 'OPEN' or b.resolution = 'explain' or ${REOPENED})`;

/**
 * The external movement a break is about (the ledger's corrections register name). On breb-inbound a
 * return leg is a movement of its own: one return per payment (the full return of a held payment,
 * whose id is the deposit id) keeps the name it always had, `breb-inbound:<provider id>:return`; a
 * return of a credited payment (`ret_…`, one of possibly several, each in part) is
 * `breb-inbound:<provider id>:<return id>:return` (`returnMovement`), so that each return's break is
 * corrected once and two returns of one payment never share one correction. On pse a refund (its
 * break key ends in `:refund:<return id>`) is a movement of its own too, `pse:our:<return id>:reversal`
 * (`refundMovement`).
 */
export function breakMovement(b: Pick<Break, 'rail' | 'key' | 'providerId' | 'ourId' | 'ours'>): string {
  const providerId = b.providerId ?? (typeof b.ours?.providerId === 'string' ? b.ours.providerId : null);
  if (isRefundBreak(b)) return refundMovement(b.ourId!);
  if (b.rail === 'pse') return externalMovementRef(b.rail, { ourId: b.ourId ?? null, providerId }, b.key.endsWith(':reversal') ? 'reversal' : 'payment');
  if (isReturnBreak(b) && providerId) return returnMovement(providerId, b.ourId);
  return externalMovementRef(b.rail, { ourId: b.ourId ?? null, providerId }, isReturnBreak(b) ? 'return' : undefined);
}

/**
 * The movement of a refund of a PSE deposit (pse-deposit's deposit_returns), named by the return's id:
 * each refund is corrected on its own, never with the deposit's payment or reversal or another refund.
 * The leg is `reversal` (money back to the payer, the OUT leg) because the corrections register's
 * parser (platform `parseExternalMovement`, used by the ledger) takes only `payment` or `reversal` on
 * pse: `pse:our:<return id>:refund` would be refused. The return id keeps it apart from the deposit's own
 * reversal (`pse:our:<deposit id>:reversal`).
 */
export function refundMovement(returnId: string): string {
  return externalMovementRef('pse', { ourId: returnId }, 'reversal');
}

/** A return id of a return of a credited payment (collect-key's payment_returns). */
const RETURN_ID = /^ret_[a-z0-9]{24}$/;

/** The movement of a return to the payer of an inbound Bre-B payment (see `breakMovement`). */
export function returnMovement(providerId: string, returnId: string | null | undefined): string {
  const id = returnId && RETURN_ID.test(returnId) ? `${providerId}:${returnId}` : providerId;
  return externalMovementRef('breb-inbound', { providerId: id }, 'return');
}

/**
 * The engine's `BreakSink` over `reconciliation.breaks`: each batch is one transaction, one insert of
 * every break (`on conflict (break_key) do update set last_seen_run_id`, so a re-run opens nothing and
 * only marks the break as seen again), then one money exception per NEW break (kind = the break kind
 * in upper case, resource = the break key, rail BREB | ACH | PSE, ours/theirs from both sides) and
 * one `reconciliation.break` event per new break. `opened` counts the new rows.
 */
export class SqlBreakSink implements BreakSink {
  /** Breaks opened by this sink so far (a run that fails halfway records how many it opened). */
  opened = 0;

  constructor(
    private readonly db: Database,
    private readonly runId: string,
    private readonly eventsWritten: () => void = () => {},
  ) {}

  async open(breaks: readonly Break[]): Promise<{ opened: number }> {
    if (breaks.length === 0) return { opened: 0 };
    const rows = breaks.map((b) => ({
      break_key: b.key,
      kind: b.kind,
      rail: b.rail,
      date: b.date,
      our_id: b.ourId ?? null,
      provider_id: b.providerId ?? null,
      ours: b.ours ?? null,
      theirs: b.theirs ? { ...b.theirs, ...(b.copies !== undefined ? { copies: b.copies, others: b.others ?? [] } : {}) } : null,
      company_id: b.ours?.companyId ?? '',
      exc_id: `exc_${randomUUID().replace(/-/g, '')}`,
      exc_rail: exceptionRail(b.rail),
      difference_cents: b.differenceCents.toString(),
      movement: breakMovement(b),
    }));
    const opened = await this.db.preparedTx(async (tx) => {
      // A break seen again is refreshed (docs/reconciliation.md "Break life cycle"): while OPEN or explained, both sides and the
      // difference are this run's; an accepted one whose difference changed is OPEN again and its
      // adjustment is undone (REVERSING, by reverseAdjustments after the run) before it can be accepted anew.
      const inserted = await tx.query<BreakRow & { inserted: boolean }>(
        `insert into reconciliation.breaks as b (break_key, run_id, last_seen_run_id, kind, rail, date, our_id, provider_id, ours, theirs, exception_id, difference_cents, movement)
         select x.break_key, $2, $2, x.kind, x.rail, x.date::date, x.our_id, x.provider_id, x.ours, x.theirs, x.exc_id, x.difference_cents::bigint, x.movement
           from jsonb_to_recordset($1::jsonb) as x(break_key text, kind text, rail text, date text, our_id text, provider_id text, ours jsonb, theirs jsonb,
                                                   exc_id text, difference_cents text, movement text)
          -- Rows are locked in key order: two runs of one day (two replicas, or a re-run racing a
          -- scheduled one) then queue on the first key they share instead of deadlocking on two.
          order by x.break_key collate "C"
         on conflict (break_key) do update set last_seen_run_id = excluded.last_seen_run_id,
           ours = case when ${REFRESHED} then excluded.ours else b.ours end,
           theirs = case when ${REFRESHED} then excluded.theirs else b.theirs end,
           difference_cents = case when ${REFRESHED} then excluded.difference_cents else b.difference_cents end,
           movement = coalesce(b.movement, excluded.movement),
           status = case when ${REOPENED} then 'OPEN' else b.status end,
           resolution = case when ${REOPENED} then null else b.resolution end,
           resolved_at = case when ${REOPENED} then null else b.resolved_at end,
           adjustment_state = case when ${REOPENED} then 'REVERSING' else b.adjustment_state end
         returning ${BREAK_COLUMNS}, (xmax = 0) as inserted`,
        [toJson(rows), this.runId],
      );
      const fresh = inserted.filter((r) => r.inserted);
      const freshKeys = new Set(fresh.map((r) => r.break_key));
      const news = rows.filter((r) => freshKeys.has(r.break_key));
      if (news.length > 0) {
        await tx.query(
          `insert into reconciliation.money_exceptions (id, kind, company_id, rail, resource_id, ours, theirs)
           select x.exc_id, upper(x.kind), x.company_id, x.exc_rail, x.break_key, coalesce(x.ours, '{}'::jsonb), coalesce(x.theirs, '{}'::jsonb)
             from jsonb_to_recordset($1::jsonb) as x(exc_id text, kind text, company_id text, exc_rail text, break_key text, ours jsonb, theirs jsonb)
           on conflict (kind, resource_id) do nothing`,
          [toJson(news)],
        );
        for (const b of fresh) {
          await appendEvent(tx, SUBJECTS.break, reconciliationEventsV1.ReconciliationBreak.toJSON({ break: breakToProto(toBreak(b)) }));
        }
      }
      const seen = inserted.filter((r) => !r.inserted).map((r) => r.break_key);
      if (seen.length > 0) {
        // Their exceptions show what the break shows now; one whose accepted break came back is OPEN again.
        await tx.query(
          `update reconciliation.money_exceptions e set ours = coalesce(b.ours, '{}'::jsonb), theirs = coalesce(b.theirs, '{}'::jsonb),
                  status = case when b.status = 'OPEN' and e.status = 'RESOLVED' then 'OPEN' else e.status end,
                  action = case when b.status = 'OPEN' and e.status = 'RESOLVED' then null else e.action end,
                  note = case when b.status = 'OPEN' and e.status = 'RESOLVED' then null else e.note end,
                  resolved_by = case when b.status = 'OPEN' and e.status = 'RESOLVED' then null else e.resolved_by end,
                  resolved_at = case when b.status = 'OPEN' and e.status = 'RESOLVED' then null else e.resolved_at end
             from reconciliation.breaks b
            where b.break_key = any($1::text[]) and e.id = b.exception_id and e.status <> 'RESOLVING'
              and (e.ours is distinct from coalesce(b.ours, '{}'::jsonb) or e.theirs is distinct from coalesce(b.theirs, '{}'::jsonb)
                   or (b.status = 'OPEN' and e.status = 'RESOLVED'))`,
          [seen],
        );
      }
      return news.length;
    });
    if (opened > 0) this.eventsWritten();
    this.opened += opened;
    return { opened };
  }
}

/** The money exceptions the breaks opened (the platform's queries over `reconciliation.money_exceptions`). */
export function reconciliationExceptions(db: Database): MoneyExceptionsTable {
  return new MoneyExceptionsTable(<R>(sql: string, params: unknown[]) => db.prepared<R>(sql, params), RECONCILIATION_SCHEMA);
}

/**
 * `reconciliation.schedule_claims`: the replica that claims a scheduled (rail, date) runs it, retries
 * included. A claim not done whose holder stopped beating for `staleMs` is taken over.
 */
export class SqlScheduleClaims {
  constructor(
    private readonly db: Database,
    private readonly staleMs: number,
  ) {}

  async claim(rail: ReportRail, date: string, holder: string): Promise<boolean> {
    const rows = await this.db.prepared<{ claimed_by: string }>(
      `insert into reconciliation.schedule_claims as c (rail, date, claimed_by) values ($1, $2::date, $3)
       on conflict (rail, date) do update set claimed_by = excluded.claimed_by, claimed_at = now(), heartbeat_at = now()
        where c.done_at is null and c.heartbeat_at < now() - ($4::bigint * interval '1 millisecond')
       returning claimed_by`,
      [rail, date, holder, this.staleMs],
    );
    return rows[0]?.claimed_by === holder;
  }

  async beat(rail: ReportRail, date: string, holder: string): Promise<void> {
    await this.db.prepared(`update reconciliation.schedule_claims set heartbeat_at = now() where rail = $1 and date = $2::date and claimed_by = $3`, [
      rail,
      date,
      holder,
    ]);
  }

  async done(rail: ReportRail, date: string, holder: string): Promise<void> {
    await this.db.prepared(`update reconciliation.schedule_claims set done_at = now() where rail = $1 and date = $2::date and claimed_by = $3`, [
      rail,
      date,
      holder,
    ]);
  }
}
