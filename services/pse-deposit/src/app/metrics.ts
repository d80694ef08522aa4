import { Counter } from 'prom-client';
import { metricsRegistry } from '@wallet/platform';
import type { DepositStore } from './ports.js';

/**
 * `wallet_deposits_total{source,status}`: deposits reaching a status (created, then every committed
 * status change, including expiries), counted after the change committed. Names in docs/observability.md.
 */
const deposits = new Counter({
  name: 'wallet_deposits_total',
  help: 'deposits reaching a status, by source (PSE, BREB) and status',
  labelNames: ['source', 'status'],
  registers: [metricsRegistry],
});

/** Counts deposit statuses around the store's writes (nothing else changes). */
export function meterDepositStore<S extends DepositStore>(store: S): S {
  const insert = store.insert.bind(store);
  const transition = store.transition.bind(store);
  const expireDue = store.expireDue.bind(store);
  store.insert = async (...args) => {
    const d = await insert(...args);
    deposits.inc({ source: d.source, status: d.status });
    return d;
  };
  store.transition = async (t) => {
    const d = await transition(t);
    if (d && t.from.status !== t.to.status) deposits.inc({ source: d.source, status: d.status });
    return d;
  };
  store.expireDue = async (...args) => {
    const expired = await expireDue(...args);
    for (const d of expired) deposits.inc({ source: d.source, status: d.status });
    return expired;
  };
  return store;
}
