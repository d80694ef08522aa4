import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';

/**
 * How often the event-loop delay histogram (`nodejs_eventloop_lag_*`, perf_hooks'
 * monitorEventLoopDelay) samples the loop. prom-client's default, 10 ms, is a timer waking every
 * process 100 times a second whether it has work or not: ~7 ms of CPU per second per idle process
 * on these nodes (`docs/benchmarks.md` "Cost per send"). At 100 ms the p99 on the dashboard still comes
 * from ~150 samples per 15 s scrape, and any stall longer than 100 ms delays a sample by its length.
 */
export const EVENT_LOOP_SAMPLE_MS = 100;

/** One registry per process: default Node metrics plus the product's own. */
export const metricsRegistry = new Registry();
collectDefaultMetrics({ register: metricsRegistry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });

/**
 * A label-less gauge of the process's registry, made on first use: services composed in one process
 * (the in-process test stacks) share it instead of registering the name twice. The last writer's value
 * is what a scrape shows.
 */
export function processGauge(name: string, help: string): { set(value: number): void } {
  const existing = metricsRegistry.getSingleMetric(name);
  if (existing instanceof Gauge) return existing;
  return new Gauge({ name, help, registers: [metricsRegistry] });
}
