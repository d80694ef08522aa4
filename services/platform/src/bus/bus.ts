import { connect, headers as natsHeaders, nanos, type NatsConnection } from '@nats-io/transport-node';
import {
  jetstream,
  jetstreamManager,
  AckPolicy,
  DeliverPolicy,
  RetentionPolicy,
  StorageType,
  DiscardPolicy,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type ConsumerMessages,
} from '@nats-io/jetstream';
import type { Logger } from 'pino';

/** How long the streams keep events: a consumer created or reset now can be handed events this old. */
export const STREAM_MAX_AGE_MS = 30 * 24 * 3600 * 1000;

/** The product's streams (ARCHITECTURE "Events"). */
export const STREAMS = {
  TRANSFERS: 'transfer',
  DEPOSITS: 'deposit',
  LEDGER: 'ledger',
  COLLECT_KEYS: 'collectkey',
  RECONCILIATION: 'reconciliation',
  /** The gateway's: changes to a company's security settings (`company.security_changed`, docs/security.md "The company is told"). */
  COMPANIES: 'company',
  /** pse-deposit's cobros (expected payments, docs/cobros.md): `cobro.created`, `cobro.paid`, … */
  COBROS: 'cobro',
  /** The transfer service's counterparties (payees): `counterparty.verified`, `counterparty.verification_failed`. */
  COUNTERPARTIES: 'counterparty',
  /** The ledger's events about a company's wallets (docs/wallet-moves.md): `wallet.moved`. */
  WALLETS: 'wallet',
  /** The gateway's scheduled payouts (docs/schedules.md): `schedule.run_started`, `schedule.run_failed`. */
  SCHEDULES: 'schedule',
} as const;
export type StreamName = keyof typeof STREAMS;

export interface BusEvent {
  /** Unique event id: Nats-Msg-Id and ce-id; consumers de-duplicate on it. */
  id: string;
  /** Subject without namespace, e.g. `ledger.credited`. */
  subject: string;
  /** proto3 JSON of the payload message. */
  payload: unknown;
  time: string;
  source: string;
  traceparent?: string;
  /** W3C tracestate, sent with traceparent when present. */
  tracestate?: string;
}

export interface BusOptions {
  url: string;
  namespace: string;
  name: string;
  logger: Logger;
  /** Stream replicas (3 in production). */
  replicas?: number;
}

/** How long a JetStream API call (stream or consumer info, create, update) or a publish's acknowledgement may take. */
export const JETSTREAM_API_TIMEOUT_MS = 15_000;

/**
 * An idempotent JetStream API step (making sure of a stream or a consumer) tried again when it times out, up to 4
 * times: on a cluster a proposal the meta leader lost (an election while every process of a rolling start competes
 * for the CPU) is never answered, and asking again is how it gets through. Any other error is thrown at once.
 */
export async function retriedOnTimeout<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      const e = err as { name?: string; message?: string };
      if (attempt >= 4 || !(e.name === 'TimeoutError' || e.message === 'timeout')) throw err;
      await new Promise((r) => setTimeout(r, 500 * attempt));
    }
  }
}

/**
 * NATS JetStream for the product: namespaced streams (so parallel test runs share one server),
 * publishing with Nats-Msg-Id = event id and CloudEvents headers, durable pull consumers.
 */
export class Bus {
  private constructor(
    readonly nc: NatsConnection,
    readonly js: JetStreamClient,
    readonly jsm: JetStreamManager,
    private readonly opts: BusOptions,
  ) {}

  static async connect(opts: BusOptions): Promise<Bus> {
    // noAsyncTraces: no stack captured per request/publish (the library's measured ~12-15% of the CPU of
    // a JetStream publish or ack; errors then carry the library's frames only).
    const nc = await connect({ servers: opts.url.split(','), name: opts.name, maxReconnectAttempts: -1, reconnectTimeWait: 500, noAsyncTraces: true });
    // JetStream's API calls (streams, consumers) wait up to 15 s, not the library's 5: on a cluster each is a
    // consensus round of the meta group, and at a rolling start every service makes its streams and consumers at
    // once (the fault suite's three-node cluster timed a start out at 5 s, which exits the process).
    const jsm = await retriedOnTimeout(() => jetstreamManager(nc, { timeout: JETSTREAM_API_TIMEOUT_MS }));
    return new Bus(nc, jetstream(nc, { timeout: JETSTREAM_API_TIMEOUT_MS }), jsm, opts);
  }

