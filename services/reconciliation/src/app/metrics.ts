import { Counter } from 'prom-client';
import { metricsRegistry, watchMoneyExceptions } from '@wallet/platform';
import type { RunOutcome, RunRecord } from './ports.js';

const RUN_OUTCOMES: readonly RunOutcome[] = ['RECONCILED', 'REJECTED', 'FAILED'];

/**
 * The reconciliation's metrics (the ops port's /metrics): `wallet_reconciliation_runs_total{rail,outcome}`
 * (each run that ended: RECONCILED, REJECTED, FAILED), `wallet_reconciliation_lines_total{rail}` (the
 * report lines of RECONCILED runs) and, through the platform's gauge, `wallet_exceptions_open{service="reconciliation",kind}`
 * (open money exceptions, kind in lower case: amount_mismatch, …).
 */
const runs = new Counter({
  name: 'wallet_reconciliation_runs_total',
  help: 'reconciliation runs that ended, by rail and outcome (RECONCILED, REJECTED, FAILED)',
  labelNames: ['rail', 'outcome'],
  registers: [metricsRegistry],
});
const lines = new Counter({
  name: 'wallet_reconciliation_lines_total',
  help: 'report lines reconciled (RECONCILED runs), by rail',
  labelNames: ['rail'],
  registers: [metricsRegistry],
});

/**
 * Every (rail, outcome) series from 0 at start: a counter series that first appears at 1 has no
 * earlier sample, so `increase()` (the WalletReconciliationRunFailed alert) would never see its
 * first failed run.
 */
export function initRunSeries(rails: readonly string[]): void {
  for (const rail of rails) for (const outcome of RUN_OUTCOMES) runs.inc({ rail, outcome }, 0);
}

export function countRun(run: RunRecord): void {
  runs.inc({ rail: run.rail, outcome: run.status });
  if (run.status === 'RECONCILED' && run.report) lines.inc({ rail: run.rail }, run.report.lines);
}

/** Open money exceptions by lower-case kind, read at scrape time. Returns the function that stops watching. */
export function watchOpenExceptions(countOpen: () => Promise<Array<{ kind: string; n: number }>>): () => void {
  return watchMoneyExceptions('reconciliation', async () => (await countOpen()).map((r) => ({ kind: r.kind.toLowerCase(), n: r.n })));
}
