import { readerRole } from '@wallet/platform';

/** What the checker needs of a `pg` client (pg.Client or a pooled client). */
export interface SqlClient {
  query<R = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<{ rows: R[]; rowCount: number | null }>;
}

/**
 * One service's read path: its schema's read-only role (`wallet_<schema>_reader`, SELECT only,
 * granted by the service's own migrations). Every statement of a reader runs under that role, so
 * the checker cannot write and cannot read a schema through another service's door.
 */
export interface Reader {
  readonly schema: string;
  query<R = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<R[]>;
}

/**
 * The schemas the checks read. `sandbox` is the development provider: the rails' truth, when present.
 * `reconciliation` (the providers' reports) is optional too: without it the clearing check is not checked.
 */
export type CheckedSchema = 'ledger' | 'transfer' | 'pse_deposit' | 'collect_key' | 'sandbox' | 'reconciliation';

/**
 * Every check of one report reads ONE snapshot: a repeatable-read transaction on one connection,
 * each statement under the role of the schema it reads (`set local role`). A report therefore never
 * sees half of a cross-service step, and a self-test can break an invariant inside the same
 * transaction (as the session user), check, and roll back.
 */
export class Snapshot {
  private readonly readers = new Map<string, Reader>();

  constructor(private readonly client: SqlClient) {}

  /** Opens the snapshot. `readOnly` false only for the self-test, whose sabotage writes (then rolls back). */
  static async begin(client: SqlClient, opts: { readOnly?: boolean } = {}): Promise<Snapshot> {
    await client.query(`begin isolation level repeatable read${opts.readOnly === false ? '' : ' read only'}`);
    return new Snapshot(client);
  }

  async rollback(): Promise<void> {
    await this.client.query('rollback');
  }

  /** As the session user (the self-test's sabotage): never used by a check. */
  async asSessionUser(sql: string): Promise<number> {
    await this.client.query('reset role');
    return (await this.client.query(sql)).rowCount ?? 0;
  }

  /** Which of these schemas exist with their reader role (the sandbox is absent in production), in one query. */
  async installed(schemas: readonly CheckedSchema[]): Promise<Set<CheckedSchema>> {
    const { rows } = await this.client.query<{ schema: CheckedSchema }>(
      `select s.schema from unnest($1::text[], $2::text[]) as s(schema, role)
        where exists (select 1 from pg_namespace where nspname = s.schema) and exists (select 1 from pg_roles where rolname = s.role)`,
      [schemas, schemas.map(readerRole)],
    );
    return new Set(rows.map((r) => r.schema));
  }

  reader(schema: CheckedSchema): Reader {
    let r = this.readers.get(schema);
    if (!r) {
      const role = readerRole(schema);
      const client = this.client;
      r = {
        schema,
        async query<R>(sql: string, params: unknown[] = []): Promise<R[]> {
          await client.query(`set local role "${role}"`);
          try {
            return (await client.query<R>(sql, params)).rows;
          } finally {
            // After a failed statement the transaction is aborted: its own error is the one to report.
            await client.query('reset role').catch(() => undefined);
          }
        },
      };
      this.readers.set(schema, r);
    }
    return r;
  }
}
