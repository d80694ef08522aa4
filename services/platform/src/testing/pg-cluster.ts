import { spawnSync } from 'node:child_process';
import { appendFileSync, chownSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Real PostgreSQL clusters of the machine's own server binaries, made in temporary directories on
 * loopback for tests of what a managed Postgres does to its clients (a primary and a streaming standby,
 * a failover). Trust authentication, loopback only; each removed by `destroy`. As root, the server runs
 * as the `postgres` user (it refuses to run as root).
 */
export interface PgCluster {
  port: number;
  data: string;
  /** `postgresql://postgres@127.0.0.1:<port>/postgres` */
  url: string;
  /** Stops the server: `immediate` is a crash (no shutdown checkpoint, connections cut). */
  stop(mode?: 'fast' | 'immediate'): void;
  start(): void;
  /** A standby made primary (`pg_ctl promote`, waiting until it accepts writes). */
  promote(): void;
  /** Stopped (immediately) and its directory removed. */
  destroy(): void;
}

export function pgBin(name: string): string {
  const versions = readdirSync('/usr/lib/postgresql')
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => Number(b) - Number(a));
  if (versions.length === 0) throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql');
  return join('/usr/lib/postgresql', versions[0]!, 'bin', name);
}

const asRoot = () => process.getuid?.() === 0;

