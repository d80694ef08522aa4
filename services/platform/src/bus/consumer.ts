import type { Logger } from 'pino';
import type { ConsumerMessages } from '@nats-io/jetstream';
import type { Database, Tx } from '../db/database.js';
import type { Bus, StreamName } from './bus.js';
import { context, propagation, trace, ROOT_CONTEXT } from '@opentelemetry/api';
import { Counter, Gauge, Histogram } from 'prom-client';
import { metricsRegistry } from '../ops/metrics.js';
import { runWithLogContext } from '../logging/log-context.js';
import { headerGetter, markSpanError, SpanKind, tracer } from '../telemetry/tracing.js';

const handled = new Counter({
  name: 'nats_consumer_messages_total', help: 'messages handled by a durable consumer, by outcome (applied, duplicate, failed)',
  labelNames: ['consumer', 'outcome'], registers: [metricsRegistry],
});
const redeliveries = new Counter({
  name: 'nats_consumer_redeliveries_total', help: 'messages JetStream delivered again (after a nak or an ack timeout)',
  labelNames: ['consumer'], registers: [metricsRegistry],
});
const handleSeconds = new Histogram({
  name: 'nats_consumer_handle_seconds', help: 'time to handle one message (inbox + handler transaction + ack)',
  labelNames: ['consumer'], buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5], registers: [metricsRegistry],
});

/** Consumers alive in this process; their JetStream state is read at scrape time. */
const liveConsumers = new Set<InboxConsumer>();
const consumerState = new Map<InboxConsumer, { pending: number; ackPending: number; redelivered: number }>();
let measuring: Promise<void> | undefined;
/** One measurement per scrape, shared by the gauges (the registry collects them concurrently). */
function measureConsumers(): Promise<void> {
  measuring ??= Promise.all([...liveConsumers].map(async (c) => {
    try { consumerState.set(c, await c.lag()); } catch { /* NATS busy or closing: keep the last value */ }
  })).then(() => undefined).finally(() => { measuring = undefined; });
  return measuring;
}
new Gauge({
  name: 'nats_consumer_pending_messages', help: 'messages in the stream not yet delivered to the durable consumer (num_pending)',
  labelNames: ['stream', 'consumer'], registers: [metricsRegistry],
  async collect() {
    await measureConsumers();
    this.reset();
    for (const [c, v] of consumerState) this.set(c.labels, v.pending);
  },
});
new Gauge({
  name: 'nats_consumer_ack_pending_messages', help: 'messages delivered and not yet acknowledged (num_ack_pending)',
  labelNames: ['stream', 'consumer'], registers: [metricsRegistry],
  async collect() {
    await measureConsumers();
    this.reset();
    for (const [c, v] of consumerState) this.set(c.labels, v.ackPending);
  },
});
new Gauge({
  name: 'nats_consumer_redelivered_messages', help: 'messages currently redelivered at least once, per JetStream (num_redelivered)',
  labelNames: ['stream', 'consumer'], registers: [metricsRegistry],
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
}

export type EventHandler = (evt: ReceivedEvent, tx: Tx) => Promise<void>;

/**
 * A durable JetStream consumer that applies each event at most once in effect: the inbox row
 * (consumer, event id) and the handler's writes commit in one transaction; a redelivery finds
 * the row and is only acknowledged. A failing handler is retried with a growing delay.
 */
export class InboxConsumer {
  private messages: ConsumerMessages | undefined;
  private loop: Promise<void> | undefined;
  private inFlight = 0;

  constructor(
    private readonly db: Database,
    private readonly bus: Bus,
    private readonly opts: { stream: StreamName; durable: string; subject: string; handler: EventHandler; log: Logger },
  ) {}

  /** Metric labels: the stream (without namespace) and the durable name. */
  get labels(): { stream: string; consumer: string } {
    return { stream: this.opts.stream, consumer: this.opts.durable };
  }

  /** JetStream's view of the consumer: undelivered, unacknowledged and redelivered messages. */
  async lag(): Promise<{ pending: number; ackPending: number; redelivered: number }> {
    const info = await Promise.race([
      this.bus.jsm.consumers.info(this.bus.streamName(this.opts.stream), this.opts.durable),
      new Promise<never>((_, rej) => setTimeout(() => rej(new Error('timeout')), 1000).unref()),
    ]);
    return { pending: info.num_pending, ackPending: info.num_ack_pending, redelivered: info.num_redelivered };
  }

  async start(): Promise<void> {
    await this.bus.ensureConsumer(this.opts.stream, this.opts.durable, this.opts.subject);
    this.messages = await this.bus.consume(this.opts.stream, this.opts.durable);
    liveConsumers.add(this);
    const schema = this.db.schema;
    const { durable, handler, log } = this.opts;
    this.loop = (async () => {
      for await (const m of this.messages!) {
        this.inFlight++;
        const started = performance.now();
        const id = m.headers?.get('ce-id') || m.headers?.get('Nats-Msg-Id') || `${m.info.stream}:${m.seq}`;
        const evt: ReceivedEvent = {
          id,
          subject: this.bus.localSubject(m.subject),
          payload: m.json(),
          time: m.headers?.get('ce-time') || undefined,
          traceparent: m.headers?.get('traceparent') || undefined,
          redelivered: m.redelivered,
        };
        if (m.redelivered) redeliveries.inc({ consumer: durable });
        // CONSUMER span continuing the producer's trace from the traceparent header.
        const parent = m.headers ? propagation.extract(ROOT_CONTEXT, m.headers, headerGetter) : ROOT_CONTEXT;
        const span = tracer().startSpan(`${evt.subject} process`, {
          kind: SpanKind.CONSUMER,
          attributes: {
            'messaging.system': 'nats', 'messaging.operation.type': 'process', 'messaging.destination.name': evt.subject,
            'messaging.consumer.group.name': durable, 'messaging.message.id': id, 'messaging.nats.delivery_count': m.info.deliveryCount,
          },
        }, parent);
        const companyId = (evt.payload as { companyId?: unknown } | null)?.companyId;
        const logCtx = { eventId: id, ...(typeof companyId === 'string' ? { companyId } : {}) };
        let outcome = 'applied';
        try {
          await context.with(trace.setSpan(parent, span), () => runWithLogContext(logCtx, async () => {
            await this.db.tx(async (tx) => {
              const inserted = await tx.query(
                `insert into "${schema}".inbox (consumer, event_id, subject) values (?, ?, ?) on conflict do nothing returning event_id`,
                [durable, id, evt.subject]);
              if (inserted.length > 0) await handler(evt, tx);
              else outcome = 'duplicate';
            });
            await m.ackAck();
          }));
        } catch (err) {
          outcome = 'failed';
          markSpanError(span, err);
          const delayMs = Math.min(30_000, 250 * 2 ** Math.min(m.info.deliveryCount, 7));
          context.with(trace.setSpan(parent, span), () => runWithLogContext(logCtx, () => {
            log.warn({ err: (err as Error).message, eventId: id, subject: evt.subject, delayMs }, 'event handler failed; will be redelivered');
          }));
          m.nak(delayMs);
        } finally {
          span.setAttribute('messaging.outcome', outcome);
          span.end();
          handled.inc({ consumer: durable, outcome });
          handleSeconds.observe({ consumer: durable }, (performance.now() - started) / 1000);
          this.inFlight--;
        }
      }
    })();
  }

  /** Stops pulling; the message being handled finishes first. */
  async stop(): Promise<void> {
    liveConsumers.delete(this);
    consumerState.delete(this);
    await this.messages?.close();
    await this.loop;
  }
}
