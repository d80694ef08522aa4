import { MikroORM, PostgreSqlDriver, type EntityManager, type Options } from '@mikro-orm/postgresql';
import { Migrator, type Migration } from '@mikro-orm/migrations';
import { createHash } from 'node:crypto';
import pg from 'pg';
import type { Logger } from 'pino';
import { PrimaryHost, followsPrimary, parsePgUrl } from './primary-host.js';

/** The `pg` pool under MikroORM, for statements sent as named prepared statements. */
interface NativeClient {
  query<R>(q: { name: string; text: string; values: unknown[] } | string): Promise<{ rows: R[] }>;
  escapeLiteral(s: string): string;
}
interface NativePool extends NativeClient {
  connect(): Promise<NativeClient & { release(err?: Error | boolean): void }>;
}

/** A Postgres LISTEN held on its own connection (`Database.listen`). */
export interface Listening {
  /** Stops listening and gives the connection back. */
  close(): void;
}

/** A change feed kept up by `Database.watch`. */
export interface Watch {
  /** True from the end of `onUp` until the connection is lost or the watch stopped. */
  readonly up: boolean;
  stop(): void;
}
/** What `releaseDeadConnections` needs of a `pg` pool and its clients. */
interface PatchablePool {
  connect(...args: unknown[]): Promise<PooledClient>;
}
interface PooledClient {
  release(err?: Error | boolean): void;
  once(event: 'end', fn: () => void): unknown;
  removeListener(event: 'end', fn: () => void): unknown;
}

/**
 * Gives a pooled connection back to the pool when its socket ends while it is checked out.
 * Kysely's controlled transactions (under MikroORM's `transactional`) skip the release when
 * ROLLBACK or COMMIT throws (kysely-org/kysely#1990, open in 0.29.6), which is what a dead
 * connection does: each connection Postgres drops in the middle of a transaction (restart,
 * failover, `pg_terminate_backend`) was lost to the pool for good, and once all were lost every
 * transaction waited forever: consumers stalled until the process restarted (found by test/faults).
 * A second release of the same checkout is ignored.
 */
export function releaseDeadConnections(pool: PatchablePool): void {
  const connect = pool.connect.bind(pool);
  pool.connect = async (...args: unknown[]) => {
    if (args.length > 0) return connect(...args); // callback style: not used by Kysely or by this module
    const client = await connect();
    const release = client.release;
    let out = true;
    const onEnd = () => client.release(new Error('connection ended while checked out'));
    client.release = (err?: Error | boolean) => {
      if (!out) return;
      out = false;
      client.removeListener('end', onEnd);
      release.call(client, err);
    };
    client.once('end', onEnd);
    return client;
  };
}

/**
 * A transaction on one pooled connection of the native `pg` pool: `query` sends named prepared
 * statements (`?` or `$n` placeholders), `simple` sends literal SQL (several statements may go in
 * one round trip; only for SQL with no untrusted text, or built with `literal`).
 */
export interface PreparedTx extends SqlTx {
  simple(sql: string): Promise<void>;
  literal(value: string): string;
}

/** Statements inside a transaction, `?` placeholders: what both `Tx` (MikroORM) and `PreparedTx` offer. */
export interface SqlTx {
  query<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  one<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T | undefined>;
}

type MigrationCtor = new (...args: ConstructorParameters<typeof Migration>) => Migration;

export interface DatabaseOptions {
  url: string;
  /** The service's own Postgres schema (habit 8: no cross-schema joins or foreign keys). */
  schema: string;
  migrations: MigrationCtor[];
  entities?: Options['entities'];
  poolMax?: number;
  logger: Logger;
  /**
   * Tables the service's runtime role may only INSERT into and SELECT from (docs/security.md "Database roles": the gateway's
   * audit log and bootstrap mark): `migrate` grants the rest of the schema's DML but not these.
   */
  appendOnlyTables?: readonly string[];
  /**
   * Indexes on existing tables, built online after the migrations (docs/migrations.md: a migration
   * may not build an index on a table that already exists, as it would block writes for the build).
   */
  onlineIndexes?: readonly OnlineIndex[];
}

