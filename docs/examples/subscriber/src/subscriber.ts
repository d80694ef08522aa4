// A durable JetStream pull consumer: survives restarts (the server remembers its position), acks
// each message explicitly once handled, naks to retry later, terminates poison messages.
import { connect } from '@nats-io/transport-node';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { handleMessage, MemorySeenIds, type Outcome, type SeenIds, type WalletEvent } from './handler.js';

export interface SubscriberOptions<T> {
  /** NATS servers, comma separated. */
  servers: string;
  /** The stream: TRANSFERS (in a namespaced install `<NS>_TRANSFERS`). */
  stream: string;
  /** The durable consumer's name: one per subscribing application (its instances share it). */
  durable: string;
  /** e.g. `transfer.>` (namespaced: `<ns>.transfer.>`). One filter: NATS 2.9 takes no filter list. */
  filterSubject: string;
  onEvent(event: WalletEvent<T>): Promise<void>;
  seen?: SeenIds;
  /** Called after each message (for logs and metrics). */
  onOutcome?(outcome: Outcome | 'retry', subject: string): void;
  /** Stops consuming when aborted. */
  signal?: AbortSignal;
}

const SECOND_NS = 1_000_000_000;

export async function runSubscriber<T>(o: SubscriberOptions<T>): Promise<void> {
  const nc = await connect({ servers: o.servers.split(','), name: o.durable, maxReconnectAttempts: -1 });
  try {
    const jsm = await jetstreamManager(nc);
    try {
      await jsm.consumers.info(o.stream, o.durable);
    } catch {
      await jsm.consumers.add(o.stream, {
        durable_name: o.durable,
        filter_subject: o.filterSubject,
        ack_policy: AckPolicy.Explicit, // nothing is "done" until we say so
        deliver_policy: DeliverPolicy.All,
        ack_wait: 30 * SECOND_NS, // unacknowledged after 30 s: redelivered
        max_deliver: -1,
      });
    }
    const seen = o.seen ?? new MemorySeenIds();
    const consumer = await jetstream(nc).consumers.get(o.stream, o.durable);
    const messages = await consumer.consume({ max_messages: 64 });
    if (o.signal?.aborted) messages.stop();
    o.signal?.addEventListener('abort', () => messages.stop(), { once: true });
    for await (const m of messages) {
      try {
        const outcome = await handleMessage(m, seen, o.onEvent);
        if (outcome === 'poison') m.term();
        else await m.ackAck(); // a confirmed ack: after it, the server will not redeliver
        o.onOutcome?.(outcome, m.subject);
      } catch {
        m.nak(5_000); // the effect failed: try again in 5 s
        o.onOutcome?.('retry', m.subject);
      }
    }
  } finally {
    await nc.drain();
  }
}
