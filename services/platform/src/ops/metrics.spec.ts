import { EVENT_LOOP_SAMPLE_MS, metricsRegistry } from './metrics.js';

/** A gauge's value from the registry's exposition text. */
async function gauge(name: string): Promise<number> {
  const text = await metricsRegistry.metrics();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  if (!line) throw new Error(`${name} is not exported`);
  return Number(line.split(' ')[1]);
}

describe('default Node metrics', () => {
  it('sample the event loop at a coarse period that still sees a stall', async () => {
    expect(EVENT_LOOP_SAMPLE_MS).toBeGreaterThanOrEqual(100); // prom-client's 10 ms woke every process 100 times a second
    // Let the monitor take a few samples, then block the loop for 6 sampling periods.
    await new Promise((r) => setTimeout(r, 3 * EVENT_LOOP_SAMPLE_MS));
    const until = Date.now() + 6 * EVENT_LOOP_SAMPLE_MS;
    while (Date.now() < until) {
      /* a stall */
    }
    await new Promise((r) => setTimeout(r, 2 * EVENT_LOOP_SAMPLE_MS));
    // The delayed sample is in the histogram: its max is the stall less up to a period or two (what the
    // timer waited anyway, and where in its period the stall began; a full run on 2 loaded cores saw
    // 100 ms of a 300 ms stall): at least two periods of a six-period stall.
    expect(await gauge('nodejs_eventloop_lag_max_seconds')).toBeGreaterThanOrEqual((2 * EVENT_LOOP_SAMPLE_MS) / 1000);
    expect(await gauge('nodejs_eventloop_lag_p50_seconds')).toBeGreaterThan(0);
  });
});