/**
 * An index built with CREATE INDEX CONCURRENTLY, outside any transaction: writes go on during the
 * build. `name` is unqualified (it lives in the table's schema); `on`: the table and what follows,
 * e.g. `ledger.postings (company_id, created_at) where kind <> 'void'`.
 */
export interface OnlineIndex {
  name: string;
  on: string;
  unique?: boolean;
  /**
   * Indexes of the same table this one makes redundant (unqualified names): dropped concurrently once this
   * one is valid, never before (a plan that needs one of them always has one or the other).
   */
  replaces?: readonly string[];
}

/**
 * The online index builds' advisory lock (one builder at a time across replicas and services sharing a database): a
 * stable 64-bit key.
 */
export const ONLINE_INDEX_LOCK = 0x6f6e6c696e65; // 'online'

/** How long a builder sleeps between two tries of ONLINE_INDEX_LOCK. */
const ONLINE_INDEX_LOCK_POLL_MS = 100;

/** A transaction handle: raw SQL on the transaction's connection, plus its EntityManager. */
export class Tx {
  constructor(readonly em: EntityManager) {}
  query<T = Record<string, unknown>>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    return this.em.getConnection().execute<T[]>(sql, params, 'all', this.em.getTransactionContext());
  }
  async one<T = Record<string, unknown>>(sql: string, params: readonly unknown[] = []): Promise<T | undefined> {
    const rows = await this.query<T>(sql, params);
    return rows[0];
  }
}

export type IsolationLevel = 'read committed' | 'repeatable read' | 'serializable';

/**
 * MikroORM bootstrap for one service: its schema, its migrations (run by the migrate command,
 * or at start in development), a pool, and transactions with raw SQL where a single conditional
 * statement beats read-modify-write (hot balance updates).
 */
export class Database {
  private nativePool: Promise<NativePool> | undefined;
  private readonly statementNames = new Map<string, { text: string; name: string }>();

  private constructor(
    readonly orm: MikroORM,
    readonly schema: string,
    private readonly url: string,
    private readonly appendOnlyTables: readonly string[] = [],
    private readonly onlineIndexes: readonly OnlineIndex[] = [],
    /** The pool's client class when connections follow the primary (several hosts); node-postgres's otherwise. */
    private readonly Client: typeof pg.Client = pg.Client,
  ) {}

  /** A connection of its own, outside the pool, to the same database (the primary's, when several hosts are given). */
  private ownClient(extra: pg.ClientConfig = {}): pg.Client {
    return new this.Client({ connectionString: this.url, ...extra });
  }

  private pool(): Promise<NativePool> {
    this.nativePool ??= (this.orm.em.getConnection() as unknown as { getNativeClient(): Promise<NativePool> }).getNativeClient();
    return this.nativePool;
  }

  /** `?` placeholders → `$n` (SQL already written with `$n` passes as is) and a stable statement name. */
  private statement(sql: string): { text: string; name: string } {
    let st = this.statementNames.get(sql);
    if (!st) {
      let i = 0;
      const text = /\$\d/.test(sql) ? sql : sql.replace(/\?/g, () => `$${++i}`);
      st = { text, name: `${this.schema}_${createHash('sha1').update(text).digest('hex').slice(0, 20)}` };
      if (this.statementNames.size < 1_000) this.statementNames.set(sql, st);
    }
    return st;
  }