/** Runs a server binary as the `postgres` user when this process is root (the server refuses root), as itself otherwise. */
export function asPostgres(cmd: string, args: string[]): string {
  const r = spawnSync(asRoot() ? 'runuser' : cmd, asRoot() ? ['-u', 'postgres', '--', cmd, ...args] : args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args[0] ?? ''} failed: ${r.stderr || r.stdout}`);
  return r.stdout;
}

/** A new temporary directory the servers' user owns (a data directory, an archive). */
export function ownedDirectory(prefix: string): string {
  const data = mkdtempSync(join(tmpdir(), prefix));
  if (asRoot()) {
    const [uid, gid] = ['-u', '-g'].map((f) => Number(spawnSync('id', [f, 'postgres'], { encoding: 'utf8' }).stdout.trim()));
    chownSync(data, uid!, gid!);
  }
  return data;
}

/** `err` with the server's own reasons, its log's last lines: pg_ctl only says to look there. */
function withServerLog(data: string, err: unknown): Error {
  let tail: string[] = [];
  try {
    tail = readFileSync(join(data, 'server.log'), 'utf8').trimEnd().split('\n').slice(-10);
  } catch {
    /* no log yet */
  }
  return new Error([(err as Error).message.trim(), ...tail].join('\n'), { cause: err });
}

function cluster(port: number, data: string): PgCluster {
  const ctl = (...args: string[]) => asPostgres(pgBin('pg_ctl'), ['-D', data, ...args]);
  return {
    port,
    data,
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    stop: (mode = 'fast') => void ctl('-m', mode, '-w', 'stop'),
    start() {
      try {
        ctl('-l', join(data, 'server.log'), '-w', '-t', '60', 'start');
      } catch (err) {
        throw withServerLog(data, err);
      }
    },
    promote: () => void ctl('-w', '-t', '60', 'promote'),
    destroy() {
      try {
        ctl('-m', 'immediate', '-w', 'stop');
      } catch {
        /* not running */
      }
      rmSync(data, { recursive: true, force: true });
    },
  };
}

/**
 * Removes from a base backup what pg_basebackup copied of the running server because these servers keep it in
 * their data directory: its log, and its socket's lock file, which names its postmaster's pid: a server of the
 * copy on the same port (a standby rebuilt in a crashed primary's place) refuses to start while that pid is
 * alive, or is a zombie not yet reaped ("lock file already exists").
 */
function withoutServerFiles(dir: string): void {
  for (const f of readdirSync(dir)) if (f === 'server.log' || f.startsWith('.s.PGSQL.')) rmSync(join(dir, f));
}

const settings = (port: number, data: string, extra: string[]) =>
  [`port = ${port}`, "listen_addresses = '127.0.0.1'", `unix_socket_directories = '${data}'`, 'max_connections = 50', 'fsync = off', ...extra, ''].join('\n');

/** One value of `sql` run on `c`, as text. */
const psql = (c: PgCluster, sql: string) => asPostgres(pgBin('psql'), ['-X', '-A', '-t', '-q', '-d', c.url, '-c', sql]).trim();

/** Waits (blocking, as pg_ctl does) until `done()`. */
function waitFor(what: string, done: () => boolean, timeoutMs: number): void {
  const until = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > until) throw new Error(`${what}: not within ${timeoutMs} ms`);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
  }
}

/** A WAL archive directory (empty, the servers' user may write it) for `archiveDir`; removed by the caller. */
export function makeArchiveDir(): string {
  return ownedDirectory('wallet-pg-archive-');
}

/**
 * Every server given the archive copies its WAL there, standbys too (`archive_mode = always`): the segments a
 * crashed primary had not archived yet are there after a failover, from its standby. So two servers archive
 * the same file: one already there is success if identical, a failure if not (two histories under one name);
 * a new one is a private copy hard-linked to its name, which appears whole and, unlike a rename, never replaces
 * a file another server put there meanwhile. `archive_timeout = 1s`: the archive alone restores to at most a
 * second ago, and has a failover's last commits (in the new timeline's first segment) a second after the
 * promotion. Each forced switch archives a whole segment: 1 MB segments (`initdb --wal-segsize=1`), not 16 MB
 * of padding a second under load.
 */
const archiving = (dir: string) => [
  'archive_mode = always',
  `archive_command = 'f="${dir}/%f" t="${dir}/.%f.$$"; test -f "$f" && exec cmp -s %p "$f"; cp %p "$t" && { ln "$t" "$f" 2>/dev/null || cmp -s %p "$f"; }; r=$?; rm -f "$t"; exit $r'`,
  "archive_timeout = '1s'",
];

/**
 * A primary that can stream to standbys (`wal_level = replica`). `synchronousStandby`: the
 * `application_name` of a standby whose flush every commit waits for (`synchronous_standby_names`,
 * `synchronous_commit = on`); none: asynchronous replication. `archiveDir`: its WAL archived there
 * (`makeArchiveDir`), for `baseBackup` and `startRestored`.
 */
export function startPrimary(port: number, o: { synchronousStandby?: string; archiveDir?: string } = {}): PgCluster {
  const data = ownedDirectory('wallet-pg-primary-');
  const c = cluster(port, data);
  try {
    asPostgres(pgBin('initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-sync', ...(o.archiveDir ? ['--wal-segsize=1'] : [])]);
    appendFileSync(
      join(data, 'postgresql.conf'),
      settings(port, data, [
        'wal_level = replica',
        'max_wal_senders = 5',
        'wal_keep_size = 256MB',
        ...(o.synchronousStandby ? [`synchronous_standby_names = '${o.synchronousStandby}'`, 'synchronous_commit = on'] : []),
        ...(o.archiveDir ? archiving(o.archiveDir) : []),
      ]),
    );
    appendFileSync(join(data, 'pg_hba.conf'), 'host replication postgres 127.0.0.1/32 trust\n');
    c.start();
    return c;
  } catch (err) {
    c.destroy();
    throw err;
  }
}

/**
 * A hot standby streaming from `primary` (a base backup of it), named `name` to the primary. `via`: the port
 * its replication connection dials instead of the primary's (a proxy that delays or drops the stream).
 * `archiveDir`: it archives the WAL it receives there too (the primary's archive); none: it does not
 * archive, whatever the primary does.
 */
export function startStandby(primary: PgCluster, port: number, name: string, o: { via?: number; archiveDir?: string } = {}): PgCluster {
  const data = ownedDirectory('wallet-pg-standby-');
  const c = cluster(port, data);
  try {
    asPostgres(pgBin('pg_basebackup'), [
      '-D',
      data,
      '-h',
      '127.0.0.1',
      '-p',
      String(primary.port),
      '-U',
      'postgres',
      '-X',
      'stream',
      '-R',
      '--no-sync',
      '--checkpoint=fast',
    ]);
    withoutServerFiles(data);
    // the primary's settings came with the backup: this one's port, and no synchronous standby of its own once promoted
    appendFileSync(
      join(data, 'postgresql.conf'),
      settings(port, data, ["synchronous_standby_names = ''", 'hot_standby = on', ...(o.archiveDir ? archiving(o.archiveDir) : ['archive_mode = off'])]),
    );
    // after what -R wrote (postgresql.auto.conf is read last, its last line wins): named, so the primary can wait for it
    appendFileSync(
      join(data, 'postgresql.auto.conf'),
      `primary_conninfo = 'host=127.0.0.1 port=${o.via ?? primary.port} user=postgres application_name=${name}'\n`,
    );
    c.start();
    return c;
  } catch (err) {
    c.destroy();
    throw err;
  }
}

/**
 * Closes `primary`'s current WAL segment (`pg_switch_wal()`) and waits until it is in `archiveDir`: what was
 * committed before is then restorable from the archive alone. Returns the segment's file name.
 */
export function archiveCurrentWal(primary: PgCluster, archiveDir: string, timeoutMs = 30_000): string {
  const segment = psql(primary, 'select pg_walfile_name(pg_switch_wal())');
  waitFor(`WAL segment ${segment} archived`, () => existsSync(join(archiveDir, segment)), timeoutMs);
  return segment;
}

export interface BaseBackup {
  /** A plain data directory (no WAL of its own: it is restored with the archive's). */
  dir: string;
  /** When pg_basebackup returned: the earliest point in time the backup restores to. */
  endedAt: Date;
}

/**
 * A base backup of `c`, which archives (`archiveDir`), into `dir` (empty, writable by the servers' user; by
 * default a new temporary directory, removed by the caller). `-X none`, the archive's recipe: pg_basebackup
 * then asks the server to wait until the backup's last WAL segment is archived, so the backup is restorable
 * once this returns; a fast checkpoint starts it at once.
 */
export function baseBackup(c: PgCluster, dir = ownedDirectory('wallet-pg-backup-')): BaseBackup {
  asPostgres(pgBin('pg_basebackup'), ['-D', dir, '-h', '127.0.0.1', '-p', String(c.port), '-U', 'postgres', '-X', 'none', '--no-sync', '--checkpoint=fast']);
  withoutServerFiles(dir);
  return { dir, endedAt: new Date() };
}

/**
 * A server restored from a copy of `backup` and the WAL in `archiveDir`, as an operator restores one: to
 * `targetTime` (the transactions committed by then, none after) or to the end of the archive, along the
 * timelines of the failovers since (`targetTimeline`, `latest` by default); then promoted, writable on a
 * timeline of its own. Returns once recovery has ended. Nothing it inherits acts on other servers: it is no
 * one's standby, waits for no synchronous standby, and does not archive (its timeline would go into the
 * archive of the one it was restored from). A target before the backup ended is refused: Postgres cannot roll
 * a backup back, and if nothing committed while the backup was taken it restores the backup's end instead.
 */
export function startRestored(
  backup: BaseBackup,
  archiveDir: string,
  port: number,
  o: { targetTime?: Date | string; targetTimeline?: 'latest' | 'current' | number } = {},
): PgCluster {
  const target = o.targetTime === undefined ? undefined : new Date(o.targetTime);
  if (target && Number.isNaN(target.getTime())) throw new Error(`restore target ${String(o.targetTime)} is not a time`);
  if (target && target < backup.endedAt) {
    throw new Error(`restore target ${target.toISOString()} is before the base backup ended (${backup.endedAt.toISOString()}): restore an earlier backup`);
  }
  const data = ownedDirectory('wallet-pg-restored-');
  const c = cluster(port, data);
  try {
    asPostgres('cp', ['-a', `${backup.dir}/.`, data]);
    rmSync(join(data, 'standby.signal'), { force: true });
    writeFileSync(join(data, 'recovery.signal'), '');
    // postgresql.auto.conf is read last: these win over whatever either file of the backup says
    appendFileSync(
      join(data, 'postgresql.auto.conf'),
      settings(port, data, [
        "primary_conninfo = ''",
        "synchronous_standby_names = ''",
        'archive_mode = off',
        `restore_command = 'cp "${archiveDir}/%f" %p'`,
        `recovery_target_timeline = '${o.targetTimeline ?? 'latest'}'`,
        ...(o.targetTime === undefined
          ? []
          : [
              // UTC as '+00': the server reads this before it knows time zone abbreviations, 'Z' among them
              `recovery_target_time = '${(o.targetTime instanceof Date ? o.targetTime.toISOString() : o.targetTime).replace(/Z$/, '+00')}'`,
              "recovery_target_action = 'promote'",
            ]),
      ]),
    );
    c.start(); // returns once it takes read-only connections, while it still replays the archive
    const recovered = () => {
      // why it stopped is in its log: a target not reached, a segment missing from the archive
      if (!existsSync(join(data, 'postmaster.pid'))) throw withServerLog(data, new Error(`recovery of ${data} failed`));
      try {
        return psql(c, 'select pg_is_in_recovery()') === 'f';
      } catch {
        return false;
      }
    };
    waitFor(`recovery of ${data}`, recovered, 60_000);
    return c;
  } catch (err) {
    c.destroy();
    throw err;
  }
}
