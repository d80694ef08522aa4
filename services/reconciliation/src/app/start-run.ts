import { Problems } from '@wallet/platform';
import { REPORT_RAILS, bogotaDate, isCalendarDate, type ReportRail } from '../domain/report.js';
import type { ReconciliationDeps } from './deps.js';
import type { RunRecord } from './ports.js';
import type { RunEnded } from './reconcile-day.js';

/** A rail of the contract and a calendar date that is not after today in Bogotá (400 naming each bad field). */
export function validateDay(rail: string, date: string, now: Date): asserts rail is ReportRail {
  const p = new Problems();
  if (!(REPORT_RAILS as readonly string[]).includes(rail)) p.add('rail', `one of ${REPORT_RAILS.join(', ')}`);
  if (!isCalendarDate(date)) p.add('date', 'a date YYYY-MM-DD');
  else if (date > bogotaDate(now)) p.add('date', 'not after today (Bogotá)');
  p.throwIfAny();
}

/**
 * StartRun: the run of (rail, date) recorded RUNNING and answered at once, going on in the
 * background; or the run of that day already under way (on any replica), `alreadyRunning`.
 * `stop` aborts the runs under way (each records its failure) and waits for them.
 */
export class StartRun {
  private readonly inFlight = new Set<Promise<unknown>>();
  readonly abort = new AbortController();

  constructor(private readonly deps: ReconciliationDeps) {}

  async execute(rail: string, date: string, requestedBy: string): Promise<{ run: RunRecord; alreadyRunning: boolean }> {
    validateDay(rail, date, this.deps.now?.() ?? new Date());
    const started = await this.deps.day.begin(rail, date, 'ON_DEMAND', requestedBy || 'admin');
    if (!started.alreadyRunning) this.background(started.run);
    return started;
  }

  private background(run: RunRecord): Promise<RunEnded> {
    const p = this.deps.day.execute(run, this.abort.signal);
    const tracked = p.catch((err) => {
      this.deps.log.error({ err, runId: run.id }, 'reconciliation run failed to record its end');
    });
    this.inFlight.add(tracked);
    void tracked.finally(() => this.inFlight.delete(tracked));
    return p;
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await Promise.allSettled([...this.inFlight]);
  }
}
