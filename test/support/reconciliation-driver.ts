import { eventually } from '@wallet/platform/testing';
import type { startStack } from './stack.js';

type Stack = Awaited<ReturnType<typeof startStack>>;
export type ReportRail = 'breb' | 'ach' | 'pse' | 'breb-inbound';

/** YYYY-MM-DD of an instant in Bogotá (UTC-5 all year). */
export const bogotaDate = (t: number) => new Date(t - 5 * 3600_000).toISOString().slice(0, 10);

/**
 * What the reconciliation e2e suites do to a stack started with `reconciliation: true`: call the
 * sandbox's provider controls, plant a discrepancy in a provider's report, and reconcile a day
 * through POST /admin/reconciliations, waiting for the run to end.
 */
export function reconciliationDriver(stack: Stack) {
  const sandbox = (method: string, path: string, body?: unknown) =>
    fetch(`${stack.sandbox!.url}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const inject = async (rail: ReportRail, date: string, body: Record<string, unknown>) => {
    const r = await sandbox('POST', `/sandbox/reports/${rail}/${date}/discrepancies`, body);
    if (r.status !== 201) throw new Error(`discrepancy not planted: ${r.status} ${await r.text()}`);
    return ((await r.json()) as { id: string }).id;
  };
  /** POST /admin/reconciliations, then the run once it is no longer RUNNING. */
  async function reconcile(rail: ReportRail, date: string) {
    const started = await stack.admin('POST', '/admin/reconciliations', { rail, date });
    if (started.status !== 202) throw new Error(`run not started: ${started.status} ${started.text}`);
    if (started.headers.get('location') !== `/admin/reconciliations/${started.body.id}`) throw new Error('no Location of the run');
    return eventually(
      async () => {
        const r = await stack.admin('GET', `/admin/reconciliations/${started.body.id}`);
        return r.body.status !== 'RUNNING' ? r.body : undefined;
      },
      60_000,
      200,
    );
  }
  return { sandbox, inject, reconcile };
}
