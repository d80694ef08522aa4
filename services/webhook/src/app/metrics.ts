import { Counter, Histogram } from 'prom-client';
import { metricsRegistry } from '@wallet/platform';

/**
 * `wallet_webhook_attempts_total{outcome}`: delivery attempts by outcome (`success`, `http_error`,
 * `network_error` — time-outs included —, `target_refused`); `wallet_webhook_deliveries_failed_total`:
 * deliveries given up (FAILED); `wallet_webhook_attempt_duration_seconds`: one attempt's latency.
 */
export const attempts = new Counter({
  name: 'wallet_webhook_attempts_total',
  help: 'webhook delivery attempts by outcome',
  labelNames: ['outcome'],
  registers: [metricsRegistry],
});

export const givenUp = new Counter({
  name: 'wallet_webhook_deliveries_failed_total',
  help: 'webhook deliveries marked FAILED after their last attempt',
  registers: [metricsRegistry],
});

export const attemptDuration = new Histogram({
  name: 'wallet_webhook_attempt_duration_seconds',
  help: 'duration of one webhook delivery attempt',
  buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [metricsRegistry],
});
