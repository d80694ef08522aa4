import { Counter, Histogram } from 'prom-client';
import { metricsRegistry } from './metrics.js';

/**
 * The calls to the providers (docs/observability.md), for the alerts on rail error rates and
 * latency: `wallet_rail_requests_total{rail,operation,outcome}` and
 * `wallet_rail_request_duration_seconds{rail,operation}`. Every service that calls a provider over
 * HTTP meters its calls here: transfer (BREB, ACH, BREB_DIRECTORY: dispatch, status,
 * validate_account, lookup), pse-deposit (PSE: create_link) and collect-key (BREB_DIRECTORY:
 * register, unregister; BREB: return). outcome: `ok` (2xx, and the answers a call counts as such,
 * e.g. the directory's 404 "no such key"), `refused` (another 4xx but 408/429: the provider
 * answered, the request was refused), `error` (5xx, 408, 429, a time-out or a connection failure:
 * the provider could not answer).
 */
const requests = new Counter({
  name: 'wallet_rail_requests_total',
  help: 'HTTP calls to the providers (rails, Bre-B directory, PSE gateway), by rail, operation and outcome (ok, refused, error)',
  labelNames: ['rail', 'operation', 'outcome'],
  registers: [metricsRegistry],
});
const duration = new Histogram({
  name: 'wallet_rail_request_duration_seconds',
  help: 'duration of one HTTP call to a provider (time-outs included)',
  labelNames: ['rail', 'operation'],
  buckets: [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [metricsRegistry],
});

export type RailOutcome = 'ok' | 'refused' | 'error';

/** How an answer counts: `status` undefined when there was none (time-out, connection failure). */
export function railOutcome(status: number | undefined, okStatuses: readonly number[] = []): RailOutcome {
  if (status === undefined) return 'error';
  if ((status >= 200 && status < 300) || okStatuses.includes(status)) return 'ok';
  if (status >= 400 && status < 500 && status !== 408 && status !== 429) return 'refused';
  return 'error';
}

/**
 * Starts timing one provider call; `end` with the HTTP status it got (undefined: no answer) counts
 * its outcome. Ending twice counts once.
 */
export function startRailCall(rail: string, operation: string): { end(status: number | undefined, okStatuses?: readonly number[]): void } {
  const stop = duration.startTimer({ rail, operation });
  let ended = false;
  return {
    end(status, okStatuses = []) {
      if (ended) return;
      ended = true;
      stop();
      requests.inc({ rail, operation, outcome: railOutcome(status, okStatuses) });
    },
  };
}
