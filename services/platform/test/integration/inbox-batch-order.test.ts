import { Migration } from '@mikro-orm/migrations';
import { Database, InboxConsumer, createLogger, outboxInboxDdl, type Bus, type ReceivedEvent } from '../../src/index.js';
import { createTestDatabase, type TestDatabase } from '../../src/testing/index.js';

const SCHEMA = 'inbox_order_test';

class CreateTables extends Migration {
  override name = '0001_inbox_order_test';
  override async up(): Promise<void> {
    for (const sql of outboxInboxDdl(SCHEMA)) this.addSql(sql);
  }
}

/** A JetStream message as the consumer reads it: its stream sequence, payload, and what was done with it. */
function message(seq: number, redelivered: boolean, done: string[]) {
  return {
    seq,
    subject: 'ledger.posted',
    redelivered,
    headers: undefined,
    info: { stream: 'LEDGER', deliveryCount: redelivered ? 2 : 1 },
    json: () => ({ n: seq }),
    ack: () => void done.push(`ack ${seq}`),
    nak: () => void done.push(`nak ${seq}`),
    term: () => void done.push(`term ${seq}`),
    working: () => undefined,
  };
}

/** The messages of a pull, handed over by the test: all those pushed in one turn reach the consumer as one read. */
class Pull {
  private readonly items: unknown[] = [];
  private wake: (() => void) | undefined;
  private closed = false;
  push(...ms: unknown[]): void {
    this.items.push(...ms);
    this.wake?.();
  }
  async close(): Promise<void> {
    this.closed = true;
    this.wake?.();
  }
  async *[Symbol.asyncIterator]() {
    for (;;) {
      while (this.items.length) yield this.items.shift();
      if (this.closed) return;
      await new Promise<void>((r) => {
        this.wake = r;
      });
      this.wake = undefined;
    }
  }
}

/**
 * The inbox consumer applies a batch in stream order (docs/events.md): an event handed back (nak) is redelivered
 * after later ones were pulled, and when its redelivery lands in the same batch as them it must be applied first,
 * as it was published first. bus.test.ts sees this only when the timing happens to line up; here the pull is
 * scripted, so the redelivered event 17 arrives after 32 and 33 in one read, every time.
 */
describe('inbox consumer: a batch in stream order', () => {
  const log = createLogger('inbox-order-test', 'silent');
  let tdb: TestDatabase;
  let db: Database;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = await Database.open({ url: tdb.url, schema: SCHEMA, migrations: [CreateTables], logger: log });
    await db.migrate();
  });
  afterAll(async () => {
    await db.close();
    await tdb.drop();
  });

  it('applies a redelivered earlier event before the later ones it arrived after, then acknowledges them all', async () => {
    const pull = new Pull();
    const bus = {
      ensureConsumer: async () => undefined,
      consume: async () => pull,
      localSubject: (s: string) => s,
      streamName: (s: string) => s,
    } as unknown as Bus;
    const applied: number[][] = [];
    const consumer = new InboxConsumer(db, bus, {
      stream: 'LEDGER',
      durable: 'order',
      subject: 'ledger.>',
      log,
      handler: async (evt) => void applied.push([evt.streamSeq]),
      batchHandler: async (evts: ReceivedEvent[]) => void applied.push(evts.map((e) => e.streamSeq)),
    });
    const done: string[] = [];
    await consumer.start();
    pull.push(message(32, false, done), message(33, false, done), message(17, true, done));
    for (let i = 0; i < 200 && done.length < 3; i++) await new Promise((r) => setTimeout(r, 10));
    await consumer.stop();
    expect(applied).toEqual([[17, 32, 33]]);
    expect(done.sort()).toEqual(['ack 17', 'ack 32', 'ack 33']);
  });
});