  /**
   * A single statement outside a transaction, as a named prepared statement on the pool under
   * MikroORM (planned once per connection; `query` would inline the values and re-plan every call).
   */
  async prepared<T = Record<string, unknown>>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    const { name, text } = this.statement(sql);
    const res = await (await this.pool()).query<T>({ name, text, values: [...params] });
    return res.rows;
  }

  /**
   * A read-committed transaction on one native connection with prepared statements. `begin` is
   * not sent on its own: the first `simple` or `query` call goes after it in the same round trip
   * when it is a `simple` one. Commits when `fn` resolves, rolls back when it throws.
   */
  async preparedTx<T>(fn: (tx: PreparedTx) => Promise<T>): Promise<T> {
    const client = await (await this.pool()).connect();
    let begun = false;
    const tx: PreparedTx = {
      query: async <R>(sql: string, params: readonly unknown[] = []) => {
        if (!begun) {
          await client.query('begin');
          begun = true;
        }
        const { name, text } = this.statement(sql);
        return (await client.query<R>({ name, text, values: [...params] })).rows;
      },
      one: async <R>(sql: string, params: readonly unknown[] = []) => (await tx.query<R>(sql, params))[0],
      simple: async (sql: string) => {
        await client.query(begun ? sql : `begin; ${sql}`);
        begun = true;
      },
      literal: (v: string) => client.escapeLiteral(v),
    };
    try {
      const out = await fn(tx);
      if (begun) await client.query('commit');
      client.release();
      return out;
    } catch (err) {
      try {
        if (begun) await client.query('rollback');
        client.release();
      } catch (e) {
        client.release(e as Error);
      }
      throw err;
    }
  }

  /**
   * LISTEN on `channel` on a connection of its own (outside the pool, so the pool keeps every
   * connection for statements): `onMessage` gets each NOTIFY's payload; `onLost` is called once if
   * the connection fails or ends (the caller decides how to catch up and listen again). Resolves once
   * the LISTEN is in place, so a read made after it cannot miss a change notified after that read.
   */
  async listen(channel: string, onMessage: (payload: string) => void, onLost: (err: Error) => void): Promise<Listening> {
    if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`not a channel name: ${channel}`);
    const client = this.ownClient({ application_name: `${this.schema}-listen` });
    let open = true;
    const lost = (err?: Error) => {
      if (!open) return;
      open = false;
      client.end().catch(() => undefined);
      onLost(err ?? new Error('listening connection ended'));
    };
    client.on('notification', (msg) => {
      if (open && msg.channel === channel) onMessage(msg.payload ?? '');
    });
    client.on('error', lost);
    client.on('end', () => lost());
    try {
      await client.connect();
      await client.query(`listen ${channel}`);
    } catch (err) {
      open = false;
      await client.end().catch(() => undefined);
      throw err;
    }
    return {
      close: () => {
        if (!open) return;
        open = false;
        client.end().catch(() => undefined);
      },
    };
  }

  /**
   * A change feed that keeps itself up: LISTEN on `channel`; once in place, `onUp` runs (the caller
   * reloads what it keeps, so nothing changed before is missed) and only then is the watch `up`. On a
   * lost connection (or a failed start) `onDown` runs and it listens again a second later. Resolves
   * after the first attempt, up or not.
   */
  async watch(channel: string, h: { onMessage(payload: string): void; onUp(): void | Promise<void>; onDown(err: Error): void }): Promise<Watch> {
    let stopped = false;
    let feed: Listening | undefined;
    let timer: NodeJS.Timeout | undefined;
    const retry = (err: Error) => {
      if (stopped) return;
      h.onDown(err);
      timer = setTimeout(() => void attempt(), 1_000);
      timer.unref();
    };
    const attempt = async () => {
      let lost = false;
      let f: Listening | undefined;
      try {
        f = await this.listen(channel, h.onMessage, (err) => {
          lost = true;
          feed = undefined;
          retry(err);
        });
        await h.onUp();
      } catch (err) {
        f?.close();
        if (!lost) retry(err as Error);
        return;
      }
      if (stopped || lost) f.close();
      else feed = f;
    };
    await attempt();
    return {
      get up() {
        return feed !== undefined;
      },
      stop() {
        stopped = true;
        if (timer) clearTimeout(timer);
        feed?.close();
        feed = undefined;
      },
    };
  }

  static async open(opts: DatabaseOptions): Promise<Database> {
    const log = opts.logger;
    // Several hosts, or target_session_attrs=read-write (docs/operations.md "Database failover"): every
    // connection goes to the host that takes writes, found as libpq finds it and looked for again after a failover.
    const target = parsePgUrl(opts.url);
    const Client = followsPrimary(target) ? new PrimaryHost(target, { connectionString: target.firstHostUrl }).clientClass() : undefined;
    const orm = await MikroORM.init({
      driver: PostgreSqlDriver,
      clientUrl: target.firstHostUrl,
      ...(Client ? { driverOptions: { Client } } : {}),
      schema: opts.schema,
      entities: opts.entities ?? [],
      discovery: { warnWhenNoEntities: false },
      extensions: [Migrator],
      pool: { min: 0, max: opts.poolMax ?? 10 },
      migrations: {
        migrationsList: opts.migrations,
        schema: opts.schema,
        tableName: 'mikro_orm_migrations',
        snapshot: false,
        transactional: true,
        allOrNothing: true,
      },
      debug: false,
      logger: (msg: string) => log.debug({ orm: true }, msg),
      allowGlobalContext: false,
    });
    const conn = orm.em.getConnection() as unknown as { getNativeClient(): Promise<PatchablePool> };
    releaseDeadConnections(await conn.getNativeClient());
    return new Database(orm, opts.schema, target.firstHostUrl, opts.appendOnlyTables ?? [], opts.onlineIndexes ?? [], Client);
  }

  /**
   * Creates the schema if needed and applies pending migrations; returns the names applied. Then
   * (re)grants the schema's read-only role (`readerRole`) SELECT on every table: the read path of
   * the cross-service invariant checker (`npm run ledger:check`), which never writes across schemas.
   */
  async migrate(): Promise<string[]> {
    await this.orm.em.getConnection().execute(`create schema if not exists "${this.schema}"`);
    const applied = await this.orm.migrator.up();
    for (const ix of this.onlineIndexes) await this.buildOnlineIndex(ix);
    await this.grantReader();
    await this.grantRuntime();
    return applied.map((m) => m.name);
  }

  /**
   * Builds an index online (CREATE INDEX CONCURRENTLY: writes go on during the build) unless a valid
   * one of that name is there; a build that failed half-way leaves an invalid index, dropped (also
   * concurrently) and built again; then the indexes it `replaces` are dropped concurrently (nothing when
   * they are gone already). On its own connection, under a session advisory lock: replicas starting
   * together build it once. Returns whether it built.
   *
   * The lock is tried, never waited for inside a statement: a statement blocked on it holds a snapshot,
   * and CREATE INDEX CONCURRENTLY waits for every older snapshot in the database, so the holder would wait
   * for the waiter while the waiter waits for the holder ("deadlock detected", one start-up killed).
   * Between tries this connection is idle, outside any transaction.
   */
  async buildOnlineIndex(ix: OnlineIndex): Promise<boolean> {
    for (const name of [ix.name, ...(ix.replaces ?? [])])
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`online index name ${name}: lower case letters, digits and _ only`);
    const c = this.ownClient();
    await c.connect();
    try {
      while (!(await c.query<{ ok: boolean }>('select pg_try_advisory_lock($1::bigint) as ok', [ONLINE_INDEX_LOCK])).rows[0]?.ok)
        await new Promise((r) => setTimeout(r, ONLINE_INDEX_LOCK_POLL_MS));
      const schema = ix.on.trim().match(/^"?([a-z_][a-z0-9_]*)"?\./i)?.[1] ?? this.schema;
      const { rows } = await c.query<{ valid: boolean }>(
        `select i.indisvalid as valid from pg_class x join pg_namespace n on n.oid = x.relnamespace
           join pg_index i on i.indexrelid = x.oid where n.nspname = $1 and x.relname = $2`,
        [schema, ix.name],
      );
      const built = !rows[0]?.valid;
      if (built) {
        if (rows[0]) await c.query(`drop index concurrently if exists "${schema}"."${ix.name}"`);
        await c.query(`create ${ix.unique ? 'unique ' : ''}index concurrently if not exists "${ix.name}" on ${ix.on}`);
      }
      for (const old of ix.replaces ?? []) await c.query(`drop index concurrently if exists "${schema}"."${old}"`);
      return built;
    } finally {
      await c.query('select pg_advisory_unlock($1::bigint)', [ONLINE_INDEX_LOCK]).catch(() => undefined);
      await c.end();
    }
  }

  /**
   * Least privilege (docs/security.md "Database roles"). The role that runs the migrations owns the schema and its
   * objects; the service's processes run as a role that is only a member of `runtimeRole(schema)`
   * (`wallet_<schema>_app`, NOLOGIN): USAGE on its schema, SELECT/INSERT/UPDATE/DELETE on its tables,
   * its sequences and functions — never another schema, never ownership (an owner may disable a
   * trigger or drop a table), never TRUNCATE. `appendOnlyTables` get INSERT and SELECT only. Default
   * privileges cover what later migrations create. Idempotent; serialised like the reader's grants.
   */
  private async grantRuntime(): Promise<void> {
    const role = runtimeRole(this.schema);
    const s = `"${this.schema}"`;
    const appendOnly = this.appendOnlyTables
      .map((t) => {
        if (!/^[a-z_][a-z0-9_]*$/.test(t)) throw new Error(`not a table name: ${t}`);
        return `revoke update, delete, truncate, references, trigger on ${s}."${t}" from "${role}";`;
      })
      .join('\n        ');
    await this.orm.em.getConnection().execute(`do $$ begin
        ${ensureNologinRole(role)}
        grant usage on schema ${s} to "${role}";
        grant select, insert, update, delete on all tables in schema ${s} to "${role}";
        grant usage, select, update on all sequences in schema ${s} to "${role}";
        grant execute on all functions in schema ${s} to "${role}";
        alter default privileges in schema ${s} grant select, insert, update, delete on tables to "${role}";
        alter default privileges in schema ${s} grant usage, select, update on sequences to "${role}";
        alter default privileges in schema ${s} grant execute on functions to "${role}";
        ${appendOnly}
        -- The migration history is the migrations role's alone.
        revoke all on ${s}.mikro_orm_migrations from "${role}";
        grant select on ${s}.mikro_orm_migrations to "${role}";
      end $$`);
  }

  /**
   * Refuses (throws, naming the role and why, never the URL) a production process whose database role
   * could rewrite history: a superuser, a role that bypasses row security or creates roles, and — for a
   * service's `runtime` — a role owning (or able to become the owner of) its schema's objects. The
   * migrations role may own them, never be a superuser.
   */
  async assertLeastPrivilege(kind: 'runtime' | 'migrations'): Promise<void> {
    const [r] = await this.query<{ role: string; superuser: boolean; bypassrls: boolean; createrole: boolean; owns: boolean }>(
      `select r.rolname as role, r.rolsuper as superuser, r.rolbypassrls as bypassrls, r.rolcreaterole as createrole,
              exists (select 1 from pg_class c join pg_namespace n on n.oid = c.relnamespace
                       where n.nspname = ? and pg_has_role(current_user, c.relowner, 'MEMBER'))
              or exists (select 1 from pg_namespace n where n.nspname = ? and pg_has_role(current_user, n.nspowner, 'MEMBER')) as owns
         from pg_roles r where r.rolname = current_user`,
      [this.schema, this.schema],
    );
    const why: string[] = [];
    if (r?.superuser) why.push('is a superuser');
    if (r?.bypassrls) why.push('bypasses row security');
    if (r?.createrole) why.push('may create roles');
    if (kind === 'runtime' && r?.owns) why.push(`owns the "${this.schema}" schema or its tables (only the migrations role may)`);
    if (why.length > 0) {
      throw new Error(
        `database role "${r?.role ?? '?'}" ${why.join(', ')}: in production each process connects as its own role, ` +
          `a member of ${runtimeRole(this.schema)} (see docs/security.md, "Database roles")`,
      );
    }
  }

  /**
   * The role is NOLOGIN (an operator's login is granted membership of it) and cluster-wide, so it
   * is created once and tolerated if another database or replica made it first; the grants are per
   * database. Without CREATEROLE the role must be made by a DBA: logged, not fatal (the service
   * itself does not need it). Serialised by an advisory lock: concurrent GRANTs on one object fail.
   */
  private async grantReader(): Promise<void> {
    const role = readerRole(this.schema);
    const conn = this.orm.em.getConnection();
    await conn.execute(`do $$ begin
        ${ensureNologinRole(role)}
        grant usage on schema "${this.schema}" to "${role}";
        grant select on all tables in schema "${this.schema}" to "${role}";
        alter default privileges in schema "${this.schema}" grant select on tables to "${role}";
      end $$`);
  }

  fork(): EntityManager {
    return this.orm.em.fork() as EntityManager;
  }

  async tx<T>(fn: (tx: Tx) => Promise<T>, opts: { isolation?: IsolationLevel } = {}): Promise<T> {
    const em = this.fork();
    return em.transactional(async (tem) => fn(new Tx(tem as EntityManager)), {
      ...(opts.isolation ? { isolationLevel: opts.isolation as never } : {}),
    });
  }

  /** A statement outside any transaction. */
  query<T = Record<string, unknown>>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    return this.orm.em.getConnection().execute<T[]>(sql, params, 'all');
  }

  async ping(): Promise<void> {
    await this.query('select 1');
  }

  close(): Promise<void> {
    return this.orm.close(true);
  }
}

