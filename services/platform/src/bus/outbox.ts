import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { Counter, Gauge } from 'prom-client';
import { deleteInChunks, type Database, type Tx } from '../db/database.js';
import { PeriodicTask } from '../ops/periodic-task.js';
import { withTimeout } from '../time/with-timeout.js';
import type { Bus } from './bus.js';
import { metricsRegistry } from '../ops/metrics.js';
import { trace } from '@opentelemetry/api';
import { currentTraceparent } from '../telemetry/telemetry.js';
import { contextFromTraceHeaders, endSpanWith, outsideTrace, SpanKind, traceHeaders, tracer } from '../telemetry/tracing.js';

export interface OutboxMessage {
  id?: string;
  subject: string;
  /** proto3 JSON of the payload message (`Message.toJSON(msg)`). */
  payload: unknown;
  traceparent?: string;
}

/**
 * Writes an event in the same transaction as the state change (ARCHITECTURE rule 4);
 * the relay publishes it after commit. Returns the event id.
 */
export async function appendOutbox(tx: Pick<Tx, 'query'>, schema: string, msg: OutboxMessage): Promise<string> {
  const id = msg.id ?? randomUUID();
  // The trace context of the write (the gRPC call or message being handled), unless the caller gave one.
  const traceparent = msg.traceparent ?? currentTraceparent();
  const headers = traceparent ? { traceparent } : {};
  await tx.query(`insert into "${schema}".outbox (id, subject, payload, headers) values (?, ?, ?::jsonb, ?::jsonb)`, [
    id,
    msg.subject,
    JSON.stringify(msg.payload),
    JSON.stringify(headers),
  ]);
  return id;
}

const published = new Counter({ name: 'outbox_published_total', help: 'events relayed to JetStream', labelNames: ['schema'], registers: [metricsRegistry] });
const failures = new Counter({ name: 'outbox_publish_failures_total', help: 'relay publish failures', labelNames: ['schema'], registers: [metricsRegistry] });
const pruned = new Counter({
  name: 'outbox_pruned_total',
  help: 'published outbox rows deleted after the retention',
  labelNames: ['schema'],
  registers: [metricsRegistry],
});
const backlog = new Gauge({ name: 'outbox_backlog', help: 'unpublished outbox rows at the last poll', labelNames: ['schema'], registers: [metricsRegistry] });

/** Relays alive in this process, measured at scrape time (one cheap indexed query per schema). */
const liveRelays = new Set<OutboxRelay>();
const lagSnapshot = new Map<string, { pending: number; oldestAgeSeconds: number }>();
let measuring: Promise<void> | undefined;
/** One measurement per scrape, shared by the gauges (the registry collects them concurrently). */
function measureRelays(): Promise<void> {
  measuring ??= Promise.all(
    [...liveRelays].map(async (r) => {
      try {
        lagSnapshot.set(r.schema, await withTimeout(r.lag(), 1000));
      } catch {
        /* database busy or closing: keep the last value */
      }
    }),
  )
    .then(() => undefined)
    .finally(() => {
      measuring = undefined;
    });
  return measuring;
}
new Gauge({
  name: 'outbox_pending_events',
  help: 'outbox rows committed but not yet published to JetStream',
  labelNames: ['schema'],
  registers: [metricsRegistry],
  async collect() {
    await measureRelays();
    this.reset();
    for (const [schema, v] of lagSnapshot) this.set({ schema }, v.pending);
  },
});
new Gauge({
  name: 'outbox_lag_seconds',
  help: 'age of the oldest unpublished outbox row (0 when none)',
  labelNames: ['schema'],
  registers: [metricsRegistry],
  async collect() {
    await measureRelays();
    this.reset();
    for (const [schema, v] of lagSnapshot) this.set({ schema }, v.oldestAgeSeconds);
  },
});

interface OutboxRow {
  seq: string;
  id: string;
  subject: string;
  payload: unknown;
  headers: { traceparent?: string; tracestate?: string };
  created_at: string;
}

/** The relay lock of a schema: a stable 32-bit key for pg_try_advisory_xact_lock. */
export function relayLockKey(schema: string): number {
  let h = 0;
  for (const c of `outbox:${schema}`) h = (Math.imul(h, 31) + c.charCodeAt(0)) | 0;
  return h;
}

/**
 * Relays outbox rows to JetStream in commit order. One relay per schema publishes at a time
 * (transaction advisory lock), so events leave in the order they were written; a crash between
 * publish and mark re-publishes with the same Nats-Msg-Id, which JetStream drops as a duplicate.
 */
export class OutboxRelay {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private wakeRequested = false;
  private nudgeTimer: NodeJS.Timeout | undefined;
  private readonly pruneTask: PeriodicTask;
  private readonly lockKey: number;

