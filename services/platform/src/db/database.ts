import { MikroORM, PostgreSqlDriver, type EntityManager, type Options } from '@mikro-orm/postgresql';
import { Migrator, type Migration } from '@mikro-orm/migrations';
import type { Logger } from 'pino';

type MigrationCtor = new (...args: ConstructorParameters<typeof Migration>) => Migration;

export interface DatabaseOptions {
  url: string;
  /** The service's own Postgres schema (habit 8: no cross-schema joins or foreign keys). */
  schema: string;
  migrations: MigrationCtor[];
  entities?: Options['entities'];
  poolMax?: number;
  logger: Logger;
}

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
  private constructor(readonly orm: MikroORM, readonly schema: string) {}

  static async open(opts: DatabaseOptions): Promise<Database> {
    const log = opts.logger;
    const orm = await MikroORM.init({
      driver: PostgreSqlDriver,
      clientUrl: opts.url,
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
    return new Database(orm, opts.schema);
  }

  /** Creates the schema if needed and applies pending migrations; returns the names applied. */
  async migrate(): Promise<string[]> {
    await this.orm.em.getConnection().execute(`create schema if not exists "${this.schema}"`);
    const applied = await this.orm.migrator.up();
    return applied.map((m) => m.name);
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
