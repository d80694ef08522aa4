import { Counter, Gauge } from 'prom-client';
import { metricsRegistry, watchMoneyExceptions, withTimeout, type Database } from '@wallet/platform';
import { LIVE_STATES } from '../domain/transfer.js';
import { RAIL_CAPS, type Rail } from '../domain/rails.js';

const RAILS = Object.keys(RAIL_CAPS) as Rail[];
import type { TransferStore } from './ports.js';

/**
 * Business and saga metrics of the transfer service (names in docs/observability.md):
 * `wallet_sends_total{rail,status}` counts every state a send reaches (RECEIVED … COMPLETED/FAILED/REJECTED),
 * counted after the state change committed; `wallet_transfer_saga_transfers{state}` is the number of
 * live sagas per state, read from Postgres at scrape time (one grouped count on the live-state index).
 */
const sends = new Counter({
  name: 'wallet_sends_total',
  help: 'sends (transfers) reaching a saga state, by rail and state',
  labelNames: ['rail', 'status'],
  registers: [metricsRegistry],
});

const sagaDatabases = new Set<Database>();
new Gauge({
  name: 'wallet_transfer_saga_transfers',
  help: 'transfers in a live saga state (RECEIVED, RESERVED, DISPATCHED, …) at scrape time',
  labelNames: ['state'],
  registers: [metricsRegistry],
  async collect() {
    const counts = new Map<string, number>(LIVE_STATES.map((s) => [s, 0]));
    await Promise.all(
      [...sagaDatabases].map(async (db) => {
        try {
          const rows = await withTimeout(
            db.query<{ state: string; n: string }>(
              `select state, count(*)::text as n from transfer.transfers where state in (${LIVE_STATES.map(() => '?').join(',')}) group by state`,
              [...LIVE_STATES],
            ),
            1000,
          );
          for (const r of rows) counts.set(r.state, (counts.get(r.state) ?? 0) + Number(r.n));
        } catch {
          /* database busy or closing: this scrape shows zeros */
        }
      }),
    );
    this.reset();
    for (const [state, n] of counts) this.set({ state }, n);
  },
});

/**
 * `wallet_transfer_saga_oldest_seconds{rail,state}`: the age (since it was received) of the oldest
 * transfer in each live state and rail, read at scrape time (0 where none): the alert on sagas stuck
 * past their horizon reads it (docs/operations.md, "Alerts"). A series exists for every live state
 * and rail, so a state emptied is 0 rather than a stale value.
 */
new Gauge({
  name: 'wallet_transfer_saga_oldest_seconds',
  help: 'age in seconds (since received) of the oldest transfer in a live saga state, by rail and state, at scrape time',
  labelNames: ['rail', 'state'],
  registers: [metricsRegistry],
  async collect() {
    const oldest = new Map<string, number>();
    for (const rail of RAILS) for (const state of LIVE_STATES) oldest.set(`${rail} ${state}`, 0);
    await Promise.all(
      [...sagaDatabases].map(async (db) => {
        try {
          const rows = await withTimeout(
            db.query<{ rail: string; state: string; age: string }>(
              `select rail, state, extract(epoch from now() - min(created_at))::text as age from transfer.transfers
                where state in (${LIVE_STATES.map(() => '?').join(',')}) group by rail, state`,
              [...LIVE_STATES],
            ),
            1000,
          );
          for (const r of rows) oldest.set(`${r.rail} ${r.state}`, Math.max(oldest.get(`${r.rail} ${r.state}`) ?? 0, Number(r.age)));
        } catch {
          /* database busy or closing: this scrape shows zeros */
        }
      }),
    );
    this.reset();
    for (const [key, age] of oldest) {
      const [rail, state] = key.split(' ') as [string, string];
      this.set({ rail, state }, age);
    }
  },
});

/** Reports this store's open money exceptions (`wallet_exceptions_open{service="transfer"}`) until the returned function is called. */
export function watchExceptions(store: TransferStore): () => void {
  return watchMoneyExceptions('transfer', () => store.exceptions.countOpen());
}

/** Reports the live sagas of this database at scrape time until the returned function is called. */
export function watchSagaStates(db: Database): () => void {
  sagaDatabases.add(db);
  return () => {
    sagaDatabases.delete(db);
  };
}

/** Counts the states sends reach, around the store's inserts and transitions (nothing else changes). */
export function meterTransferStore<S extends TransferStore>(store: S): S {
  const insert = store.insertWithinLimits.bind(store);
  const transition = store.transition.bind(store);
  store.insertWithinLimits = async (t, ...rest) => {
    const verdict = await insert(t, ...rest);
    if (verdict === 'OK') sends.inc({ rail: t.rail, status: 'RECEIVED' });
    return verdict;
  };
  store.transition = async (...args) => {
    const next = await transition(...args);
    if (next) sends.inc({ rail: next.rail, status: next.state });
    return next;
  };
  const onCallback = store.transitionOnCallback?.bind(store);
  if (onCallback) {
    store.transitionOnCallback = async (...args) => {
      const next = await onCallback(...args);
      if (next) sends.inc({ rail: next.rail, status: next.state });
      return next;
    };
  }
  return store;
}
