import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import {
  archiveCurrentWal,
  baseBackup,
  freePort,
  makeArchiveDir,
  startPrimary,
  startRestored,
  startStandby,
  type BaseBackup,
  type PgCluster,
} from '../../src/testing/index.js';

/**
 * Backups that restore (issue 45): a base backup plus the WAL archive, restored to a point in time. A real
 * primary and a synchronous standby, both archiving into one archive; a base backup of the primary on timeline
 * 1; rows committed, a failover (the primary crashes, the standby is promoted: timeline 2), more rows, a
 * standby rebuilt from the new primary in the old one's place and a second failover to it (timeline 3), more
 * rows, as the fault suite does. Restored from the backup and the archive alone: to the end, every committed
 * row; to a time between two batches, exactly the rows committed before it, on whichever timeline it falls.
 */
let archive: string;
let primary: PgCluster;
let standby: PgCluster;
let backup: BaseBackup;
const restored: PgCluster[] = [];
/** The server's clock (text, to the microsecond) between batches: `beforeBackup` before row 1 and the backup. */
const at: { beforeBackup?: string; timeline1?: string; timeline2?: string } = {};

async function on<T extends pg.QueryResultRow>(c: PgCluster, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: c.url });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

/** Rows `from`..`to`, one transaction each (a commit record each, with its time). */
async function commit(c: PgCluster, from: number, to: number): Promise<void> {
  for (let id = from; id <= to; id++) await on(c, 'insert into restored_rows (id) values ($1)', [id]);
}

const now = async (c: PgCluster) => (await on<{ t: string }>(c, 'select clock_timestamp()::text as t'))[0]!.t;
const timeline = async (c: PgCluster) => (await on<{ tli: string }>(c, 'select substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8) as tli'))[0]!.tli;
const rows = (c: PgCluster) => on<{ id: number; committed_at: string }>(c, 'select id, committed_at::text from restored_rows order by id');
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

async function synchronous(c: PgCluster, name: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const [r] = await on<{ sync_state: string }>(c, `select sync_state from pg_stat_replication where application_name = $1`, [name]);
    if (r?.sync_state === 'sync') return;
    if (attempt > 200) throw new Error(`standby ${name} ${r?.sync_state ?? 'not connected'}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function restore(o: Parameters<typeof startRestored>[3] = {}, from = backup): Promise<PgCluster> {
  const c = startRestored(from, archive, await freePort(), o);
  restored.push(c);
  return c;
}

beforeAll(async () => {
  archive = makeArchiveDir();
  const [p1, p2] = [await freePort(), await freePort()];
  primary = startPrimary(p1, { synchronousStandby: 'standby_a', archiveDir: archive });
  standby = startStandby(primary, p2, 'standby_a', { archiveDir: archive });
  await synchronous(primary, 'standby_a');
  await on(primary, 'create table restored_rows (id int primary key, committed_at timestamptz not null default clock_timestamp())');
  at.beforeBackup = await now(primary);
  await commit(primary, 1, 1);
  backup = baseBackup(primary);
  expect(await timeline(primary)).toBe('00000001');

  await commit(primary, 2, 10);
  at.timeline1 = await now(primary);
  await commit(primary, 11, 20);

  // the primary crashes, its synchronous standby is promoted: timeline 2
  primary.stop('immediate');
  standby.promote();
  [primary, standby] = [standby, primary];
  expect(await timeline(primary)).toBe('00000002');
  await commit(primary, 21, 30);
  at.timeline2 = await now(primary);
  // a standby rebuilt from the new primary in the old one's place, synchronous once it streams
  standby.destroy();
  standby = startStandby(primary, standby.port, 'standby_a', { archiveDir: archive });
  await on(primary, `alter system set synchronous_standby_names = 'standby_a'`);
  await on(primary, 'select pg_reload_conf()');
  await synchronous(primary, 'standby_a');
  await commit(primary, 31, 40);

  // and again: timeline 3, its primary alone
  primary.stop('immediate');
  standby.promote();
  [primary, standby] = [standby, primary];
  standby.destroy();
  expect(await timeline(primary)).toBe('00000003');
  await commit(primary, 41, 50);
}, 120_000);

afterEach(() => {
  for (const c of restored.splice(0)) c.destroy();
});

afterAll(() => {
  standby?.destroy();
  primary?.destroy();
  if (backup) rmSync(backup.dir, { recursive: true, force: true });
  if (archive) rmSync(archive, { recursive: true, force: true });
});

it('restored to the end of the archive: every committed row of the three timelines, and writable on a timeline of its own', async () => {
  archiveCurrentWal(primary, archive); // the current segment closed and archived: every commit so far is in the archive
  const live = await rows(primary);
  expect(live.map((r) => r.id)).toEqual(range(1, 50));
  for (const history of ['00000002.history', '00000003.history']) expect(existsSync(join(archive, history))).toBe(true);

  const copy = await restore();
  expect(await rows(copy)).toEqual(live);
  await on(copy, 'insert into restored_rows (id) values (51)');
  expect(await timeline(copy)).toBe('00000004');
  // it does not archive: its timeline is its own, not the archive's
  expect(existsSync(join(archive, '00000004.history'))).toBe(false);
}, 60_000);

it.each([
  ['before the first failover, on the backup’s timeline', 'timeline1', 10],
  ['after the first failover, on the timeline it started', 'timeline2', 30],
] as const)(
  'restored to a time %s: exactly the rows committed before it, none after, and writable',
  async (_, name, last) => {
    const target = at[name]!;
    const live = await rows(primary);
    expect(live[last - 1]!.committed_at < target && target < live[last]!.committed_at).toBe(true); // between rows `last` and `last + 1`
    const copy = await restore({ targetTime: target });
    expect(await rows(copy)).toEqual(live.slice(0, last));
    await on(copy, 'insert into restored_rows (id) values (51)');
    expect(await on(copy, 'select pg_is_in_recovery() as r')).toEqual([{ r: false }]);
  },
  60_000,
);

it('a target past the end of the archive fails: Postgres will not promote a copy short of its target', async () => {
  const future = new Date(Date.now() + 3_600_000);
  await expect(restore({ targetTime: future })).rejects.toThrow(/recovery ended before configured recovery target was reached/);
}, 60_000);

it('a target before the base backup ended is refused; Postgres itself would restore the end of the backup instead', async () => {
  await expect(restore({ targetTime: at.beforeBackup })).rejects.toThrow(/is before the base backup ended/);
  // Postgres stops at the first commit after the target once the backup is consistent (it cannot roll a backup
  // back): with no commit while the backup was taken, row 1, committed after the target and before the backup,
  // is there. (A commit during the backup would make it fail: "requested recovery stop point is before
  // consistent recovery point".)
  const copy = await restore({ targetTime: at.beforeBackup }, { ...backup, endedAt: new Date(0) });
  expect((await rows(copy)).map((r) => r.id)).toEqual([1]);
}, 60_000);
