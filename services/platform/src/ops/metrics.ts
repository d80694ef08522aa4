import { collectDefaultMetrics, Registry } from 'prom-client';

/** One registry per process: default Node metrics plus the product's own. */
export const metricsRegistry = new Registry();
collectDefaultMetrics({ register: metricsRegistry });