  subject(s: string): string {
    return this.opts.namespace ? `${this.opts.namespace}.${s}` : s;
  }

  streamName(name: StreamName): string {
    return this.opts.namespace ? `${this.opts.namespace.toUpperCase()}_${name}` : name;
  }

  /** Creates or updates the stream for a domain; idempotent, called by its owner at start. */
  async ensureStream(name: StreamName): Promise<void> {
    const cfg = {
      name: this.streamName(name),
      subjects: [this.subject(`${STREAMS[name]}.>`)],
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      discard: DiscardPolicy.Old,
      max_age: nanos(STREAM_MAX_AGE_MS),
      duplicate_window: nanos(10 * 60 * 1000),
      num_replicas: this.opts.replicas ?? 1,
    };
    await retriedOnTimeout(async () => {
      try {
        await this.jsm.streams.info(cfg.name);
        await this.jsm.streams.update(cfg.name, cfg);
      } catch (err) {
        if ((err as { message?: string }).message?.includes('stream not found') || (err as { code?: string }).code === '404') {
          await this.jsm.streams.add(cfg);
        } else {
          try {
            await this.jsm.streams.add(cfg);
          } catch {
            throw err;
          }
        }
      }
    });
  }

  /** Publishes and waits for the stream's ack; a duplicate id inside the window is dropped by JetStream. */
  async publish(evt: BusEvent): Promise<{ duplicate: boolean; seq: number }> {
    const h = natsHeaders();
    h.set('ce-id', evt.id);
    h.set('ce-type', evt.subject);
    h.set('ce-source', evt.source);
    h.set('ce-time', evt.time);
    h.set('ce-specversion', '1.0');
    h.set('content-type', 'application/json');
    if (evt.traceparent) h.set('traceparent', evt.traceparent);
    if (evt.traceparent && evt.tracestate) h.set('tracestate', evt.tracestate);
    const ack = await this.js.publish(this.subject(evt.subject), JSON.stringify(evt.payload), { msgID: evt.id, headers: h });
    return { duplicate: ack.duplicate, seq: ack.seq };
  }

  /** One filter subject (wildcards allowed): `filter_subjects` needs NATS 2.10 and Debian ships 2.9. */
  async ensureConsumer(stream: StreamName, durable: string, filterSubject: string): Promise<void> {
    const name = this.streamName(stream);
    const cfg = {
      durable_name: durable,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: nanos(30_000),
      max_deliver: -1,
      filter_subject: this.subject(filterSubject),
    };
    await retriedOnTimeout(async () => {
      try {
        await this.jsm.consumers.info(name, durable);
        await this.jsm.consumers.update(name, durable, { filter_subject: cfg.filter_subject, ack_wait: cfg.ack_wait });
      } catch {
        await this.jsm.consumers.add(name, cfg);
      }
    });
  }

  /** Pulls the durable consumer's messages, up to `maxMessages` asked for at a time. */
  async consume(stream: StreamName, durable: string, maxMessages = 64): Promise<ConsumerMessages> {
    const c = await this.js.consumers.get(this.streamName(stream), durable);
    return c.consume({ max_messages: maxMessages });
  }

  /** Strips the namespace off a received subject. */
  localSubject(subject: string): string {
    const ns = this.opts.namespace;
    return ns && subject.startsWith(`${ns}.`) ? subject.slice(ns.length + 1) : subject;
  }

  async ping(): Promise<void> {
    if (this.nc.isClosed()) throw new Error('nats closed');
    await this.nc.flush();
  }

  async close(): Promise<void> {
    if (!this.nc.isClosed()) await this.nc.drain();
  }
}

export type { JsMsg };