/**
 * PL/pgSQL (inside a `do` block) that creates a NOLOGIN role once, serialised by an advisory lock
 * (concurrent GRANTs on one object fail); without CREATEROLE it warns and leaves the block (a DBA
 * creates the role).
 */
function ensureNologinRole(role: string): string {
  return `perform pg_advisory_xact_lock(hashtext('wallet reader roles'));
        if not exists (select 1 from pg_roles where rolname = '${role}') then
          begin
            create role "${role}" nologin;
          exception when duplicate_object or unique_violation then null;
                    when insufficient_privilege then raise warning 'cannot create role ${role}: ask a DBA to create it (NOLOGIN)'; return;
          end;
        end if;`;
}

/** The runtime role of a service's schema (DML on its own tables only; docs/security.md "Database roles"): `wallet_<schema>_app`. */
export function runtimeRole(schema: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`not a schema name: ${schema}`);
  return `wallet_${schema}_app`;
}

/** The read-only role of a service's schema (SELECT only): `wallet_<schema>_reader`. */
export function readerRole(schema: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`not a schema name: ${schema}`);
  return `wallet_${schema}_reader`;
}

/** Postgres unique-violation (23505), for idempotent inserts racing each other. */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: string; constraint?: string; cause?: { code?: string; constraint?: string } };
  const code = e?.code ?? e?.cause?.code;
  const name = e?.constraint ?? e?.cause?.constraint;
  return code === '23505' && (constraint === undefined || name === constraint);
}

/** Postgres serialization failure or deadlock: safe to retry the whole transaction. */
export function isRetryableTxError(err: unknown): boolean {
  const e = err as { code?: string; cause?: { code?: string } };
  const code = e?.code ?? e?.cause?.code;
  return code === '40001' || code === '40P01';
}

/**
 * Housekeeping deletes in bounded chunks: `deleteChunk(limit)` deletes at most `limit` rows and
 * returns how many it deleted; it is called again while chunks come back full, up to `maxRows` in
 * all or until `stop()` says so. Returns the total. Short transactions, no long lock on a hot table.
 */
export async function deleteInChunks(
  deleteChunk: (limit: number) => Promise<number>,
  opts: { chunk?: number; maxRows?: number; stop?: () => boolean } = {},
): Promise<number> {
  const chunk = opts.chunk ?? 5_000;
  const maxRows = opts.maxRows ?? 100_000;
  let total = 0;
  while (total < maxRows && !opts.stop?.()) {
    const n = await deleteChunk(chunk);
    total += n;
    if (n < chunk) break;
  }
  return total;
}
