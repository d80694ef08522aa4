import { Gauge, Registry } from 'prom-client';
import { CHECK_NAMES, type InvariantReport } from './report.js';

/**
 * The result of one `ledger:check` run as Prometheus metrics, for the chart's CronJob. A CronJob's
 * pod lives for seconds and cannot be scraped, so the run pushes its result to a Prometheus
 * Pushgateway (the standard place for batch jobs' results), which Prometheus scrapes; the alert
 * rules read it from there (docs/operations.md, "Alerts").
 *
 * - `wallet_ledger_check_violations{check}`: offenders per invariant family at the last completed run
 *   (0 for a family that held; every family is present so an alert never reads a missing series as 0).
 * - `wallet_ledger_check_not_checked{check}`: parts of a family that could not be checked (e.g. no rail truth).
 * - `wallet_ledger_check_open_exceptions`: open or resolving money exceptions the run listed.
 * - `wallet_ledger_check_ok`: 1 when every invariant held at the last completed run, else 0.
 * - `wallet_ledger_check_last_completed_timestamp_seconds`: when the last run that could read the
 *   installation finished (a run that could not run leaves it, and the figures above, as they were).
 * - `wallet_ledger_check_last_run_timestamp_seconds` and `wallet_ledger_check_last_run_completed`
 *   (1 it could read the installation, 0 it could not: exit 2): the last attempt, whatever its outcome.
 * - `wallet_ledger_check_duration_seconds`: how long the last attempt took.
 */
export const LEDGER_CHECK_METRICS = [
  'wallet_ledger_check_violations',
  'wallet_ledger_check_not_checked',
  'wallet_ledger_check_open_exceptions',
  'wallet_ledger_check_ok',
  'wallet_ledger_check_last_completed_timestamp_seconds',
  'wallet_ledger_check_last_run_timestamp_seconds',
  'wallet_ledger_check_last_run_completed',
  'wallet_ledger_check_duration_seconds',
] as const;

/** One run's outcome: the report when the check could read the installation, else why not. */
export type CheckRun = { report: InvariantReport; durationSeconds: number; at?: Date } | { error: string; durationSeconds: number; at?: Date };

/**
 * The run's metrics in a registry of their own. A run that could not read the installation has
 * only the `last_run` figures: pushed with POST they replace just those, and the last completed
 * run's violations stay visible (with its timestamp, which the staleness alert reads).
 */
export function ledgerCheckRegistry(run: CheckRun): Registry {
  const registry = new Registry();
  const gauge = (name: string, help: string, labelNames: string[] = []) => new Gauge({ name, help, labelNames, registers: [registry] });
  const at = (run.at ?? ('report' in run ? run.report.at : new Date())).getTime() / 1000;
  gauge('wallet_ledger_check_last_run_timestamp_seconds', 'when the last ledger:check attempt finished (unix seconds)').set(at);
  gauge('wallet_ledger_check_last_run_completed', '1 when the last ledger:check attempt could read the installation, 0 when it could not (exit 2)').set(
    'report' in run ? 1 : 0,
  );
  gauge('wallet_ledger_check_duration_seconds', 'duration of the last ledger:check attempt').set(run.durationSeconds);
  if (!('report' in run)) return registry;
  const { report } = run;
  const violations = gauge('wallet_ledger_check_violations', 'offenders per invariant family at the last completed ledger:check', ['check']);
  const notChecked = gauge('wallet_ledger_check_not_checked', 'parts of an invariant family the last completed ledger:check could not check', ['check']);
  for (const name of CHECK_NAMES) {
    const result = report.checks.find((c) => c.name === name);
    violations.set({ check: name }, result?.total ?? 0);
    notChecked.set({ check: name }, result ? result.notChecked.length : 1);
  }
  gauge('wallet_ledger_check_open_exceptions', 'money exceptions open or resolving at the last completed ledger:check').set(report.exceptions.length);
  gauge('wallet_ledger_check_ok', '1 when every invariant held at the last completed ledger:check, else 0').set(report.ok ? 1 : 0);
  gauge('wallet_ledger_check_last_completed_timestamp_seconds', 'when the last ledger:check that could read the installation finished (unix seconds)').set(at);
  return registry;
}

/**
 * Pushes the run to a Pushgateway (its HTTP API v1): a completed run replaces the whole group
 * (PUT), a run that could not read the installation only its `last_run` figures (POST). The group
 * is `job` (one per installation: the chart names it after the release). Throws on a non-2xx answer.
 */
export async function pushLedgerCheck(gatewayUrl: string, job: string, run: CheckRun, timeoutMs = 10_000): Promise<void> {
  const registry = ledgerCheckRegistry(run);
  const url = `${gatewayUrl.replace(/\/+$/, '')}/metrics/job/${encodeURIComponent(job)}`;
  const res = await fetch(url, {
    method: 'report' in run ? 'PUT' : 'POST',
    headers: { 'content-type': registry.contentType },
    body: await registry.metrics(),
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (!res.ok) throw new Error(`the Pushgateway answered ${res.status} ${(await res.text()).slice(0, 200)}`);
}
