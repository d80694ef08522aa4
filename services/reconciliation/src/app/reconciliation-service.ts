import {
  AppError, Problems, listExceptionsPage, resolveMoneyException, type ExceptionView, type Logger, type MoneyException, type MoneyExceptionStore,
} from '@wallet/platform';
import { REPORT_RAILS, bogotaDate, isCalendarDate, type ReportRail } from '../domain/report.js';
import { BREAK_KINDS } from '../domain/matching.js';
import type { ReconcileDay, RunEnded } from './reconcile-day.js';
import { RUN_STATUSES, type BreakRecord, type RunRecord } from './ports.js';

/** The ledger's correcting entry when the provider's side is accepted (LedgerService.PostClearingAdjustment). */
export interface ClearingLedger {
  postClearingAdjustment(a: { idempotencyKey: string; clearing: ReportRail; deltaCents: bigint; reason: string }): Promise<void>;
}

export interface RunsQuery {
  get(id: string): Promise<RunRecord | undefined>;
  list(f: { rail?: string; date?: string; status?: string; limit: number; cursor?: { at: string; id: string } }): Promise<{ items: RunRecord[]; nextCursor: string | null }>;
}
export interface BreaksPort {
  get(key: string): Promise<BreakRecord | undefined>;
  resolve(key: string, resolution: string): Promise<BreakRecord | undefined>;
  list(f: { runId?: string; rail?: string; date?: string; status?: string; kind?: string; limit: number; cursor?: { at: string; id: string } }): Promise<{ items: BreakRecord[]; nextCursor: string | null }>;
}

export interface ReconciliationServiceDeps {
  day: ReconcileDay;
  runs: RunsQuery;
  breaks: BreaksPort;
  exceptions: MoneyExceptionStore;
  /** Puts an exception won for `action` back to OPEN (a rerun that still finds its break). */
  reopenException(id: string, action: string): Promise<void>;
  ledger: ClearingLedger;
  decodeCursor(c: string): { at: string; id: string } | undefined;
  log: Logger;
  now?: () => Date;
  /** How long a `rerun` waits for a run of the same day already under way (default 10 min). */
  rerunWaitMs?: number;
}

/** The resolutions of the reconciliation's money exceptions (every kind admits the three). */
export const RECON_ACTIONS = ['accept_provider', 'explain', 'rerun'] as const;
export const EXCEPTION_KINDS = BREAK_KINDS.map((k) => k.toUpperCase());
const view = (e: MoneyException): ExceptionView => ({ ...e, actions: RECON_ACTIONS });
const RUN_ID = /^run_[0-9a-f]{32}$/;

/**
 * The reconciliation's use cases behind its gRPC API: runs started on demand (in the background,
 * one per (rail, date) at a time), read and listed; breaks listed; money exceptions listed and
 * resolved (accept_provider: the clearing adjustment then RESOLVED; explain; rerun: the day run
 * again now).
 */
export class ReconciliationService {
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly abort = new AbortController();

  constructor(private readonly deps: ReconciliationServiceDeps) {}

  private today(): string {
    return bogotaDate(this.deps.now?.() ?? new Date());
  }

  /** A rail of the contract and a calendar date that is not after today in Bogotá. */
  validateDay(rail: string, date: string): asserts rail is ReportRail {
    const p = new Problems();
    if (!(REPORT_RAILS as readonly string[]).includes(rail)) p.add('rail', `one of ${REPORT_RAILS.join(', ')}`);
    if (!isCalendarDate(date)) p.add('date', 'a date YYYY-MM-DD');
    else if (date > this.today()) p.add('date', 'not after today (Bogotá)');
    p.throwIfAny();
  }

  /** StartRun: the run RUNNING (it goes on in the background), or the one of (rail, date) already under way. */
  async startRun(rail: string, date: string, requestedBy: string): Promise<{ run: RunRecord; alreadyRunning: boolean }> {
    this.validateDay(rail, date);
    const started = await this.deps.day.begin(rail, date, 'ON_DEMAND', requestedBy || 'admin');
    if (!started.alreadyRunning) this.background(started.run);
    return started;
  }

  /** Runs a started run in the background (tracked: `stop` waits for it). */
  background(run: RunRecord): Promise<RunEnded> {
    const p = this.deps.day.execute(run, this.abort.signal);
    const tracked = p.catch((err) => { this.deps.log.error({ err, runId: run.id }, 'reconciliation run failed to record its end'); });
    this.inFlight.add(tracked);
    void tracked.finally(() => this.inFlight.delete(tracked));
    return p;
  }

  async getRun(id: string): Promise<RunRecord> {
    const run = RUN_ID.test(id) ? await this.deps.runs.get(id) : undefined;
    if (!run) throw new AppError('RECONCILIATION_NOT_FOUND');
    return run;
  }

  async listRuns(q: { rail?: string | undefined; date?: string | undefined; status?: string | undefined; limit?: number; cursor?: string | undefined }) {
    const p = new Problems();
    if (q.rail && !(REPORT_RAILS as readonly string[]).includes(q.rail)) p.add('rail', `one of ${REPORT_RAILS.join(', ')}`);
    if (q.date && !isCalendarDate(q.date)) p.add('date', 'a date YYYY-MM-DD');
    if (q.status && !(RUN_STATUSES as readonly string[]).includes(q.status)) p.add('status', `one of ${RUN_STATUSES.join(', ')}`);
    const limit = this.limit(q.limit, p);
    const cursor = this.cursor(q.cursor, p);
    p.throwIfAny();
    return this.deps.runs.list({ ...(q.rail ? { rail: q.rail } : {}), ...(q.date ? { date: q.date } : {}), ...(q.status ? { status: q.status } : {}), limit, ...(cursor ? { cursor } : {}) });
  }