  constructor(
    private readonly db: Database,
    private readonly bus: Bus,
    private readonly source: string,
    private readonly log: Logger,
    /**
     * `concurrency`: publishes of a batch in flight at once (default 1: one at a time). Above 1 they
     * are pipelined on the one connection, so they still reach the stream in commit order; only the
     * unbroken prefix of acknowledged ones is marked published, the rest are re-sent next time (and
     * dropped by JetStream as duplicates if they had landed). Cuts the relay's CPU per event about 3x.
     * `nudgeDelayMs`: a nudge publishes after this delay (default 0: at once), so the events of the
     * commits meanwhile go in one relay transaction instead of one each.
     * `retentionMs`: published rows are deleted this long after publication (default 24 h: enough
     * to see what left and when; JetStream's de-duplication window is 10 min), checked every
     * `pruneEveryMs` (default 5 min). The table then holds a day of events, not every event ever.
     */
    private readonly opts: {
      intervalMs?: number;
      batch?: number;
      concurrency?: number;
      nudgeDelayMs?: number;
      retentionMs?: number;
      pruneEveryMs?: number;
    } = {},
  ) {
    this.lockKey = relayLockKey(db.schema);
    this.pruneTask = new PeriodicTask(`outbox prune ${db.schema}`, opts.pruneEveryMs ?? 5 * 60_000, () => this.prune(), log);
  }

  start(): void {
    this.stopped = false;
    liveRelays.add(this);
    const tick = () => {
      if (this.stopped) return;
      // The poll is the backstop (nudges carry the hot path): when nothing waits it costs one
      // read of the unpublished-rows index, not a transaction with the relay lock.
      this.timer = setTimeout(
        outsideTrace(() => {
          void this.idle()
            .then((empty) => (empty ? undefined : this.flush()))
            .finally(tick);
        }),
        this.opts.intervalMs ?? 200,
      );
      this.timer.unref();
    };
    tick();
    this.pruneTask.start();
  }

  /**
   * Deletes rows published more than `retentionMs` ago, oldest first, a bounded number per call.
   * Only the head of the table (in `seq` order, which is commit order) is looked at: a row there
   * that is still unpublished or too recent stops it, so the call never scans the whole table.
   * Returns how many rows it deleted.
   */
  async prune(maxRows = 100_000): Promise<number> {
    const schema = this.db.schema;
    const total = await deleteInChunks(
      async (limit) => {
        const [r] = await this.db.prepared<{ n: number }>(
          `with head as (select seq from "${schema}".outbox order by seq limit ?),
              gone as (delete from "${schema}".outbox o using head
                        where o.seq = head.seq and o.published_at < now() - (?::bigint * interval '1 millisecond') returning 1)
         select count(*)::int as n from gone`,
          [limit, this.opts.retentionMs ?? 24 * 3600_000],
        );
        return r?.n ?? 0;
      },
      { maxRows, stop: () => this.stopped },
    );
    if (total > 0) {
      pruned.inc({ schema }, total);
      this.log.debug({ schema, rows: total }, 'published outbox rows pruned');
    }
    return total;
  }

  /** True when no row waits to be published (one autocommit read; an error reads as "maybe": the poll then relays). */
  private async idle(): Promise<boolean> {
    if (this.running) return false;
    try {
      const rows = await this.db.prepared<{ n: number }>(`select 1 as n from "${this.db.schema}".outbox where published_at is null limit 1`);
      return rows.length === 0;
    } catch {
      return false;
    }
  }

  /** Publish now (called after a commit that wrote events), coalescing concurrent wake-ups. */
  nudge(): void {
    if (this.stopped) return;
    if (this.running) {
      this.wakeRequested = true;
      return;
    }
    // The relay's own reads and writes belong to no request's trace (a nudge comes from inside one):
    // each publish is a span of the trace stored with its row.
    const delay = this.opts.nudgeDelayMs ?? 0;
    if (delay <= 0) {
      outsideTrace(() => void this.flush())();
      return;
    }
    this.nudgeTimer ??= setTimeout(
      outsideTrace(() => {
        this.nudgeTimer = undefined;
        void this.flush();
      }),
      delay,
    );
  }

  private retryTimer: NodeJS.Timeout | undefined;
  private retrySoon(): void {
    if (this.stopped || this.retryTimer) return;
    // The look again starts with the poll's read of the unpublished-rows index: when the replica that held
    // the lock published our rows too (the common case), that one read is all, instead of a transaction
    // whose lock is taken only to find nothing.
    this.retryTimer = setTimeout(
      outsideTrace(() => {
        this.retryTimer = undefined;
        void this.idle().then((empty) => {
          if (!empty) this.nudge();
        });
      }),
      25,
    );
    this.retryTimer.unref();
  }

