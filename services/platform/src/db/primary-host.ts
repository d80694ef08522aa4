import pg from 'pg';

/** One host of a connection string. */
export interface PgHost {
  host: string;
  port: number;
}

/**
 * A connection string as libpq reads it, several hosts included:
 * `postgresql://user:pass@db-a:5432,db-b:5432/wallet?target_session_attrs=read-write`
 * (the form CloudNativePG, Patroni and managed Postgres give for a primary and its standbys).
 * node-postgres reads one host only (and its URL parser refuses the list), so the list is taken apart
 * here and the host chosen by `PrimaryHost`.
 */
export interface PgTarget {
  /** The hosts, in the order given (libpq's: tried in that order). */
  hosts: PgHost[];
  /**
   * `target_session_attrs`: `read-write` (or `primary`) connects only to a host that takes writes, as
   * libpq does; `any` (the default) to the first host that answers.
   */
  sessionAttrs: 'any' | 'read-write';
  /** The string with the first host only and without `target_session_attrs`: what node-postgres and MikroORM read. */
  firstHostUrl: string;
}

const URL_SHAPE = /^(postgres(?:ql)?:\/\/)([^@/?#]*@)?([^/?#]*)([^?#]*)(\?[^#]*)?$/;

/** Takes a libpq connection URL apart (several hosts, `target_session_attrs`); throws on what is not one. */
export function parsePgUrl(url: string): PgTarget {
  const m = URL_SHAPE.exec(url);
  if (!m) throw new Error('not a postgresql:// connection URL');
  const [, scheme, auth = '', hostList = '', path = '', query = ''] = m;
  const hosts = hostList.split(',').map((h): PgHost => {
    const v6 = /^\[([0-9a-fA-F:.]+)\](?::(\d+))?$/.exec(h);
    const plain = /^([^:[\]]+)(?::(\d+))?$/.exec(h);
    const [host, port] = v6 ? [v6[1]!, v6[2]] : plain ? [plain[1]!, plain[2]] : [undefined, undefined];
    if (!host) throw new Error('a host of the connection URL is empty or malformed');
    const n = port === undefined ? 5432 : Number(port);
    if (!Number.isInteger(n) || n < 1 || n > 65535) throw new Error('a port of the connection URL is out of range');
    return { host, port: n };
  });
  const params = new URLSearchParams(query.slice(1));
  const attrs = params.get('target_session_attrs') ?? 'any';
  if (!['any', 'read-write', 'primary'].includes(attrs))
    throw new Error(`target_session_attrs=${attrs} is not supported (any, read-write or primary: a service writes)`);
  params.delete('target_session_attrs');
  const first = hosts[0]!;
  const rest = params.toString();
  const firstHost = first.host.includes(':') ? `[${first.host}]` : first.host;
  return {
    hosts,
    sessionAttrs: attrs === 'any' ? 'any' : 'read-write',
    firstHostUrl: `${scheme}${auth}${firstHost}:${first.port}${path}${rest ? `?${rest}` : ''}`,
  };
}

/** The host names alone (never the credentials): for logs and errors. */
const named = (h: PgHost) => `${h.host}:${h.port}`;

/** Points a client not yet connected at `h` (node-postgres reads its host and port when it connects). */
function retarget(c: pg.Client, h: PgHost): void {
  const self = c as unknown as { host: string; port: number; connectionParameters: { host: string; port: number } };
  self.host = self.connectionParameters.host = h.host;
  self.port = self.connectionParameters.port = h.port;
}

/** Whether the session accepts writes: not a standby in recovery, not read-only by default (libpq's read-write test). */
async function writable(c: pg.Client): Promise<boolean> {
  const { rows } = await c.query<{ standby: boolean; ro: string }>(
    `select pg_is_in_recovery() as standby, current_setting('default_transaction_read_only') as ro`,
  );
  return rows[0]?.standby === false && rows[0]?.ro === 'off';
}

/**
 * Which of several hosts is the primary, found as libpq's `target_session_attrs=read-write` finds it:
 * each host in order, the first that accepts writes. Remembered until a connection to it fails, ends
 * with an error or finds it read-only (a failover: the old primary is gone or came back as a standby);
 * then the next connection looks again. Concurrent looks are one.
 */
export class PrimaryHost {
  private known: PgHost | undefined;
  private looking: Promise<PgHost> | undefined;

  constructor(
    readonly target: PgTarget,
    /** The connection settings of a probe (credentials, database, TLS); its host is replaced by each one's. */
    private readonly base: pg.ClientConfig,
    private readonly connectTimeoutMs = 3_000,
  ) {}

  /** The host connections go to now (a look through the hosts when none is known). */
  current(): Promise<PgHost> {
    if (this.known) return Promise.resolve(this.known);
    this.looking ??= this.look().finally(() => {
      this.looking = undefined;
    });
    return this.looking;
  }

  /** A connection to `h` failed or found it read-only: the next connection looks again. */
  forget(h: PgHost): void {
    if (this.known && this.known.host === h.host && this.known.port === h.port) this.known = undefined;
  }

  private async look(): Promise<PgHost> {
    const why: string[] = [];
    for (const h of this.target.hosts) {
      const c = new pg.Client({ ...this.base, connectionTimeoutMillis: this.connectTimeoutMs });
      retarget(c, h);
      c.on('error', () => undefined); // a probe's socket error is its failed connect or query, handled below
      try {
        await c.connect();
        if (this.target.sessionAttrs === 'any' || (await writable(c))) {
          this.known = h;
          return h;
        }
        why.push(`${named(h)} is read-only`);
      } catch (err) {
        why.push(`${named(h)}: ${(err as Error).message}`);
      } finally {
        await c.end().catch(() => undefined);
      }
    }
    throw new Error(`no ${this.target.sessionAttrs === 'any' ? 'reachable' : 'writable'} Postgres host (${why.join('; ')})`);
  }

  /**
   * A `pg.Client` class (node-postgres's pool takes it as `Client`) whose connections go to `current()`,
   * check that the host takes writes when `read-write` is asked (one round trip per new connection, as
   * libpq does), and tell `forget` when they fail or are lost.
   */
  clientClass(): typeof pg.Client {
    return followingClient(this);
  }
}

/** The class `PrimaryHost.clientClass` answers. */
function followingClient(primary: PrimaryHost): typeof pg.Client {
  class FollowingClient extends pg.Client {
    private at: PgHost | undefined;

    /**
     * A write refused as read-only (SQLSTATE 25006) on a connection made to the primary: the host was
     * demoted or fenced without closing its sessions. Looked for again, and this connection closed (the
     * pool drops it when it comes back) so that no later statement is sent to it.
     */
    override query(...args: unknown[]): never {
      const out = (super.query as (...a: unknown[]) => unknown)(...args);
      if (out && typeof (out as Promise<unknown>).then === 'function')
        return (out as Promise<unknown>).catch((err: Error & { code?: string }) => {
          if (err.code === '25006' && this.at && primary.target.sessionAttrs === 'read-write') {
            primary.forget(this.at);
            (this as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
          }
          throw err;
        }) as never;
      return out as never;
    }

    override connect(): Promise<pg.Client>;
    override connect(callback: ((err: Error) => void) | ((err: null, c: pg.Client) => void)): void;
    override connect(callback?: ((err: Error) => void) | ((err: null, c: pg.Client) => void)): Promise<pg.Client> | void {
      const done = (async () => {
        const h = await primary.current();
        retarget(this, h);
        try {
          await super.connect();
        } catch (err) {
          primary.forget(h);
          throw err;
        }
        let ok: boolean;
        try {
          ok = primary.target.sessionAttrs === 'any' || (await writable(this));
        } catch (err) {
          primary.forget(h);
          await this.end().catch(() => undefined);
          throw err;
        }
        if (!ok) {
          primary.forget(h);
          await this.end().catch(() => undefined);
          throw new Error(`Postgres host ${named(h)} is read-only (a standby): looking for the primary again`);
        }
        this.at = h;
        // a connection lost (the primary stopped, a failover): look again before the next one
        this.on('error', () => primary.forget(h));
        return this;
      })();
      if (!callback) return done;
      const cb = callback as (err: Error | null, c?: pg.Client) => void;
      done.then(
        (c) => cb(null, c),
        (err: Error) => cb(err),
      );
    }
  }
  return FollowingClient;
}

/** Whether connections to `target` must look for the primary (several hosts, or target_session_attrs=read-write). */
export const followsPrimary = (target: PgTarget): boolean => target.hosts.length > 1 || target.sessionAttrs === 'read-write';

/**
 * A `pg.Client` of its own for a connection URL, several hosts and `target_session_attrs` honoured as a
 * `Database`'s connections honour them (the CLIs that connect without a pool).
 */
export function pgClientFor(url: string, extra: pg.ClientConfig = {}): pg.Client {
  const target = parsePgUrl(url);
  const Client = followsPrimary(target) ? new PrimaryHost(target, { connectionString: target.firstHostUrl }).clientClass() : pg.Client;
  return new Client({ connectionString: target.firstHostUrl, ...extra });
}
