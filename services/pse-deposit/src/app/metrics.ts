import { Counter } from 'prom-client';
import { metricsRegistry, watchMoneyExceptions } from '@wallet/platform';
import type { DepositStatus } from '../domain/deposit.js';
import type { DepositStore } from './ports.js';

/**
 * `wallet_deposits_total{source,status}`: deposits reaching a status clients see (created, then
 * every committed state change into a shown status, expiries included; the money states CREDITING
 * and REVERSING are not statuses), counted after the change committed. Names in docs/observability.md.
 */
const deposits = new Counter({
  name: 'wallet_deposits_total',
  help: 'deposits reaching a status, by source (PSE, BREB) and status',
  labelNames: ['source', 'status'],
  registers: [metricsRegistry],
});

const SHOWN: readonly string[] = ['PENDING_CONFIRM', 'ASSIGNED', 'FAILED', 'EXPIRED', 'UNASSIGNED', 'REVERSED'] satisfies DepositStatus[];

/** Counts deposit statuses around the store's writes (nothing else changes). */
export function meterDepositStore<S extends DepositStore>(store: S): S {
  const insert = store.insert.bind(store);
  const transition = store.transition.bind(store);
  store.insert = async (...args) => {
    const d = await insert(...args);
    deposits.inc({ source: d.source, status: d.status });
    return d;
  };
  store.transition = async (t) => {
    const d = await transition(t);
    if (d && SHOWN.includes(d.status)) deposits.inc({ source: d.source, status: d.status });
    return d;
  };
  return store;
}

/** Reports this store's open money exceptions (`wallet_exceptions_open{service="pse-deposit"}`) until the returned function is called. */
export function watchExceptions(store: DepositStore): () => void {
  return watchMoneyExceptions('pse-deposit', () => store.exceptions.countOpen());
}
