import { randomUUID } from 'node:crypto';
import { MoneyExceptionsTable, type Database } from '@wallet/platform';
import type { BreakSink, RunOutcome, RunRecord } from '../app/ports.js';
import type { ReconcileResult } from '../app/reconcile.js';
import type { Break } from '../domain/matching.js';
import type { ReportRail } from '../domain/report.js';

export const RECONCILIATION_SCHEMA = 'reconciliation';

/** JSON with bigints as decimal strings (amounts past 2^53 stay exact). */
export const toJson = (v: unknown): string => JSON.stringify(v ?? null, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x));

interface RunRow {
  id: string; rail: ReportRail; date: string; started_at: Date; finished_at: Date | null; outcome: RunOutcome | null;
  reject_reason: string | null; detail: string | null; report_lines: string | null; report_amount_cents: string | null; report_fee_cents: string | null;
  ours_count: string | null; ours_amount_cents: string | null; matched_count: string | null; matched_amount_cents: string | null;
  breaks_total: number | null; breaks_opened: number | null; breaks_by_kind: Record<string, number> | null;
}

const toRun = (r: RunRow): RunRecord => ({
  id: r.id, rail: r.rail, date: r.date, startedAt: new Date(r.started_at), finishedAt: r.finished_at && new Date(r.finished_at),
  outcome: r.outcome, rejectReason: r.reject_reason, detail: r.detail,
  report: r.report_lines === null ? null : { lines: Number(r.report_lines), amountCents: BigInt(r.report_amount_cents!), feeCents: BigInt(r.report_fee_cents!) },
  ours: r.ours_count === null ? null : { count: Number(r.ours_count), amountCents: BigInt(r.ours_amount_cents!) },
  matched: r.matched_count === null ? null : { count: Number(r.matched_count), amountCents: BigInt(r.matched_amount_cents!) },
  breaks: r.breaks_total === null ? null : { total: r.breaks_total, opened: r.breaks_opened!, byKind: r.breaks_by_kind ?? {} },
  openedBeforeFailure: r.outcome === 'FAILED' ? r.breaks_opened : null,
});

const RUN_COLUMNS = `id, rail, to_char(date, 'YYYY-MM-DD') as date, started_at, finished_at, outcome, reject_reason, detail,
  report_lines, report_amount_cents, report_fee_cents, ours_count, ours_amount_cents, matched_count, matched_amount_cents,
  breaks_total, breaks_opened, breaks_by_kind`;

/** `reconciliation.runs`: one row per run, inserted when it starts and completed with its outcome. */
export class RunStore {
  constructor(private readonly db: Database) {}

  async start(rail: ReportRail, date: string): Promise<RunRecord> {
    const id = `run_${randomUUID().replace(/-/g, '')}`;
    const rows = await this.db.prepared<RunRow>(
      `insert into reconciliation.runs (id, rail, date) values ($1, $2, $3::date) returning ${RUN_COLUMNS}`, [id, rail, date]);
    return toRun(rows[0]!);
  }

  async finish(id: string, r: ReconcileResult): Promise<RunRecord> {
    const rows = r.outcome === 'RECONCILED'
      ? await this.db.prepared<RunRow>(
        `update reconciliation.runs set finished_at = now(), outcome = 'RECONCILED',
           report_lines = $2, report_amount_cents = $3, report_fee_cents = $4, ours_count = $5, ours_amount_cents = $6,
           matched_count = $7, matched_amount_cents = $8, breaks_total = $9, breaks_opened = $10, breaks_by_kind = $11::jsonb
         where id = $1 returning ${RUN_COLUMNS}`,
        [id, r.report.lines, r.report.amountCents.toString(), r.report.feeCents.toString(), r.ours.count, r.ours.amountCents.toString(),
          r.matched.count, r.matched.amountCents.toString(), r.breaks.total, r.breaks.opened, toJson(r.breaks.byKind)])
      : await this.db.prepared<RunRow>(
        `update reconciliation.runs set finished_at = now(), outcome = 'REJECTED', reject_reason = $2, detail = $3
         where id = $1 returning ${RUN_COLUMNS}`,
        [id, r.reason, r.lineNo !== undefined ? `line ${r.lineNo}: ${r.detail}` : r.detail]);
    return toRun(rows[0]!);
  }

