import { Gauge } from 'prom-client';
import { metricsRegistry } from '@wallet/platform';
import { watchExceptions } from './metrics.js';
import type { DepositStore } from './ports.js';

const store = { countOpenExceptions: async () => [{ kind: 'PAID_AFTER_EXPIRY', n: 2 }] } as unknown as DepositStore;

/**
 * `wallet_exceptions_open` is shared by name with the transfer service. Here the deposit service
 * registers it first and the transfer's module registers its own afterwards (the order of an
 * in-process test stack): neither fails, and one scrape shows both services' series.
 */
describe('wallet_exceptions_open: the deposit service registers first', () => {
  it('reports its open exceptions, then steps aside for and joins a later registration of the same gauge', async () => {
    const stop = watchExceptions(store);
    expect(await metricsRegistry.getSingleMetricAsString('wallet_exceptions_open'))
      .toContain('wallet_exceptions_open{service="pse-deposit",kind="PAID_AFTER_EXPIRY"} 2');
    const transfers = new Gauge({
      name: 'wallet_exceptions_open', help: 'open money exceptions', labelNames: ['service', 'kind'], registers: [metricsRegistry],
      collect() { this.reset(); this.set({ service: 'transfer', kind: 'RAIL_COMPLETED_AFTER_RELEASE' }, 1); },
    });
    expect(metricsRegistry.getSingleMetric('wallet_exceptions_open')).toBe(transfers);
    const text = await metricsRegistry.metrics();
    expect(text.match(/^# TYPE wallet_exceptions_open gauge$/gm)).toHaveLength(1);
    expect(text).toContain('wallet_exceptions_open{service="transfer",kind="RAIL_COMPLETED_AFTER_RELEASE"} 1');
    expect(text).toContain('wallet_exceptions_open{service="pse-deposit",kind="PAID_AFTER_EXPIRY"} 2');
    stop();
    expect(await metricsRegistry.getSingleMetricAsString('wallet_exceptions_open')).not.toContain('pse-deposit');
  });
});
