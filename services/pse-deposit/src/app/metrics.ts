import { Counter, Gauge, type Metric, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import { metricsRegistry } from '@wallet/platform';
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

// ───────────── wallet_exceptions_open{service="pse-deposit",kind} ─────────────

const EXCEPTIONS_METRIC = 'wallet_exceptions_open';
const SERVICE = 'pse-deposit';
const exceptionStores = new Set<DepositStore>();
const joined = new WeakSet<object>();

async function openCounts(): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  await Promise.all([...exceptionStores].map(async (store) => {
    try {
      const rows = await Promise.race([
        store.countOpenExceptions(),
        new Promise<never>((_, rej) => setTimeout(() => rej(new Error('timeout')), 1000).unref()),
      ]);
      for (const r of rows) counts.set(r.kind, (counts.get(r.kind) ?? 0) + r.n);
    } catch { /* database busy or closing: this scrape shows what it could read */ }
  }));
  return counts;
}

/**
 * Adds this service's series to a `wallet_exceptions_open` gauge another service registered in the
 * same process (the transfer's, when an in-process test stack runs every service together): its
 * own collect() resets the gauge and sets its series; ours are appended to what it returns.
 */
function join(metric: Metric): void {
  if (joined.has(metric)) return;
  joined.add(metric);
  const get = metric.get.bind(metric) as () => Promise<MetricObjectWithValues<MetricValue<string>>>;
  (metric as { get: () => Promise<MetricObjectWithValues<MetricValue<string>>> }).get = async () => {
    const r = await get();
    const ours = [...(await openCounts())].map(([kind, n]) => ({ value: n, labels: { service: SERVICE, kind } }));
    return { ...r, values: [...r.values.filter((v) => v.labels.service !== SERVICE), ...ours] };
  };
}

/**
 * The gauge, shared by name with the transfer service (label `service`). In its own process the
 * deposit service registers it; when the transfer's module registered it first in this process we
 * join that one; and if the transfer's registers after ours (module load order in a test stack),
 * ours steps aside for it and joins it, so neither module's registration fails.
 * TODO(platform): one shared exceptions gauge in @wallet/platform would make this bridge unnecessary.
 */
function ensureExceptionsGauge(): void {
  const existing = metricsRegistry.getSingleMetric(EXCEPTIONS_METRIC);
  if (existing) { join(existing); return; }
  const own = new Gauge({
    name: EXCEPTIONS_METRIC,
    help: 'open money exceptions (provider outcomes that contradict our state), by kind, at scrape time',
    labelNames: ['service', 'kind'],
    registers: [metricsRegistry],
    async collect() {
      const counts = await openCounts();
      this.reset();
      for (const [kind, n] of counts) this.set({ service: SERVICE, kind }, n);
    },
  });
  joined.add(own);
  const register = metricsRegistry.registerMetric.bind(metricsRegistry);
  metricsRegistry.registerMetric = (m: Metric) => {
    if ((m as unknown as { name?: string }).name === EXCEPTIONS_METRIC && m !== own && metricsRegistry.getSingleMetric(EXCEPTIONS_METRIC) === own) {
      metricsRegistry.removeSingleMetric(EXCEPTIONS_METRIC);
      register(m);
      join(m);
      return;
    }
    register(m);
  };
}

/** Reports this store's open money exceptions at scrape time until the returned function is called. */
export function watchExceptions(store: DepositStore): () => void {
  ensureExceptionsGauge();
  exceptionStores.add(store);
  return () => { exceptionStores.delete(store); };
}
