import { metricsRegistry } from './metrics.js';
import { watchMoneyExceptions } from './money-exceptions-gauge.js';

describe('wallet_exceptions_open', () => {
  it('one gauge for every service of the process; each adds its series; a stopped or failing source shows nothing', async () => {
    const stopT = watchMoneyExceptions('transfer', async () => [{ kind: 'RAIL_COMPLETED_AFTER_RELEASE', n: 1 }]);
    const stopD = watchMoneyExceptions('pse-deposit', async () => [{ kind: 'PAID_AFTER_EXPIRY', n: 2 }]);
    const stopD2 = watchMoneyExceptions('pse-deposit', async () => [{ kind: 'PAID_AFTER_EXPIRY', n: 3 }]); // a second replica's store in the same process
    const stopBad = watchMoneyExceptions('collect-key', async () => {
      throw new Error('db down');
    });
    const text = await metricsRegistry.metrics();
    expect(text.match(/^# TYPE wallet_exceptions_open gauge$/gm)).toHaveLength(1);
    expect(text).toContain('wallet_exceptions_open{service="transfer",kind="RAIL_COMPLETED_AFTER_RELEASE"} 1');
    expect(text).toContain('wallet_exceptions_open{service="pse-deposit",kind="PAID_AFTER_EXPIRY"} 5');
    expect(text).not.toContain('collect-key');
    stopD();
    stopD2();
    stopBad();
    const after = await metricsRegistry.getSingleMetricAsString('wallet_exceptions_open');
    expect(after).not.toContain('pse-deposit');
    expect(after).toContain('service="transfer"');
    stopT();
  });
});
