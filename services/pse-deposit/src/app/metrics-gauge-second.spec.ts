import { Gauge } from 'prom-client';
import { metricsRegistry } from '@wallet/platform';
import { watchExceptions } from './metrics.js';
import type { DepositStore } from './ports.js';

const store = { countOpenExceptions: async () => [{ kind: 'CREDIT_REFUSED', n: 1 }] } as unknown as DepositStore;

/** The other order: the transfer's `wallet_exceptions_open` is registered first; the deposit service joins it. */
describe('wallet_exceptions_open: the transfer service registers first', () => {
  it('adds the deposit series to the existing gauge without registering a second one', async () => {
    const transfers = new Gauge({
      name: 'wallet_exceptions_open', help: 'open money exceptions', labelNames: ['service', 'kind'], registers: [metricsRegistry],
      collect() { this.reset(); this.set({ service: 'transfer', kind: 'COMMIT_REFUSED' }, 3); },
    });
    const stop = watchExceptions(store);
    watchExceptions(store); // a second instance in the same process: joined once
    expect(metricsRegistry.getSingleMetric('wallet_exceptions_open')).toBe(transfers);
    const text = (await metricsRegistry.getSingleMetricAsString('wallet_exceptions_open')).split('\n');
    expect(text).toContain('wallet_exceptions_open{service="transfer",kind="COMMIT_REFUSED"} 3');
    expect(text.filter((l) => l.startsWith('wallet_exceptions_open{service="pse-deposit"'))).toEqual(['wallet_exceptions_open{service="pse-deposit",kind="CREDIT_REFUSED"} 1']);
    stop();
  });
});
