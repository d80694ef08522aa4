import type { Logger } from 'pino';
import type { ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import { deleteInChunks, type Database, type SqlTx } from '../db/database.js';
import { PeriodicTask } from '../ops/periodic-task.js';
import { withTimeout } from '../time/with-timeout.js';
import { STREAM_MAX_AGE_MS, type Bus, type StreamName } from './bus.js';
import { context, propagation, trace, ROOT_CONTEXT, type Context, type Span } from '@opentelemetry/api';
import { Counter, Gauge, Histogram } from 'prom-client';
import { metricsRegistry } from '../ops/metrics.js';
import { runWithLogContext } from '../logging/log-context.js';
import { headerGetter, markSpanError, SpanKind, tracer } from '../telemetry/tracing.js';

const handled = new Counter({
  name: 'nats_consumer_messages_total',
  help: 'messages handled by a durable consumer, by outcome (applied, duplicate, failed)',
  labelNames: ['consumer', 'outcome'],
  registers: [metricsRegistry],
});
const redeliveries = new Counter({
  name: 'nats_consumer_redeliveries_total',
  help: 'messages JetStream delivered again (after a nak or an ack timeout)',
  labelNames: ['consumer'],
  registers: [metricsRegistry],
});
const handleSeconds = new Histogram({
  name: 'nats_consumer_handle_seconds',
  help: 'time to handle one message (inbox + handler transaction + ack)',
  labelNames: ['consumer'],
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  registers: [metricsRegistry],
});

/** Consumers alive in this process; their JetStream state is read at scrape time. */
const liveConsumers = new Set<InboxConsumer>();
const consumerState = new Map<InboxConsumer, { pending: number; ackPending: number; redelivered: number }>();
let measuring: Promise<void> | undefined;
/** One measurement per scrape, shared by the gauges (the registry collects them concurrently). */
function measureConsumers(): Promise<void> {
  measuring ??= Promise.all(
    [...liveConsumers].map(async (c) => {
      try {
        consumerState.set(c, await c.lag());
      } catch {
        /* NATS busy or closing: keep the last value */
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
  name: 'nats_consumer_pending_messages',
  help: 'messages in the stream not yet delivered to the durable consumer (num_pending)',
  labelNames: ['stream', 'consumer'],
  registers: [metricsRegistry],
  async collect() {
    await measureConsumers();
    this.reset();
    for (const [c, v] of consumerState) this.set(c.labels, v.pending);
  },
});
new Gauge({
  name: 'nats_consumer_ack_pending_messages',
  help: 'messages delivered and not yet acknowledged (num_ack_pending)',
  labelNames: ['stream', 'consumer'],
  registers: [metricsRegistry],
  async collect() {
    await measureConsumers();
    this.reset();
    for (const [c, v] of consumerState) this.set(c.labels, v.ackPending);
  },
});
new Gauge({
  name: 'nats_consumer_redelivered_messages',
  help: 'messages currently redelivered at least once, per JetStream (num_redelivered)',
  labelNames: ['stream', 'consumer'],
  registers: [metricsRegistry],
  async collect() {
    await measureConsumers();
    this.reset();
    for (const [c, v] of consumerState) this.set(c.labels, v.redelivered);
  },
});

export interface ReceivedEvent {
  id: string;
  subject: string;
  payload: unknown;
  time: string | undefined;
  traceparent: string | undefined;
  redelivered: boolean;
  /**
   * The JetStream stream and the message's sequence number in it: its place among that stream's events,
   * which is publication order (the webhook service delivers a resource's events in it, docs/webhooks.md "Order").
   */
  stream: string;
  streamSeq: number;
}

/** Runs inside the inbox transaction (native prepared statements, `?` placeholders). */
export type EventHandler = (evt: ReceivedEvent, tx: SqlTx) => Promise<void>;
/**
 * Applies, inside the inbox transaction, every event of a batch not seen before, in their order, at
 * once (a consumer that writes a page of events with a few multi-row statements instead of a few
 * statements per event). It must give the same result as applying them one by one in that order:
 * when it throws, the batch rolls back and its events are applied one at a time (a batch of one).
 */
export type BatchEventHandler = (evts: ReceivedEvent[], tx: SqlTx) => Promise<void>;

/** Messages applied in one transaction at most, unless the consumer sets `maxBatch` (a batch only forms while the previous one commits). */
const MAX_BATCH = 32;
/** Messages taken from JetStream and not yet handled, at most (at least two batches); the pull waits beyond it. */
const MAX_BUFFERED = 128;
/**
 * Inbox rows are kept longer than the streams keep events (30 days): a consumer created or reset
 * with DeliverPolicy.All is handed every retained event again, and the inbox must still know them.
 */
export const INBOX_RETENTION_MS = STREAM_MAX_AGE_MS + 5 * 24 * 3600 * 1000;

const inboxPruned = new Counter({
  name: 'nats_consumer_inbox_pruned_total',
  help: 'inbox rows deleted after the retention (longer than the streams keep events)',
  labelNames: ['consumer'],
  registers: [metricsRegistry],
});

interface Received {
  m: JsMsg;
  evt: ReceivedEvent;
  parent: Context;
  logCtx: Record<string, string>;
}

/**
 * A durable JetStream consumer that applies each event at most once in effect: the inbox row
 * (consumer, event id) and the handler's writes commit in one transaction; a redelivery finds
 * the row and is only acknowledged. A failing handler is retried with a growing delay.
 *
 * Events that arrive while a transaction is committing are applied together, in order, in the
 * next one (one multi-row inbox insert, each handler, one commit), then acknowledged: one round
 * trip per batch instead of per event under load, and no added wait when traffic is light (a lone
 * event is handled after one `setImmediate`, which lets the rest of its socket read join it). If
 * any event of a batch fails, the batch rolls back and its events are applied one at a time, so
 * only the failing one is retried. Acknowledgements are not awaited:
 * a lost one only causes a redelivery, which the inbox turns into a no-op.
 */
export class InboxConsumer {
  private messages: ConsumerMessages | undefined;
  private loop: Promise<void> | undefined;
  private stopping = false;
  private readonly pruneTask: PeriodicTask;

  constructor(
    private readonly db: Database,
    private readonly bus: Bus,
    private readonly opts: {
      stream: StreamName;
      durable: string;
      subject: string;
      handler: EventHandler;
      log: Logger;
      /** When set, the fresh events of a transaction go to it together instead of to `handler` one by one. */
      batchHandler?: BatchEventHandler;
      /** Called after each commit that applied events (e.g. to wake a worker for what they wrote). */
      afterCommit?: () => void;
      /**
       * Events applied in one transaction at most (default 32). A consumer whose batch handler writes a
       * page with a constant number of statements takes more under load (fewer round trips per event).
       */
      maxBatch?: number;
      /** Inbox rows older than this are deleted (default INBOX_RETENTION_MS), checked every `pruneEveryMs` (default 10 min). */
      inboxRetentionMs?: number;
      pruneEveryMs?: number;
    },
  ) {
    this.pruneTask = new PeriodicTask(`inbox prune ${opts.durable}`, opts.pruneEveryMs ?? 10 * 60_000, () => this.pruneInbox(), opts.log);
  }

  private get maxBatch(): number {
    return this.opts.maxBatch ?? MAX_BATCH;
  }

  /** Metric labels: the stream (without namespace) and the durable name. */
  get labels(): { stream: string; consumer: string } {
    return { stream: this.opts.stream, consumer: this.opts.durable };
  }

  /** JetStream's view of the consumer: undelivered, unacknowledged and redelivered messages. */
  async lag(): Promise<{ pending: number; ackPending: number; redelivered: number }> {
    const info = await withTimeout(this.bus.jsm.consumers.info(this.bus.streamName(this.opts.stream), this.opts.durable), 1000);
    return { pending: info.num_pending, ackPending: info.num_ack_pending, redelivered: info.num_redelivered };
  }

  async start(): Promise<void> {
    await this.bus.ensureConsumer(this.opts.stream, this.opts.durable, this.opts.subject);
    this.messages = await this.bus.consume(this.opts.stream, this.opts.durable, Math.max(64, this.maxBatch));
    liveConsumers.add(this);
    this.loop = this.run(this.messages);
    this.pruneTask.start();
  }

  /**
   * Deletes this consumer's inbox rows older than the retention, oldest first (the handled_at
   * index), a bounded number per call. Returns how many it deleted.
   */
  async pruneInbox(maxRows = 100_000): Promise<number> {
    const { durable } = this.opts;
    const total = await deleteInChunks(
      async (limit) => {
        const [r] = await this.db.prepared<{ n: number }>(
          `with old as (select event_id from "${this.db.schema}".inbox where consumer = ? and handled_at < now() - (?::bigint * interval '1 millisecond')
                       order by handled_at limit ?),
              gone as (delete from "${this.db.schema}".inbox i using old where i.consumer = ? and i.event_id = old.event_id returning 1)
         select count(*)::int as n from gone`,
          [durable, this.opts.inboxRetentionMs ?? INBOX_RETENTION_MS, limit, durable],
        );
        return r?.n ?? 0;
      },
      { maxRows, stop: () => this.stopping },
    );
    if (total > 0) inboxPruned.inc({ consumer: durable }, total);
    return total;
  }

  /** Stops pulling; the batch being handled finishes first, messages still buffered are handed back (nak). */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.pruneTask.stop();
    liveConsumers.delete(this);
    consumerState.delete(this);
    await this.messages?.close();
    await this.loop;
  }

  private async run(messages: ConsumerMessages): Promise<void> {
    const queue: JsMsg[] = [];
    let ended = false;
    let wakeWorker: (() => void) | undefined;
    let resumePull: (() => void) | undefined;
    const pull = (async () => {
      try {
        for await (const m of messages) {
          queue.push(m);
          wakeWorker?.();
          if (queue.length >= Math.max(MAX_BUFFERED, 2 * this.maxBatch))
            await new Promise<void>((r) => {
              resumePull = r;
            });
        }
      } finally {
        ended = true;
        wakeWorker?.();
      }
    })();
    for (;;) {
      if (queue.length === 0) {
        if (ended) break;
        await new Promise<void>((r) => {
          wakeWorker = r;
        });
        wakeWorker = undefined;
        // The messages of one socket read reach the queue one promise turn apart: let the rest of
        // that read arrive, so a burst is one transaction, not a lone first event and then the rest.
        await new Promise<void>((r) => setImmediate(r));
        continue;
      }
      // In stream order: an event handed back (nak) comes again after later ones were pulled, and when its
      // redelivery shares a batch with them it is applied first, as it was published first.
      const batch = queue.splice(0, this.maxBatch).sort((a, b) => a.seq - b.seq);
      const resume = resumePull;
      resumePull = undefined;
      resume?.();
      if (this.stopping) {
        for (const m of batch) m.nak();
        continue;
      }
      const items = batch.map((m) => this.receive(m)).filter((r): r is Received => r !== undefined);
      if (items.length === 1 || (items.length > 1 && !(await this.applyBatch(items)))) {
        for (const r of items) await this.applyOne(r);
      }
    }
    await pull;
  }

  /** Redelivery delay after a failure: grows with the delivery count, at most 30 s. */
  private static retryDelayMs(m: JsMsg): number {
    return Math.min(30_000, 250 * 2 ** Math.min(m.info.deliveryCount, 7));
  }

  /**
   * The event inside a message, with the trace context it carries. A payload that is not JSON is
   * counted as failed and handed back for a later redelivery (undefined).
   */
  private receive(m: JsMsg): Received | undefined {
    const { durable, log } = this.opts;
    if (m.redelivered) redeliveries.inc({ consumer: durable });
    let payload: unknown;
    try {
      payload = m.json();
    } catch (err) {
      handled.inc({ consumer: durable, outcome: 'failed' });
      const delayMs = InboxConsumer.retryDelayMs(m);
      log.warn({ err: (err as Error).message, subject: m.subject, seq: m.seq, delayMs }, 'event payload is not JSON; will be redelivered');
      m.nak(delayMs);
      return undefined;
    }
    const id = m.headers?.get('ce-id') || m.headers?.get('Nats-Msg-Id') || `${m.info.stream}:${m.seq}`;
    const parent = m.headers ? propagation.extract(ROOT_CONTEXT, m.headers, headerGetter) : ROOT_CONTEXT;
    const evt: ReceivedEvent = {
      id,
      subject: this.bus.localSubject(m.subject),
      payload,
      time: m.headers?.get('ce-time') || undefined,
      traceparent: m.headers?.get('traceparent') || undefined,
      redelivered: m.redelivered,
      stream: m.info.stream,
      streamSeq: m.seq,
    };
    const companyId = (payload as { companyId?: unknown } | null)?.companyId;
    return { m, evt, parent, logCtx: { eventId: id, ...(typeof companyId === 'string' ? { companyId } : {}) } };
  }

  /** CONSUMER span continuing the producer's trace from the traceparent header. */
  private span(r: Received): Span {
    return tracer().startSpan(
      `${r.evt.subject} process`,
      {
        kind: SpanKind.CONSUMER,
        attributes: {
          'messaging.system': 'nats',
          'messaging.operation.type': 'process',
          'messaging.destination.name': r.evt.subject,
          'messaging.consumer.group.name': this.opts.durable,
          'messaging.message.id': r.evt.id,
          'messaging.nats.delivery_count': r.m.info.deliveryCount,
        },
      },
      r.parent,
    );
  }

  private done(span: Span, outcome: string, started: number): void {
    span.setAttribute('messaging.outcome', outcome);
    span.end();
    handled.inc({ consumer: this.opts.durable, outcome });
    handleSeconds.observe({ consumer: this.opts.durable }, (performance.now() - started) / 1000);
  }

  /**
   * One transaction: the inbox rows of the events (one insert), then the handler of each event not
   * seen before, in order, each inside its span and log context. Returns each event's outcome
   * (applied or duplicate); throws, with nothing committed, when anything fails.
   */
  private commit(items: Received[], spans: Span[]): Promise<string[]> {
    const { durable, handler } = this.opts;
    return this.db.preparedTx(async (tx) => {
      const inserted = await tx.query<{ event_id: string }>(
        `insert into "${this.db.schema}".inbox (consumer, event_id, subject) values ${items.map(() => '(?, ?, ?)').join(', ')} on conflict do nothing returning event_id`,
        items.flatMap((r) => [durable, r.evt.id, r.evt.subject]),
      );
      const fresh = new Set(inserted.map((row) => row.event_id));
      const out: string[] = [];
      const batch = this.opts.batchHandler;
      const applied: Received[] = [];
      for (const [i, r] of items.entries()) {
        if (!fresh.delete(r.evt.id)) {
          out.push('duplicate');
          continue;
        }
        if (batch) applied.push(r);
        else await context.with(trace.setSpan(r.parent, spans[i]!), () => runWithLogContext(r.logCtx, () => handler(r.evt, tx)));
        out.push('applied');
      }
      // One call for the page, in the first fresh event's span and log context.
      const first = applied[0];
      if (batch && first) {
        await context.with(trace.setSpan(first.parent, spans[items.indexOf(first)]!), () =>
          runWithLogContext(first.logCtx, () =>
            batch(
              applied.map((r) => r.evt),
              tx,
            ),
          ),
        );
      }
      return out;
    });
  }

  /**
   * Applies the batch in one transaction and acknowledges it. False (nothing committed, nothing
   * acknowledged) when anything fails: the caller then applies the events one at a time.
   */
  private async applyBatch(items: Received[]): Promise<boolean> {
    const started = performance.now();
    const spans = items.map((r) => this.span(r));
    let outcomes: string[];
    try {
      outcomes = await this.commit(items, spans);
    } catch (err) {
      for (const s of spans) {
        s.setAttribute('messaging.outcome', 'batch_retried_singly');
        s.end();
      }
      this.opts.log.debug({ err: (err as Error).message, events: items.length }, 'batch rolled back; applying its events one at a time');
      return false;
    }
    if (outcomes.includes('applied')) this.opts.afterCommit?.();
    for (const [i, r] of items.entries()) {
      r.m.ack();
      this.done(spans[i]!, outcomes[i]!, started);
    }
    return true;
  }

  /** Applies one event; a failure hands it back for a redelivery after a growing delay. */
  private async applyOne(r: Received): Promise<void> {
    const started = performance.now();
    const span = this.span(r);
    let outcome = 'failed';
    try {
      [outcome] = (await this.commit([r], [span])) as [string];
      if (outcome === 'applied') this.opts.afterCommit?.();
      r.m.ack();
    } catch (err) {
      markSpanError(span, err);
      const delayMs = InboxConsumer.retryDelayMs(r.m);
      context.with(trace.setSpan(r.parent, span), () =>
        runWithLogContext(r.logCtx, () => {
          this.opts.log.warn({ err: (err as Error).message, eventId: r.evt.id, subject: r.evt.subject, delayMs }, 'event handler failed; will be redelivered');
        }),
      );
      r.m.nak(delayMs);
    } finally {
      this.done(span, outcome, started);
    }
  }
}
