import pg from 'pg';
import { Database, createLogger } from '../../src/index.js';
import { createTestDatabase, eventually, type TestDatabase } from '../../src/testing/index.js';

const ADMIN_URL = process.env.TEST_DATABASE_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

/** `p`, or undefined after `ms`; the timer is cleared either way (a pending one kept Jest's worker from exiting). */
async function within<T>(ms: number, p: Promise<T>): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<undefined>((r) => {
        timer = setTimeout(() => r(undefined), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Postgres drops every connection of the database (restart, failover, pg_terminate_backend) while
 * transactions are in flight. Before the fix, a connection lost in the middle of a MikroORM
 * transaction never went back to the pool (the ROLLBACK fails and Kysely skips the release), so
 * with a pool of 2 every later transaction waited forever (found by the fault suite, test/faults).
 */
describe('database: connections cut in the middle of transactions', () => {
  let tdb: TestDatabase;
  let db: Database;
  const admin = new pg.Client({ connectionString: ADMIN_URL });

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = await Database.open({ url: tdb.url, schema: 'public', migrations: [], poolMax: 2, logger: createLogger('db-test', 'silent') });
    await admin.connect();
  });
  afterAll(async () => {
    await admin.end();
    await db.close();
    await tdb.drop();
  });

  const cut = () => admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [tdb.name]);

  it.each(['tx', 'preparedTx'] as const)(
    '%s keeps working after the pool lost its connections mid-transaction',
    async (kind) => {
      let stop = false;
      let failures = 0;
      const run = () =>
        kind === 'tx'
          ? db.tx(async (tx) => {
              await tx.query('select pg_sleep(0.05)');
              await tx.query('select 1');
            })
          : db.preparedTx(async (tx) => {
              await tx.query('select pg_sleep(0.05)');
              await tx.query('select 1');
            });
      const one = () =>
        kind === 'tx'
          ? db.tx(async (tx) => tx.query<{ one: number }>('select 1 as one'))
          : db.preparedTx(async (tx) => tx.query<{ one: number }>('select 1 as one'));
      const loops = Array.from({ length: 4 }, async () => {
        while (!stop) {
          try {
            await run();
          } catch {
            failures++;
          }
        }
      });
      for (let i = 0; i < 3; i++) {
        await new Promise((r) => setTimeout(r, 200));
        await cut();
      }
      stop = true;
      await within(10_000, Promise.all(loops));
      expect(failures).toBeGreaterThan(0); // the cuts did hit transactions in flight
      // Both pooled connections are usable again: two transactions at once complete.
      const [a, b] = await eventually(async () => within(2_000, Promise.all([one(), one()])).catch(() => undefined), 10_000, 200);
      expect(a[0]!.one).toBe(1);
      expect(b[0]!.one).toBe(1);
    },
    30_000,
  );
});
