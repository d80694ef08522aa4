import pg from 'pg';
import { Database, TableCopy, createLogger } from '../../src/index.js';
import { createTestDatabase, eventually, type TestDatabase } from '../../src/testing/index.js';

/**
 * The in-memory copy of a table kept by its change feed (the ledger's fee schedules and the
 * transfer's AML list use it): current after a change by anyone, never a copy read before the last
 * change this replica heard of, no copy while the feed is down or when the loader declines.
 */
describe('TableCopy: a table in memory, kept current by LISTEN/NOTIFY', () => {
  let tdb: TestDatabase;
  let db: Database;
  let sql: pg.Client;
  const log = createLogger('table-copy-test', 'silent');

  beforeAll(async () => {
    tdb = await createTestDatabase('tcopy');
    db = await Database.open({ url: tdb.url, schema: 'public', migrations: [], poolMax: 2, logger: log });
    sql = new pg.Client({ connectionString: tdb.url });
    await sql.connect();
    await sql.query(`create table items (v text primary key)`);
    await sql.query(`create function notify_items() returns trigger language plpgsql as $$ begin perform pg_notify('items_feed', ''); return null; end $$`);
    await sql.query(`create trigger items_change after insert or update or delete or truncate on items for each statement execute function notify_items()`);
  });
  afterAll(async () => {
    await sql.end();
    await db.close();
    await tdb.drop();
  });

  const values = async () => (await db.prepared<{ v: string }>('select v from items order by v')).map((r) => r.v);

  it('loads at start, follows changes by any writer, reads again when a change lands during a load, and has no copy while the feed is down', async () => {
    let loads = 0;
    let pause: Promise<void> | undefined;
    const copy = new TableCopy(db, 'items_feed', async () => {
      loads++;
      const read = await values();
      await pause;
      return read.join(',');
    });
    await sql.query(`insert into items values ('a')`);
    await copy.start(log, 'items');
    try {
      expect(copy.current).toBe('a');
      await sql.query(`insert into items values ('b')`);
      expect(await eventually(async () => copy.current === 'a,b', 3_000, 10)).toBe(true);

      // A change notified while a load is in flight: that load's result is thrown away, read again.
      let release!: () => void;
      pause = new Promise((r) => {
        release = r;
      });
      const before = loads;
      await sql.query(`insert into items values ('c')`);
      await eventually(async () => loads > before, 3_000, 5);
      expect(copy.current).toBeUndefined(); // the old copy is dropped at once
      await sql.query(`insert into items values ('d')`);
      await new Promise((r) => setTimeout(r, 100)); // the second notification arrives during the paused load
      pause = undefined;
      release();
      expect(await eventually(async () => copy.current === 'a,b,c,d', 3_000, 10)).toBe(true);

      // Feed lost: no copy (the caller reads the table) until it is back and reloaded.
      await sql.query(`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and query ilike 'listen items_feed%'`);
      expect(await eventually(async () => copy.current === undefined, 3_000, 10)).toBe(true);
      await sql.query(`delete from items where v = 'a'`);
      expect(await eventually(async () => copy.current === 'b,c,d', 5_000, 20)).toBe(true);
    } finally {
      copy.stop();
    }
    expect(copy.current).toBeUndefined();
  });

  it('keeps no copy when the loader declines (a table too large), and takes one when it fits again', async () => {
    const copy = new TableCopy(db, 'items_feed', async () => {
      const read = await values();
      return read.length > 3 ? undefined : read.length;
    });
    await copy.start(log, 'items');
    try {
      expect(await values()).toHaveLength(3);
      expect(copy.current).toBe(3);
      await sql.query(`insert into items values ('e')`);
      await new Promise((r) => setTimeout(r, 200));
      expect(copy.current).toBeUndefined();
      await sql.query(`delete from items where v = 'e'`);
      expect(await eventually(async () => copy.current === 3, 3_000, 10)).toBe(true);
      // This replica's own write: the copy is dropped at once, before any notification.
      await sql.query(`insert into items values ('f')`);
      copy.wrote();
      expect(copy.current).toBeUndefined();
    } finally {
      copy.stop();
    }
  });
});
