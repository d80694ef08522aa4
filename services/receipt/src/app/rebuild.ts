import { InboxConsumer, type Bus, type Database, type Logger } from '@wallet/platform';
import type { ProjectionDeps } from './deps.js';
import { CONSUMERS, depositHandler, depositPageHandler, transferHandler, transferPageHandler } from './projector.js';

/** The two durable consumers feeding the read model, startable, stoppable and rebuildable. */
export class Projection {
  private consumers: InboxConsumer[] = [];

  constructor(
    private readonly db: Database,
    private readonly bus: Bus,
    private readonly deps: ProjectionDeps,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    if (this.consumers.length > 0) return;
    // The streams belong to the transfer and deposit services, but this one may start first.
    await this.bus.ensureStream('TRANSFERS');
    await this.bus.ensureStream('DEPOSITS');
    const logs = { TRANSFERS: this.log.child({ component: 'transfers' }), DEPOSITS: this.log.child({ component: 'deposits' }) };
    const { transactions, deposits } = this.deps.tables;
    const handlers = { TRANSFERS: transferHandler(transactions, logs.TRANSFERS), DEPOSITS: depositHandler({ deposits, transactions }, logs.DEPOSITS) };
    // A page of events at once (a few statements per page, not per event); one by one when a page fails.
    const pages = { TRANSFERS: transferPageHandler(transactions, logs.TRANSFERS), DEPOSITS: depositPageHandler({ deposits, transactions }, logs.DEPOSITS) };
    for (const c of CONSUMERS) {
      const consumer = new InboxConsumer(this.db, this.bus, {
        stream: c.stream,
        durable: c.durable,
        subject: c.subject,
        handler: handlers[c.stream],
        batchHandler: pages[c.stream],
        log: this.log,
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

  /** True when both durable consumers have nothing pending or unacknowledged. */
  async idle(): Promise<boolean> {
    for (const c of CONSUMERS) {
      const info = await this.bus.jsm.consumers.info(this.bus.streamName(c.stream), c.durable);
      if (info.num_pending > 0 || info.num_ack_pending > 0) return false;
    }
    return true;
  }

  async waitIdle(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await this.idle())) {
      if (Date.now() > deadline) throw new Error(`receipt projection not caught up within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /**
   * Drops and rebuilds the read model: stops the consumers, truncates the tables and this
   * projection's inbox rows, deletes the durable consumers, recreates them (deliver all) so both
   * streams replay from the start, and waits until they caught up.
   */
  async rebuild(timeoutMs = 120_000): Promise<void> {
    this.log.info('receipt read model rebuild: dropping');
    await this.stop();
    await this.deps.reset.truncate(CONSUMERS.map((c) => c.durable));
    for (const c of CONSUMERS) {
      try {
        await this.bus.jsm.consumers.delete(this.bus.streamName(c.stream), c.durable);
      } catch (err) {
        if (!/consumer not found|not found/i.test((err as Error).message)) throw err;
      }
    }
    await this.start();
    await this.waitIdle(timeoutMs);
    this.log.info('receipt read model rebuilt from the streams');
  }
}
