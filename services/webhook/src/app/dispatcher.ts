import { InboxConsumer, type BatchEventHandler, type Bus, type Database, type EventHandler, type Logger, type StreamName } from '@wallet/platform';
import { mapSourceEvent, type WebhookEvent } from '../domain/event-types.js';
import type { EventRecorder } from './ports.js';

/** Durable consumers: one per stream (NATS 2.9 takes a single filter subject). */
export const CONSUMERS: ReadonlyArray<{ stream: StreamName; durable: string; subject: string }> = [
  { stream: 'TRANSFERS', durable: 'webhook-transfers', subject: 'transfer.>' },
  { stream: 'DEPOSITS', durable: 'webhook-deposits', subject: 'deposit.>' },
  { stream: 'COLLECT_KEYS', durable: 'webhook-collect-keys', subject: 'collectkey.>' },
  // pse-deposit's cobros (docs/cobros.md).
  { stream: 'COBROS', durable: 'webhook-cobros', subject: 'cobro.>' },
  // transfer's counterparties: a payee's verification decided (docs/counterparties.md).
  { stream: 'COUNTERPARTIES', durable: 'webhook-counterparties', subject: 'counterparty.>' },
  // The ledger's events about a company's wallets: a move between its own two (docs/wallet-moves.md).
  { stream: 'WALLETS', durable: 'webhook-wallets', subject: 'wallet.>' },
  { stream: 'SCHEDULES', durable: 'webhook-schedules', subject: 'schedule.>' },
  // The gateway's: changes to a company's security settings (company.security_changed, docs/webhooks.md).
  { stream: 'COMPANIES', durable: 'webhook-companies', subject: 'company.>' },
  // The platform's events (the reconciliation's), for platform endpoints only (docs/webhooks.md "Operators' webhooks").
  { stream: 'RECONCILIATION', durable: 'webhook-reconciliation', subject: 'reconciliation.>' },
];

/**
 * Turns the product's events into webhook deliveries: for each event, its public events and one
 * delivery per subscribed enabled endpoint of the company, written in the InboxConsumer's
 * transaction (inbox row + deliveries commit together, so a redelivered event adds nothing).
 * A payload that does not decode is acknowledged and dropped (logged); a database failure throws
 * so the event is redelivered.
 */
export class Dispatcher {
  private consumers: InboxConsumer[] = [];

  constructor(
    private readonly db: Database,
    private readonly bus: Bus,
    private readonly store: EventRecorder,
    private readonly log: Logger,
    private readonly onDeliveries: () => void,
  ) {}

  /**
   * The InboxConsumer's page of fresh events, in order, in its open transaction: their public events
   * and deliveries written with a constant number of statements (`WebhookStore.recordEvents`).
   * `wrote(n)`: n deliveries were written in the consumer's open transaction.
   */
  batchHandler(wrote: (n: number) => void): BatchEventHandler {
    return async (evts, tx) => {
      const events: WebhookEvent[] = [];
      for (const evt of evts) {
        try {
          events.push(...mapSourceEvent(evt));
        } catch (err) {
          this.log.warn({ eventId: evt.id, subject: evt.subject, err: (err as Error).message }, 'event not turned into webhooks: undecodable payload');
        }
      }
      if (events.length === 0) return;
      const created = await this.store.recordEvents(tx, events);
      this.log.debug({ eventIds: evts.map((e) => e.id), types: events.map((e) => e.type), deliveries: created }, 'webhook events recorded');
      if (created > 0) wrote(created);
    };
  }

  /** One event: the page of one (the InboxConsumer's single-event path, and its fallback when a page fails). */
  handler(wrote: (n: number) => void): EventHandler {
    const batch = this.batchHandler(wrote);
    return (evt, tx) => batch([evt], tx);
  }

  async start(): Promise<void> {
    if (this.consumers.length > 0) return;
    for (const c of CONSUMERS) {
      // Per consumer: deliveries its open transaction wrote; the worker is woken once they are committed.
      let written = 0;
      const wrote = (n: number): void => {
        written += n;
      };
      const handler = this.handler(wrote);
      const batchHandler = this.batchHandler(wrote);
      const afterCommit = (): void => {
        if (written === 0) return;
        written = 0;
        this.onDeliveries();
      };
      await this.bus.ensureStream(c.stream);
      const consumer = new InboxConsumer(this.db, this.bus, {
        stream: c.stream,
        durable: c.durable,
        subject: c.subject,
        handler,
        batchHandler,
        log: this.log,
        afterCommit,
      });
      await consumer.start();
      this.consumers.push(consumer);
    }
  }

  async stop(): Promise<void> {
    const cs = this.consumers;
    this.consumers = [];
    for (const c of cs) await c.stop();
  }

  /** True when every durable consumer has nothing pending or unacknowledged (tests). */
  async idle(): Promise<boolean> {
    for (const c of CONSUMERS) {
      const info = await this.bus.jsm.consumers.info(this.bus.streamName(c.stream), c.durable);
      if (info.num_pending > 0 || info.num_ack_pending > 0) return false;
    }
    return true;
  }
}
