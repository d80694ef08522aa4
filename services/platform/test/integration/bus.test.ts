import { randomUUID } from 'node:crypto';
import { Migration } from '@mikro-orm/migrations';
import { headers as natsHeaders } from '@nats-io/transport-node';
import pg from 'pg';
import {
  Bus,
  Database,
  InboxConsumer,
  OutboxRelay,
  appendOutbox,
  createLogger,
  outboxInboxDdl,
  relayLockKey,
  type BatchEventHandler,
  type ReceivedEvent,
} from '../../src/index.js';
import { createTestDatabase, deleteNamespaceStreams, eventually, testNamespace, type TestDatabase } from '../../src/testing/index.js';

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const SCHEMA = 'bus_test';

class CreateTables extends Migration {
  override name = '0001_bus_test';
  override async up(): Promise<void> {
    for (const sql of outboxInboxDdl(SCHEMA)) this.addSql(sql);
    this.addSql(`create table "${SCHEMA}".applied (event_id text primary key, n int not null)`);
  }
}

describe('outbox relay → JetStream → inbox consumer', () => {
  const log = createLogger('bus-test', 'silent');
  let tdb: TestDatabase;
  let db: Database;
  let bus: Bus;
  let relay: OutboxRelay;
  const ns = testNamespace();

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = await Database.open({ url: tdb.url, schema: SCHEMA, migrations: [CreateTables], logger: log });
    await db.migrate();
    bus = await Bus.connect({ url: NATS_URL, namespace: ns, name: 'bus-test', logger: log });
    await bus.ensureStream('LEDGER');
    relay = new OutboxRelay(db, bus, 'bus-test', log, { intervalMs: 50 });
  });

  afterAll(async () => {
    await relay.stop();
    await bus.close();
    await db.close();
    await deleteNamespaceStreams(NATS_URL, ns);
    await tdb.drop();
  });

  it('publishes committed events once, never rolled-back ones, and the consumer applies each once', async () => {
    const seen: ReceivedEvent[] = [];
    const consumer = new InboxConsumer(db, bus, {
      stream: 'LEDGER',
      durable: 'apply',
      subject: 'ledger.>',
      log,
      handler: async (evt, tx) => {
        seen.push(evt);
        await tx.query(`insert into "${SCHEMA}".applied (event_id, n) values (?, 1) on conflict (event_id) do update set n = "${SCHEMA}".applied.n + 1`, [
          evt.id,
        ]);
      },
    });
    await consumer.start();

    const ids: string[] = [];
    await db.tx(async (tx) => {
      for (let i = 0; i < 20; i++) ids.push(await appendOutbox(tx, SCHEMA, { subject: 'ledger.credited', payload: { i } }));
    });
    await expect(
      db.tx(async (tx) => {
        await appendOutbox(tx, SCHEMA, { subject: 'ledger.credited', payload: { rolledBack: true } });
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');

    await relay.flush();
    expect(await relay.pending()).toBe(0);
    await eventually(async () => seen.length >= 20);

    // A re-publish of an already relayed event (crash between publish and mark) is dropped by JetStream.
    const again = await bus.publish({ id: ids[0]!, subject: 'ledger.credited', payload: { i: 0 }, source: 'bus-test', time: new Date().toISOString() });
    expect(again.duplicate).toBe(true);
    // A copy under another Nats-Msg-Id but the same event id is stopped by the inbox.
    const h = natsHeaders();
    h.set('ce-id', ids[1]!);
    await bus.js.publish(bus.subject('ledger.credited'), JSON.stringify({ i: 1 }), { headers: h, msgID: 'other-msg-id' });

    await new Promise((r) => setTimeout(r, 500));
    const applied = await db.query<{ event_id: string; n: number }>(`select event_id, n from "${SCHEMA}".applied`);
    expect(applied).toHaveLength(20);
    expect(applied.every((r) => r.n === 1)).toBe(true);
    expect(new Set(applied.map((r) => r.event_id))).toEqual(new Set(ids));
    expect(seen.some((e) => (e.payload as { rolledBack?: boolean }).rolledBack)).toBe(false);
    expect(seen[0]!.subject).toBe('ledger.credited');
    expect(seen.map((e) => (e.payload as { i: number }).i).slice(0, 20)).toEqual([...Array(20).keys()]);
    await consumer.stop();
  });

  it('redelivers an event whose handler failed and applies it once it succeeds', async () => {
    let attempts = 0;
    const consumer = new InboxConsumer(db, bus, {
      stream: 'LEDGER',
      durable: 'flaky',
      subject: 'ledger.flaky',
      log,
      handler: async (evt, tx) => {
        attempts++;
        await tx.query(`insert into "${SCHEMA}".applied (event_id, n) values (?, 1)`, [`flaky:${evt.id}`]);
        if (attempts < 3) throw new Error('transient');
      },
    });
    await consumer.start();
    await db.tx((tx) => appendOutbox(tx, SCHEMA, { subject: 'ledger.flaky', payload: {} }));
    relay.nudge();
    await eventually(async () => {
      const r = await db.query(`select 1 from "${SCHEMA}".applied where event_id like 'flaky:%'`);
      return r.length === 1;
    }, 15_000);
    expect(attempts).toBe(3);
    await consumer.stop();
  });
  /**
   * 60 events `{ i }` on `subject`, published before `consumer` starts (so they arrive faster than it
   * commits); resolves once its handler has recorded all 60 (`applied` rows `<prefix>:<i>`) and any
   * late redelivery had 300 ms to show.
   */
  async function backlogApplied(consumer: InboxConsumer, subject: string, prefix: string): Promise<void> {
    await db.tx(async (tx) => {
      for (let i = 0; i < 60; i++) await appendOutbox(tx, SCHEMA, { subject, payload: { i } });
    });
    await relay.flush();
    await consumer.start();
    await eventually(async () => {
      const r = await db.query<{ n: string }>(`select count(*) as n from "${SCHEMA}".applied where event_id like ?`, [`${prefix}:%`]);
      return Number(r[0]!.n) === 60;
    }, 15_000);
    await new Promise((r) => setTimeout(r, 300));
  }
  it('applies a backlog in batches (one transaction for several events), in order, and retries only the event that fails', async () => {
    const txOf = new Map<number, object>();
    let poisonAttempts = 0;
    const consumer = new InboxConsumer(db, bus, {
      stream: 'LEDGER',
      durable: 'batched',
      subject: 'ledger.batched',
      log,
      handler: async (evt, tx) => {
        const { i } = evt.payload as { i: number };
        if (i === 17 && ++poisonAttempts < 3) throw new Error('transient');
        await tx.query(`insert into "${SCHEMA}".applied (event_id, n) values (?, 1) on conflict (event_id) do update set n = applied.n + 1`, [`batched:${i}`]);
        txOf.set(i, tx);
      },
    });
    // The backlog is published before the consumer starts, so it arrives faster than it commits.
    await backlogApplied(consumer, 'ledger.batched', 'batched');
    const rows = await db.query<{ event_id: string; n: number }>(`select event_id, n from "${SCHEMA}".applied where event_id like 'batched:%'`);
    expect(rows).toHaveLength(60);
    expect(rows.every((r) => r.n === 1)).toBe(true);
    expect(poisonAttempts).toBe(3);
    // Several events shared a transaction (a batch), and events were applied in stream order within it.
    const sizes = new Map<object, number[]>();
    for (const [i, tx] of txOf) sizes.set(tx, [...(sizes.get(tx) ?? []), i]);
    const batches = [...sizes.values()];
    expect(Math.max(...batches.map((b) => b.length))).toBeGreaterThan(1);
    for (const b of batches) expect(b).toEqual([...b].sort((x, y) => x - y));
    expect((await consumer.lag()).ackPending).toBe(0);
    await consumer.stop();
  });
  it('a batch handler gets the fresh events of a transaction together, in order, never a duplicate; a failing page is applied one event at a time', async () => {
    const pages: number[][] = [];
    let poisonAttempts = 0;
    const write = async (tx: Parameters<BatchEventHandler>[1], evts: ReceivedEvent[]) => {
      for (const evt of evts) {
        await tx.query(`insert into "${SCHEMA}".applied (event_id, n) values (?, 1) on conflict (event_id) do update set n = applied.n + 1`, [
          `paged:${(evt.payload as { i: number }).i}`,
        ]);
      }
    };
    const consumer = new InboxConsumer(db, bus, {
      stream: 'LEDGER',
      durable: 'paged',
      subject: 'ledger.paged',
      log,
      handler: async (evt, tx) => write(tx, [evt]),
      batchHandler: async (evts, tx) => {
        const page = evts.map((e) => (e.payload as { i: number }).i);
        if (page.includes(23) && ++poisonAttempts < 2) throw new Error('transient');
        pages.push(page);
        await write(tx, evts);
      },
    });
    await backlogApplied(consumer, 'ledger.paged', 'paged');
    const rows = await db.query<{ n: number }>(`select n from "${SCHEMA}".applied where event_id like 'paged:%'`);
    expect(rows.every((r) => r.n === 1)).toBe(true);
    expect(Math.max(...pages.map((p) => p.length))).toBeGreaterThan(1);
    for (const p of pages) expect(p).toEqual([...p].sort((x, y) => x - y));
    // every event in exactly one committed page (the failed page's events came again one by one)
    expect(pages.flat().sort((x, y) => x - y)).toEqual(Array.from({ length: 60 }, (_, i) => i));
    expect((await consumer.lag()).ackPending).toBe(0);
    await consumer.stop();
  });
  it('a nudge that finds another replica relaying looks again shortly, not at the next poll', async () => {
    // The suite's relay is stopped; this one's poll never comes during the test: only its nudge and the retry can publish.
    await relay.stop();
    const other = new OutboxRelay(db, bus, 'bus-test', log, { intervalMs: 3_600_000 });
    const holder = new pg.Client({ connectionString: tdb.url });
    await holder.connect();
    try {
      await relay.flush();
      // "Another replica" holds the relay lock, mid-relay.
      await holder.query('begin');
      await holder.query('select pg_advisory_xact_lock($1::bigint)', [relayLockKey(SCHEMA)]);
      let id = '';
      await db.tx(async (tx) => {
        id = await appendOutbox(tx, SCHEMA, { subject: 'ledger.retried', payload: { n: 1 } });
      });
      other.nudge();
      await new Promise((r) => setTimeout(r, 100));
      const unpublished = async () =>
        (await db.query<{ n: number }>(`select count(*)::int as n from "${SCHEMA}".outbox where id = ? and published_at is null`, [id]))[0]!.n;
      expect(await unpublished()).toBe(1); // it could not take the lock
      await holder.query('commit');
      await eventually(async () => (await unpublished()) === 0, 5_000);
    } finally {
      await holder.end();
      await other.stop();
      relay.start();
    }
  });

  it('prunes published rows after the retention, oldest first, and never an unpublished one', async () => {
    const pruner = new OutboxRelay(db, bus, 'bus-test', log, { retentionMs: 60_000 });
    await relay.flush();
    await db.tx(async (tx) => {
      for (let i = 0; i < 30; i++) await appendOutbox(tx, SCHEMA, { subject: 'ledger.pruned', payload: { i } });
    });
    await relay.flush();
    // Age every published row past the retention except the 5 newest; one more row is not published
    // yet (and, being old, would go if unpublished rows were not protected).
    const unpublished = randomUUID();
    await db.query(
      `update "${SCHEMA}".outbox set published_at = now() - interval '2 minutes' where published_at is not null and seq < (select max(seq) - 4 from "${SCHEMA}".outbox)`,
    );
    await db.query(`insert into "${SCHEMA}".outbox (id, subject, payload, created_at) values (?, 'ledger.pruned', '{}', now() - interval '1 hour')`, [
      unpublished,
    ]);
    const [{ old }] = (await db.query<{ old: number }>(
      `select count(*)::int as old from "${SCHEMA}".outbox where published_at < now() - interval '1 minute'`,
    )) as [{ old: number }];
    expect(old).toBeGreaterThanOrEqual(25);
    expect(await pruner.prune()).toBe(old);
    const left = await db.query<{ id: string }>(`select id::text as id from "${SCHEMA}".outbox order by seq`);
    expect(left).toHaveLength(6);
    expect(left.at(-1)!.id).toBe(unpublished);
    expect(await pruner.prune()).toBe(0);
  });
  it("prunes inbox rows past the retention, only its own consumer's", async () => {
    const consumer = new InboxConsumer(db, bus, {
      stream: 'LEDGER',
      durable: 'prune-me',
      subject: 'ledger.prune-me',
      log,
      inboxRetentionMs: 3_600_000,
      handler: async () => {},
    });
    await db.query(
      `insert into "${SCHEMA}".inbox (consumer, event_id, subject, handled_at)
       select c, c || '-' || g, 'ledger.x', now() - (case when g <= 7 then interval '2 hours' else interval '10 minutes' end)
         from generate_series(1, 10) g, unnest(array['prune-me', 'someone-else']) c`,
    );
    expect(await consumer.pruneInbox()).toBe(7);
    const left = await db.query<{ consumer: string; n: number }>(
      `select consumer, count(*)::int as n from "${SCHEMA}".inbox where consumer in ('prune-me', 'someone-else') group by consumer order by consumer`,
    );
    expect(left).toEqual([
      { consumer: 'prune-me', n: 3 },
      { consumer: 'someone-else', n: 10 },
    ]);
    expect(await consumer.pruneInbox()).toBe(0);
  });
});
