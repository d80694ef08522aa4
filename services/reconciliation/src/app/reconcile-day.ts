import { inSpan } from '@wallet/platform';
import type { BreakSink, OurRecords, ReportSource, LineSorter, RunRecord, RunTrigger } from './ports.js';
import { reconcile, type ReconcileResult } from './reconcile.js';
import type { ReportRail } from '../domain/report.js';

/** What the use case needs of the run store (persistence/reconciliation.store.ts `RunStore`). */
export interface Runs {
  start(rail: ReportRail, date: string, trigger?: RunTrigger, requestedBy?: string): Promise<{ run: RunRecord; alreadyRunning: boolean }>;
  heartbeat(id: string): Promise<void>;
  finish(id: string, r: ReconcileResult): Promise<RunRecord>;
  fail(id: string, detail: string, opened: number): Promise<RunRecord>;
}

export interface ReconcileDayDeps {
  runs: Runs;
  source: ReportSource;
  ours: OurRecords;
  /** The sink of one run (SqlBreakSink over the run's id); `opened` is read when the run fails. */
  sink: (runId: string) => BreakSink & { opened: number };
  sorter: () => LineSorter;
  /** How often a run under way says it is alive (the stale-run sweeper's clock); default 15 s. */
  heartbeatMs?: number;
  /**
   * Awaited after a RECONCILED run was recorded (undoing the adjustments of accepted breaks
   * it no longer found); a failure is left to the sweeper (the run stays recorded).
   */
  afterReconciled?: () => Promise<unknown>;
  /** Called once per run that ended (metrics). */
  onFinished?: (run: RunRecord) => void;
  /** Where an unexpected failure is logged in full (the run's detail keeps no internals). */
  onUnexpectedFailure?: (run: RunRecord, err: Error) => void;
}

/** Failures whose message is ours and says what happened (no addresses, no stack). */
const OWN_FAILURES = new Set(['ReportNotAvailableError', 'ReportFetchError', 'OurRecordError']);

/**
 * The FAILED run's detail, without internals: our own errors as `<name>: <message>`; anything else
 * (a gRPC or database error) as its name and code only, the whole error going to the log.
 */
export function failureDetail(e: Error): string {
  if (OWN_FAILURES.has(e.name)) return `${e.name}: ${e.message}`;
  const code = (e as { code?: unknown }).code;
  return `${e.name}${typeof code === 'string' || typeof code === 'number' ? ` (${code})` : ''}: the run failed unexpectedly; see the service's log for this run`;
}

/** A run that ended, with the error that failed it (the scheduler retries some). */
export interface RunEnded {
  run: RunRecord;
  error?: Error;
}

/**
 * Reconciles the report of (rail, date) once and records the run: RUNNING, then RECONCILED (with its
 * counts), REJECTED (with the reason) or FAILED (the download or our records' stream threw: the
 * message is kept, breaks opened before the failure stay, and a re-run is always allowed; it opens
 * none of them again). At most one run of (rail, date) is RUNNING at a time: `begin` answers the one
 * under way instead of starting a second.
 */
export class ReconcileDay {
  constructor(private readonly deps: ReconcileDayDeps) {}

  /** Records the run as RUNNING, or answers the run of (rail, date) already under way. */
  begin(rail: ReportRail, date: string, trigger: RunTrigger = 'ON_DEMAND', requestedBy = 'admin'): Promise<{ run: RunRecord; alreadyRunning: boolean }> {
    return this.deps.runs.start(rail, date, trigger, requestedBy);
  }

  /**
   * Runs a run `begin` started, to its end. Never throws for the run's own failures (it records them).
   * In a span of its own (`reconciliation.run <rail>`) that links to the payments of its first breaks.
   */
  execute(started: RunRecord, signal?: AbortSignal): Promise<RunEnded> {
    const attributes = { 'wallet.reconciliation_run_id': started.id, 'wallet.rail': started.rail, 'wallet.report_date': started.date };
    return inSpan(`reconciliation.run ${started.rail}`, { attributes }, () => this.executeRun(started, signal));
  }

  private async executeRun(started: RunRecord, signal?: AbortSignal): Promise<RunEnded> {
    const sink = this.deps.sink(started.id);
    const beat = setInterval(() => {
      void this.deps.runs.heartbeat(started.id).catch(() => undefined);
    }, this.deps.heartbeatMs ?? 15_000);
    beat.unref();
    let ended: RunEnded;
    try {
      let result: ReconcileResult;
      try {
        const records = await this.deps.source.open(started.rail, started.date, signal);
        result = await reconcile(started.rail, started.date, records, { ours: this.deps.ours, sink, sorter: this.deps.sorter });
      } catch (err) {
        const e = err instanceof Error ? err : new Error(String(err));
        ended = { run: await this.deps.runs.fail(started.id, failureDetail(e), sink.opened), error: e };
        if (!OWN_FAILURES.has(e.name)) this.deps.onUnexpectedFailure?.(ended.run, e);
        this.deps.onFinished?.(ended.run);
        return ended;
      }
      ended = { run: await this.deps.runs.finish(started.id, result) };
      if (ended.run.status === 'RECONCILED') await this.deps.afterReconciled?.().catch(() => undefined);
    } finally {
      clearInterval(beat);
    }
    this.deps.onFinished?.(ended.run);
    return ended;
  }

  /** begin + execute (an already running run is answered as it is, not waited for). */
  async run(rail: ReportRail, date: string, signal?: AbortSignal, trigger: RunTrigger = 'ON_DEMAND', requestedBy = 'admin'): Promise<RunRecord> {
    const { run, alreadyRunning } = await this.begin(rail, date, trigger, requestedBy);
    if (alreadyRunning) return run;
    return (await this.execute(run, signal)).run;
  }
}
