import type { Logger } from 'pino';
import type { ConsumerMessages } from '@nats-io/jetstream';
import type { Database, Tx } from '../db/database.js';
import type { Bus, StreamName } from './bus.js';

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

  async start(): Promise<void> {
    await this.bus.ensureConsumer(this.opts.stream, this.opts.durable, this.opts.subject);
    this.messages = await this.bus.consume(this.opts.stream, this.opts.durable);
    const schema = this.db.schema;
    const { durable, handler, log } = this.opts;
    this.loop = (async () => {
      for await (const m of this.messages!) {
        this.inFlight++;
        const id = m.headers?.get('ce-id') || m.headers?.get('Nats-Msg-Id') || `${m.info.stream}:${m.seq}`;
        const evt: ReceivedEvent = {
          id,
          subject: this.bus.localSubject(m.subject),
          payload: m.json(),
          time: m.headers?.get('ce-time') || undefined,
          traceparent: m.headers?.get('traceparent') || undefined,
          redelivered: m.redelivered,
        };
        try {
          await this.db.tx(async (tx) => {
            const inserted = await tx.query(
              `insert into "${schema}".inbox (consumer, event_id, subject) values (?, ?, ?) on conflict do nothing returning event_id`,
              [durable, id, evt.subject]);
            if (inserted.length > 0) await handler(evt, tx);
          });
          await m.ackAck();
        } catch (err) {
          const delayMs = Math.min(30_000, 250 * 2 ** Math.min(m.info.deliveryCount, 7));
          log.warn({ err: (err as Error).message, eventId: id, subject: evt.subject, delayMs }, 'event handler failed; will be redelivered');
          m.nak(delayMs);
        } finally {
          this.inFlight--;
        }
      }
    })();
  }

  /** Stops pulling; the message being handled finishes first. */
  async stop(): Promise<void> {
    await this.messages?.close();
    await this.loop;
  }
}