  async fail(id: string, detail: string, opened: number): Promise<RunRecord> {
    const rows = await this.db.prepared<RunRow>(
      `update reconciliation.runs set finished_at = now(), outcome = 'FAILED', detail = $2, breaks_opened = $3
       where id = $1 returning ${RUN_COLUMNS}`, [id, detail, opened]);
    return toRun(rows[0]!);
  }

  async get(id: string): Promise<RunRecord | undefined> {
    const rows = await this.db.prepared<RunRow>(`select ${RUN_COLUMNS} from reconciliation.runs where id = $1`, [id]);
    return rows[0] && toRun(rows[0]);
  }

  /** Newest first. */
  async list(rail: ReportRail, date: string): Promise<RunRecord[]> {
    const rows = await this.db.prepared<RunRow>(
      `select ${RUN_COLUMNS} from reconciliation.runs where rail = $1 and date = $2::date order by started_at desc, id desc`, [rail, date]);
    return rows.map(toRun);
  }
}

/**
 * The engine's `BreakSink` over `reconciliation.breaks`: each batch is one transaction, one insert of
 * every break (`on conflict (break_key) do update set last_seen_run_id`, so a re-run opens nothing and
 * only marks the break as seen again), then one money exception per NEW break (kind = the break kind
 * in upper case, resource = the break key, ours/theirs from both sides). `opened` counts the new rows.
 */
export class SqlBreakSink implements BreakSink {
  /** Breaks opened by this sink so far (a run that fails halfway records how many it opened). */
  opened = 0;

  constructor(private readonly db: Database, private readonly runId: string) {}

  async open(breaks: readonly Break[]): Promise<{ opened: number }> {
    if (breaks.length === 0) return { opened: 0 };
    const rows = breaks.map((b) => ({
      break_key: b.key, kind: b.kind, rail: b.rail, date: b.date, our_id: b.ourId ?? null, provider_id: b.providerId ?? null,
      ours: b.ours ?? null,
      theirs: b.theirs ? { ...b.theirs, ...(b.copies !== undefined ? { copies: b.copies, others: b.others ?? [] } : {}) } : null,
      company_id: b.ours?.companyId ?? '',
      exc_id: `exc_${randomUUID().replace(/-/g, '')}`,
    }));
    const opened = await this.db.preparedTx(async (tx) => {
      const inserted = await tx.query<{ break_key: string }>(
        `insert into reconciliation.breaks (break_key, run_id, last_seen_run_id, kind, rail, date, our_id, provider_id, ours, theirs)
         select x.break_key, $2, $2, x.kind, x.rail, x.date::date, x.our_id, x.provider_id, x.ours, x.theirs
           from jsonb_to_recordset($1::jsonb) as x(break_key text, kind text, rail text, date text, our_id text, provider_id text, ours jsonb, theirs jsonb)
          -- Rows are locked in key order: two runs of one day (two replicas, or a re-run racing a
          -- scheduled one) then queue on the first key they share instead of deadlocking on two.
          order by x.break_key collate "C"
         on conflict (break_key) do update set last_seen_run_id = excluded.last_seen_run_id
         returning break_key, (xmax = 0) as inserted`,
        [toJson(rows), this.runId]);
      const fresh = new Set(inserted.filter((r) => (r as { inserted?: boolean }).inserted).map((r) => r.break_key));
      const news = rows.filter((r) => fresh.has(r.break_key));
      if (news.length > 0) {
        await tx.query(
          `insert into reconciliation.money_exceptions (id, kind, company_id, rail, resource_id, ours, theirs)
           select x.exc_id, upper(x.kind), x.company_id, x.rail, x.break_key, coalesce(x.ours, '{}'::jsonb), coalesce(x.theirs, '{}'::jsonb)
             from jsonb_to_recordset($1::jsonb) as x(exc_id text, kind text, company_id text, rail text, break_key text, ours jsonb, theirs jsonb)
           on conflict (kind, resource_id) do nothing`,
          [toJson(news)]);
      }
      return news.length;
    });
    this.opened += opened;
    return { opened };
  }
}

/** The money exceptions the breaks opened (the platform's queries over `reconciliation.money_exceptions`). */
export function reconciliationExceptions(db: Database): MoneyExceptionsTable {
  return new MoneyExceptionsTable(<R>(sql: string, params: unknown[]) => db.prepared<R>(sql, params), RECONCILIATION_SCHEMA);
}