  /** Publishes everything pending; resolves when the outbox was empty at the last look. */
  async flush(): Promise<void> {
    if (this.running) {
      this.wakeRequested = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.wakeRequested = false;
          while (await this.relayBatch()) {
            /* keep going while full batches come back */
          }
        } while (this.wakeRequested && !this.stopped);
      } catch (err) {
        failures.inc({ schema: this.db.schema });
        this.log.warn({ err: (err as Error).message }, 'outbox relay failed; will retry');
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }

  /** One batch in one transaction; true when the batch was full (more may be waiting). */
  private async relayBatch(): Promise<boolean> {
    const batch = this.opts.batch ?? 100;
    const schema = this.db.schema;
    // Native prepared statements: the relay runs this every poll and after every nudge, so the
    // statements are planned once per connection instead of on every call.
    return this.db.preparedTx(async (tx) => {
      const [lock] = await tx.query<{ ok: boolean }>('select pg_try_advisory_xact_lock(?::bigint) as ok', [this.lockKey]);
      if (!lock?.ok) {
        // Another replica is relaying: it may have read the outbox before our rows committed, so
        // look again shortly rather than at the next poll.
        this.retrySoon();
        return false;
      }
      const rows = await tx.query<OutboxRow>(
        `select seq, id, subject, payload, headers, created_at from "${schema}".outbox
          where published_at is null order by seq limit ?`,
        [batch],
      );
      backlog.set({ schema }, rows.length);
      if (rows.length === 0) return false;
      const done: string[] = [];
      const publish = (row: OutboxRow) => {
        // PRODUCER span, child of the context stored with the row; its own context goes out as the traceparent header.
        const parent = contextFromTraceHeaders(row.headers ?? {});
        const span = tracer().startSpan(
          `${row.subject} publish`,
          {
            kind: SpanKind.PRODUCER,
            attributes: {
              'messaging.system': 'nats',
              'messaging.operation.type': 'send',
              'messaging.destination.name': row.subject,
              'messaging.message.id': row.id,
            },
          },
          parent,
        );
        const h = traceHeaders(trace.setSpan(parent, span));
        const traceparent = h.traceparent ?? row.headers?.traceparent;
        const tracestate = h.tracestate ?? row.headers?.tracestate;
        return endSpanWith(
          span,
          this.bus.publish({
            id: row.id,
            subject: row.subject,
            payload: row.payload,
            source: this.source,
            time: new Date(row.created_at).toISOString(),
            ...(traceparent ? { traceparent } : {}),
            ...(traceparent && tracestate ? { tracestate } : {}),
          }),
        );
      };
      const window = Math.max(1, this.opts.concurrency ?? 1);
      outer: for (let i = 0; i < rows.length; i += window) {
        const slice = rows.slice(i, i + window);
        const results = await Promise.allSettled(slice.map(publish));
        for (let j = 0; j < slice.length; j++) {
          const r = results[j]!;
          if (r.status === 'fulfilled') {
            done.push(slice[j]!.seq);
            continue;
          }
          failures.inc({ schema });
          await tx.query(`update "${schema}".outbox set attempts = attempts + 1, last_error = ? where seq = ?`, [
            String((r.reason as Error)?.message).slice(0, 500),
            slice[j]!.seq,
          ]);
          break outer; // keep order: stop at the first failure and retry from here next time
        }
      }
      if (done.length > 0) {
        await tx.query(`update "${schema}".outbox set published_at = now() where seq = any(?::bigint[])`, [done]);
        published.inc({ schema }, done.length);
      }
      return done.length === batch;
    });
  }

  get schema(): string {
    return this.db.schema;
  }

  /** Unpublished rows and the age of the oldest one (the partial index on unpublished rows keeps it cheap). */
  async lag(): Promise<{ pending: number; oldestAgeSeconds: number }> {
    const [r] = await this.db.query<{ n: string; age: string | null }>(
      `select count(*)::text as n, extract(epoch from now() - min(created_at))::text as age from "${this.db.schema}".outbox where published_at is null`,
    );
    return { pending: Number(r?.n ?? 0), oldestAgeSeconds: Math.max(0, Number(r?.age ?? 0)) };
  }

  async pending(): Promise<number> {
    const [r] = await this.db.query<{ n: string }>(`select count(*)::text as n from "${this.db.schema}".outbox where published_at is null`);
    return Number(r?.n ?? 0);
  }

  /** Stops the timer and drains what is left (graceful shutdown). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.pruneTask.stop();
    if (this.nudgeTimer) {
      clearTimeout(this.nudgeTimer);
      this.nudgeTimer = undefined;
    }
    if (this.retryTimer) {
      clearTimeout(this.retryTimer);
      this.retryTimer = undefined;
    }
    if (this.running) await this.running;
    try {
      await this.flush();
    } catch {
      /* logged in flush */
    }
    liveRelays.delete(this);
    lagSnapshot.delete(this.db.schema);
  }
}
