import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { Database, createLogger } from '../../src/index.js';
import { freePort, startPrimary, startStandby, type PgCluster } from '../../src/testing/index.js';

/**
 * A service's database across a failover (issue 45; docs/operations.md "Database failover"): a real
 * primary and a synchronous hot standby of the machine's PostgreSQL, made by the test on loopback, and a
 * `Database` given both hosts (the standby listed first) with `target_session_attrs=read-write`, as
 * CloudNativePG or a managed Postgres hands them out. The primary crashes, the standby is promoted, and
 * the same `Database` goes on: every write acknowledged before the crash is on the new primary, new
 * writes go there, and no statement is ever sent to a host that cannot take it.
 */
const log = createLogger('failover-test', 'silent');
let primary: PgCluster;
let standby: PgCluster;

async function on<T extends pg.QueryResultRow>(c: PgCluster, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: c.url });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

/** Retries `fn` until it succeeds (what every caller of the platform does: relays, consumers, sweepers, clients). */
async function retried<T>(fn: () => Promise<T>, attempts = 200): Promise<{ value: T; failures: string[] }> {
  const failures: string[] = [];
  for (;;) {
    try {
      return { value: await fn(), failures };
    } catch (err) {
      failures.push((err as Error).message);
      if (failures.length >= attempts) throw new Error(`still failing after ${attempts} attempts: ${failures.slice(-3).join(' | ')}`, { cause: err });
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

beforeAll(async () => {
  const [p1, p2] = [await freePort(), await freePort()];
  primary = startPrimary(p1, { synchronousStandby: 'standby_a' });
  standby = startStandby(primary, p2, 'standby_a');
  await retried(async () => {
    const [r] = await on<{ sync_state: string }>(primary, `select sync_state from pg_stat_replication where application_name = 'standby_a'`);
    if (r?.sync_state !== 'sync') throw new Error(`standby ${r?.sync_state ?? 'not connected'}`);
  });
}, 120_000);

afterAll(() => {
  standby?.destroy();
  primary?.destroy();
});

const hosts = (attrs: string) => `postgresql://postgres@127.0.0.1:${standby.port},127.0.0.1:${primary.port}/postgres${attrs}`;

it('without target_session_attrs the first host that answers is used: the standby, which refuses writes', async () => {
  const db = await Database.open({ url: hosts(''), schema: 'failover', migrations: [], logger: log, poolMax: 2 });
  try {
    await expect(db.query('create table failover.refused (id int)')).rejects.toMatchObject({ code: '25006' });
    expect((await db.query<{ standby: boolean }>('select pg_is_in_recovery() as standby'))[0]!.standby).toBe(true);
  } finally {
    await db.close();
  }
});

it('with target_session_attrs=read-write: the primary is found, followed across a crash and a promotion, and a fenced host is left for the one that takes writes', async () => {
  const db = await Database.open({ url: hosts('?target_session_attrs=read-write'), schema: 'failover', migrations: [], logger: log, poolMax: 4 });
  try {
    await db.query('create schema if not exists failover');
    await db.query('create table failover.writes (n int primary key, port int not null default inet_server_port())');
    for (let n = 1; n <= 50; n++) await db.prepared('insert into failover.writes (n) values ($1)', [n]);
    await db.tx(async (tx) => {
      await tx.query('insert into failover.writes (n) values (?)', [51]);
    });
    expect((await db.prepared<{ port: number }>('select distinct port from failover.writes')).map((r) => r.port)).toEqual([primary.port]);

    // the primary crashes (no shutdown checkpoint, connections cut); the synchronous standby is promoted
    primary.stop('immediate');
    standby.promote();
    const after = await retried(() => db.prepared('insert into failover.writes (n) values ($1) on conflict (n) do nothing', [52]));
    // every write acknowledged before the crash is there (synchronous replication), the new ones on the new primary
    const rows = await db.prepared<{ n: number; port: number }>('select n, port from failover.writes order by n');
    expect(rows.map((r) => r.n)).toEqual(Array.from({ length: 52 }, (_, i) => i + 1));
    expect(rows.at(-1)!.port).toBe(standby.port);
    expect(after.failures.length).toBeLessThan(200);
    // a transaction, and a connection of its own (an online index build), go to the new primary as well
    await retried(() =>
      db.tx(async (tx) => {
        await tx.query('insert into failover.writes (n) values (?)', [53]);
      }),
    );
    expect(await db.buildOnlineIndex({ name: 'writes_port_idx', on: 'failover.writes (port)' })).toBe(true);

    // Another host takes writes (the old primary started again on its own: here it stands for whichever host the
    // operator made primary next) and the current one is fenced without closing its sessions (read-only by
    // default). Pooled sessions on the fenced host get their writes refused (25006), are dropped, and the primary
    // is looked for again: writes land on the other host, none on the fenced one.
    appendFileSync(join(primary.data, 'postgresql.auto.conf'), "synchronous_standby_names = ''\n"); // its standby is gone: commits must not wait for it
    primary.start();
    await Promise.all(Array.from({ length: 4 }, () => db.prepared('select pg_sleep(0.05)'))); // the pool's sessions, idle on the current host
    await on(standby, `alter system set default_transaction_read_only = on`);
    await on(standby, `select pg_reload_conf()`);
    // in a transaction: a statement's error there leaves the session to the pool (only the pool's own one-statement
    // queries drop a session that failed), so a fenced session would be reused for ever without the 25006 rule
    const moved = await retried(() =>
      db.tx(async (tx) => {
        await tx.query('create table if not exists failover.moved (n int)'); // the old primary never saw the table
        const [r] = await tx.query<{ port: number }>('insert into failover.moved (n) values (1) returning inet_server_port() as port');
        return r!.port;
      }),
    );
    expect(moved.value).toBe(primary.port);
    expect(moved.failures.some((m) => /read-only transaction/.test(m))).toBe(true); // a pooled session's write refused (25006)
    expect(await on(standby, `select to_regclass('failover.moved') as t`)).toEqual([{ t: null }]);
  } finally {
    await db.close();
  }
}, 120_000);