  async listBreaks(q: { runId?: string | undefined; rail?: string | undefined; date?: string | undefined; status?: string | undefined; kind?: string | undefined; limit?: number; cursor?: string | undefined }) {
    const p = new Problems();
    if (q.runId && !RUN_ID.test(q.runId)) p.add('runId', 'a run id');
    if (q.rail && !(REPORT_RAILS as readonly string[]).includes(q.rail)) p.add('rail', `one of ${REPORT_RAILS.join(', ')}`);
    if (q.date && !isCalendarDate(q.date)) p.add('date', 'a date YYYY-MM-DD');
    if (q.status && !['OPEN', 'RESOLVED'].includes(q.status)) p.add('status', 'one of OPEN, RESOLVED');
    if (q.kind && !(BREAK_KINDS as readonly string[]).includes(q.kind)) p.add('kind', `one of ${BREAK_KINDS.join(', ')}`);
    const limit = this.limit(q.limit, p);
    const cursor = this.cursor(q.cursor, p);
    p.throwIfAny();
    return this.deps.breaks.list({
      ...(q.runId ? { runId: q.runId } : {}), ...(q.rail ? { rail: q.rail } : {}), ...(q.date ? { date: q.date } : {}),
      ...(q.status ? { status: q.status } : {}), ...(q.kind ? { kind: q.kind } : {}), limit, ...(cursor ? { cursor } : {}),
    });
  }

  private limit(l: number | undefined, p: Problems): number {
    const limit = l && l > 0 ? l : 50;
    if (limit > 100) p.add('limit', 'at most 100');
    return limit;
  }

  private cursor(c: string | undefined, p: Problems): { at: string; id: string } | undefined {
    if (!c) return undefined;
    const d = this.deps.decodeCursor(c);
    if (!d) p.add('cursor', 'not a cursor returned by this listing');
    return d;
  }

  listExceptions(q: { status?: string | undefined; kind?: string | undefined; limit?: number; cursor?: string | undefined }) {
    return listExceptionsPage((x) => this.deps.exceptions.list(x), EXCEPTION_KINDS, view, q);
  }

  /**
   * The operator's decision on a break's money exception, won first (OPEN → RESOLVING; the same
   * action again resumes an interrupted one), then:
   * - accept_provider: PostClearingAdjustment(clearing of the rail, delta = the break's difference,
   *   key `recon:<break key>:accept_provider`, idempotent) when the difference is not 0; the break RESOLVED;
   * - explain: the break RESOLVED with the note;
   * - rerun: the (rail, date) reconciled again now; the break gone → the run's completion resolved
   *   both; still there → the exception back to OPEN and BREAK_STILL_PRESENT.
   * Then the exception RESOLVED.
   */
  async resolveException(input: { id: string; action: string; note: string; resolvedBy: string }): Promise<ExceptionView> {
    const { deps } = this;
    const done = await resolveMoneyException(deps.exceptions, input, () => RECON_ACTIONS, async (won, note) => {
      const b = await deps.breaks.get(won.resourceId);
      if (!b) throw new AppError('INTERNAL_ERROR', undefined, { reason: 'exception without its break' });
      if (won.action === 'accept_provider') {
        if (b.differenceCents !== 0n) {
          await deps.ledger.postClearingAdjustment({
            idempotencyKey: `recon:${b.key}:accept_provider`, clearing: b.rail, deltaCents: b.differenceCents,
            reason: `${b.key} ${won.id}: ${note}`.slice(0, 500),
          });
        }
        await deps.breaks.resolve(b.key, 'accept_provider');
      } else if (won.action === 'explain') {
        await deps.breaks.resolve(b.key, 'explain');
      } else {
        const ended = await this.rerun(b.rail, b.date, input.resolvedBy);
        const after = await deps.breaks.get(b.key);
        if (after?.status === 'RESOLVED') return;
        await deps.reopenException(won.id, 'rerun');
        if (ended.run.status !== 'RECONCILED') {
          if (ended.error?.name === 'ReportNotAvailableError') throw new AppError('REPORT_NOT_AVAILABLE');
          throw new AppError('SERVICE_UNAVAILABLE', undefined, { reason: `the re-run ended ${ended.run.status}`, runId: ended.run.id });
        }
        throw new AppError('BREAK_STILL_PRESENT', undefined, { runId: ended.run.id });
      }
    });
    deps.log.warn({ exceptionId: done.id, kind: done.kind, action: input.action, resolvedBy: input.resolvedBy, breakKey: done.resourceId }, 'reconciliation exception resolved');
    return done;
  }

  /** Reconciles (rail, date) now and waits for the end (a run of that day under way is waited for first). */
  async rerun(rail: ReportRail, date: string, requestedBy: string): Promise<RunEnded> {
    const deadline = Date.now() + (this.deps.rerunWaitMs ?? 10 * 60_000);
    for (;;) {
      const started = await this.deps.day.begin(rail, date, 'RERUN', requestedBy);
      if (!started.alreadyRunning) return this.deps.day.execute(started.run, this.abort.signal);
      if (Date.now() > deadline) throw new AppError('SERVICE_UNAVAILABLE', undefined, { reason: 'a run of this day is still under way' });
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  /** Aborts the runs under way (each records its failure) and waits for them. */
  async stop(): Promise<void> {
    this.abort.abort();
    await Promise.allSettled([...this.inFlight]);
  }
}
