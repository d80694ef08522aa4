import { spawnSync } from 'node:child_process';
import { appendFileSync, chownSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
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

function asPostgres(cmd: string, args: string[]): string {
  const r = spawnSync(asRoot() ? 'runuser' : cmd, asRoot() ? ['-u', 'postgres', '--', cmd, ...args] : args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args[0] ?? ''} failed: ${r.stderr || r.stdout}`);
  return r.stdout;
}

function ownedDirectory(prefix: string): string {
  const data = mkdtempSync(join(tmpdir(), prefix));
  if (asRoot()) {
    const [uid, gid] = ['-u', '-g'].map((f) => Number(spawnSync('id', [f, 'postgres'], { encoding: 'utf8' }).stdout.trim()));
    chownSync(data, uid!, gid!);
  }
  return data;
}

function cluster(port: number, data: string): PgCluster {
  const ctl = (...args: string[]) => asPostgres(pgBin('pg_ctl'), ['-D', data, ...args]);
  return {
    port,
    data,
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    stop: (mode = 'fast') => void ctl('-m', mode, '-w', 'stop'),
    start: () => void ctl('-l', join(data, 'server.log'), '-w', '-t', '60', 'start'),
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

const settings = (port: number, data: string, extra: string[]) =>
  [`port = ${port}`, "listen_addresses = '127.0.0.1'", `unix_socket_directories = '${data}'`, 'max_connections = 50', 'fsync = off', ...extra, ''].join('\n');

/**
 * A primary that can stream to standbys (`wal_level = replica`). `synchronousStandby`: the
 * `application_name` of a standby whose flush every commit waits for (`synchronous_standby_names`,
 * `synchronous_commit = on`); none: asynchronous replication.
 */
export function startPrimary(port: number, o: { synchronousStandby?: string } = {}): PgCluster {
  const data = ownedDirectory('wallet-pg-primary-');
  const c = cluster(port, data);
  try {
    asPostgres(pgBin('initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-sync']);
    appendFileSync(
      join(data, 'postgresql.conf'),
      settings(port, data, [
        'wal_level = replica',
        'max_wal_senders = 5',
        'wal_keep_size = 256MB',
        ...(o.synchronousStandby ? [`synchronous_standby_names = '${o.synchronousStandby}'`, 'synchronous_commit = on'] : []),
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
 */
export function startStandby(primary: PgCluster, port: number, name: string, o: { via?: number } = {}): PgCluster {
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
    // the primary's settings came with the backup: this one's port, and no synchronous standby of its own once promoted
    appendFileSync(join(data, 'postgresql.conf'), settings(port, data, ["synchronous_standby_names = ''", 'hot_standby = on']));
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
