import { Counter, Gauge, Histogram } from 'prom-client';
import { metricsRegistry, type Database } from '@wallet/platform';

/**
 * `wallet_webhook_attempts_total{outcome}`: delivery attempts by outcome (`success`, `http_error`,
 * `network_error` — time-outs included —, `target_refused`); `wallet_webhook_deliveries_failed_total`:
 * deliveries given up (FAILED); `wallet_webhook_attempt_duration_seconds`: one attempt's latency.
 */
export const attempts = new Counter({
  name: 'wallet_webhook_attempts_total',
  help: 'webhook delivery attempts by outcome',
  labelNames: ['outcome'],
  registers: [metricsRegistry],
});

export const givenUp = new Counter({
  name: 'wallet_webhook_deliveries_failed_total',
  help: 'webhook deliveries marked FAILED after their last attempt',
  registers: [metricsRegistry],
});

export const attemptDuration = new Histogram({
  name: 'wallet_webhook_attempt_duration_seconds',
  help: 'duration of one webhook delivery attempt',
  buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [metricsRegistry],
});

const backlogDatabases = new Set<Database>();
let backlog: { pending: number; due: number; oldestDue: number } | undefined;
let backlogRead: Promise<void> | undefined;

/** One read of the queue per scrape, shared by the three gauges below (1 s time-out; a failed read shows zeros). */
function readBacklog(): Promise<void> {
  backlogRead ??= (async () => {
    const sum = { pending: 0, due: 0, oldestDue: 0 };
    await Promise.all(
      [...backlogDatabases].map(async (db) => {
        try {
          const [row] = await Promise.race([
            db.query<{ pending: string; due: string; oldest: string | null }>(
              `select count(*)::text as pending, count(*) filter (where next_attempt_at <= now())::text as due,
                      extract(epoch from now() - min(next_attempt_at) filter (where next_attempt_at <= now()))::text as oldest
                 from webhook.deliveries where status = 'PENDING'`,
            ),
            new Promise<never>((_, rej) => setTimeout(() => rej(new Error('timeout')), 1000).unref()),
          ]);
          sum.pending += Number(row?.pending ?? 0);
          sum.due += Number(row?.due ?? 0);
          sum.oldestDue = Math.max(sum.oldestDue, Number(row?.oldest ?? 0));
        } catch {
          /* database busy or closing: this scrape shows zeros */
        }
      }),
    );
    backlog = sum;
  })().finally(() => {
    backlogRead = undefined;
  });
  return backlogRead;
}

/**
 * The delivery queue at scrape time, for the webhook backlog alert: `wallet_webhook_pending_deliveries`
 * (PENDING, waiting for a retry or not), `wallet_webhook_due_deliveries` (PENDING and due now: the
 * worker's backlog) and `wallet_webhook_oldest_due_seconds` (how long the oldest due one has been due).
 */
for (const [name, help, pick] of [
  [
    'wallet_webhook_pending_deliveries',
    'webhook deliveries PENDING (due now or waiting for a retry) at scrape time',
    (b: NonNullable<typeof backlog>) => b.pending,
  ],
  [
    'wallet_webhook_due_deliveries',
    'webhook deliveries PENDING and due now (the worker has not sent them yet) at scrape time',
    (b: NonNullable<typeof backlog>) => b.due,
  ],
  [
    'wallet_webhook_oldest_due_seconds',
    'seconds the oldest due webhook delivery has been waiting for the worker (0 when none)',
    (b: NonNullable<typeof backlog>) => b.oldestDue,
  ],
] as const) {
  new Gauge({
    name,
    help,
    registers: [metricsRegistry],
    async collect() {
      await readBacklog();
      this.set(backlog ? pick(backlog) : 0);
    },
  });
}

/** Reports this database's delivery queue at scrape time until the returned function is called. */
export function watchDeliveryBacklog(db: Database): () => void {
  backlogDatabases.add(db);
  return () => {
    backlogDatabases.delete(db);
  };
}
