import { Gauge } from 'prom-client';
import { metricsRegistry } from './metrics.js';
import { withTimeout } from '../time/with-timeout.js';

/** What one service reports: its open money exceptions by kind (a query at scrape time). */
export type OpenExceptionCounts = () => Promise<Array<{ kind: string; n: number }>>;

const sources = new Map<symbol, { service: string; count: OpenExceptionCounts }>();
let gauge: Gauge | undefined;

/**
 * `wallet_exceptions_open{service,kind}` (CONTRACT §10): open money exceptions, read from each
 * watching service's store when `/metrics` is scraped (1 s time-out each; a source that cannot
 * answer shows nothing in that scrape). One gauge per process, so services sharing a process (the
 * in-process test stacks) each add their series instead of registering the name twice.
 * Returns the function that stops watching.
 */
export function watchMoneyExceptions(service: string, count: OpenExceptionCounts): () => void {
  gauge ??= new Gauge({
    name: 'wallet_exceptions_open',
    help: 'open money exceptions (provider outcomes that contradict our state), by service and kind, at scrape time',
    labelNames: ['service', 'kind'],
    registers: [metricsRegistry],
    async collect() {
      const series: Array<{ service: string; kind: string; n: number }> = [];
      await Promise.all(
        [...sources.values()].map(async (s) => {
          try {
            const rows = await withTimeout(s.count(), 1000);
            for (const r of rows) series.push({ service: s.service, kind: r.kind, n: r.n });
          } catch {
            /* database busy or closing: this scrape shows what it could read */
          }
        }),
      );
      this.reset();
      const sums = new Map<string, { service: string; kind: string; n: number }>();
      for (const s of series) {
        const k = `${s.service}\u0000${s.kind}`;
        const cur = sums.get(k);
        if (cur) cur.n += s.n;
        else sums.set(k, { ...s });
      }
      for (const s of sums.values()) this.set({ service: s.service, kind: s.kind }, s.n);
    },
  });
  const id = Symbol(service);
  sources.set(id, { service, count });
  return () => {
    sources.delete(id);
  };
}
