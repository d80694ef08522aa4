import { Counter, Histogram } from 'prom-client';
import { metricsRegistry } from '@wallet/platform';
import type { HttpOutcome } from './http.js';

/**
 * The calls to the rails and the Bre-B directory (docs/observability.md), for the alerts on rail
 * error rates and latency: `wallet_rail_requests_total{rail,operation,outcome}` and
 * `wallet_rail_request_duration_seconds{rail,operation}`. rail: BREB, ACH, BREB_DIRECTORY;
 * operation: dispatch, status, validate_account, lookup; outcome: `ok` (2xx, and the directory's
 * 404 "no such key"), `refused` (another 4xx but 408/429: the provider answered, the request was
 * refused), `error` (5xx, 408, 429, a time-out or a connection failure: the provider could not answer).
 */
const requests = new Counter({
  name: 'wallet_rail_requests_total',
  help: 'HTTP calls to the rails and the Bre-B directory, by rail, operation and outcome (ok, refused, error)',
  labelNames: ['rail', 'operation', 'outcome'],
  registers: [metricsRegistry],
});
const duration = new Histogram({
  name: 'wallet_rail_request_duration_seconds',
  help: 'duration of one HTTP call to a rail or the Bre-B directory (time-outs included)',
  labelNames: ['rail', 'operation'],
  buckets: [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [metricsRegistry],
});

export type RailOperation = 'dispatch' | 'status' | 'validate_account' | 'lookup';

/** How a provider's answer counts: `okStatuses` are answers that are not failures besides 2xx (e.g. a 404 lookup). */
export function railOutcome(out: HttpOutcome, okStatuses: readonly number[] = []): 'ok' | 'refused' | 'error' {
  if (out.kind === 'error') return 'error';
  if ((out.status >= 200 && out.status < 300) || okStatuses.includes(out.status)) return 'ok';
  if (out.status >= 400 && out.status < 500 && out.status !== 408 && out.status !== 429) return 'refused';
  return 'error';
}

/** Times one provider call and counts its outcome. */
export async function meterRailCall(
  rail: string,
  operation: RailOperation,
  call: () => Promise<HttpOutcome>,
  okStatuses: readonly number[] = [],
): Promise<HttpOutcome> {
  const end = duration.startTimer({ rail, operation });
  const out = await call();
  end();
  requests.inc({ rail, operation, outcome: railOutcome(out, okStatuses) });
  return out;
}
