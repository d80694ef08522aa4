import type { BreakSink, OurRecords, ReportSource, LineSorter, RunRecord } from './ports.js';
import { reconcile, type ReconcileResult } from './reconcile.js';
import type { ReportRail } from '../domain/report.js';

/** What the use case needs of the run store (persistence/reconciliation.store.ts `RunStore`). */
export interface Runs {
  start(rail: ReportRail, date: string): Promise<RunRecord>;
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
}

/**
 * Reconciles the report of (rail, date) once and records the run: started, then RECONCILED (with its
 * counts), REJECTED (with the reason) or FAILED (the download or our records' stream threw: the
 * message is kept, breaks opened before the failure stay, and a re-run is always allowed; it opens
 * none of them again). Returns the run as recorded.
 */
export class ReconcileDay {
  constructor(private readonly deps: ReconcileDayDeps) {}

  async run(rail: ReportRail, date: string, signal?: AbortSignal): Promise<RunRecord> {
    const started = await this.deps.runs.start(rail, date);
    const sink = this.deps.sink(started.id);
    let result: ReconcileResult;
    try {
      const records = await this.deps.source.open(rail, date, signal);
      result = await reconcile(rail, date, records, { ours: this.deps.ours, sink, sorter: this.deps.sorter });
    } catch (err) {
      const e = err as Error;
      return this.deps.runs.fail(started.id, `${e.name}: ${e.message}`, sink.opened);
    }
    return this.deps.runs.finish(started.id, result);
  }
}
