import { centsFromDb, type Database, type SqlTx } from '@wallet/platform';
import {
  DEPOSIT_FIELDS,
  TRANSACTION_FIELDS,
  type DepositFields,
  type RecordMeta,
  type StoredDeposit,
  type StoredTransaction,
  type TransactionFields,
} from '../domain/records.js';
import type { ReadModelReset, ReadModelTables, ReceiptRecords, RecordTable } from '../app/ports.js';

/** Table, columns and types of one read-model table; camelCase field ↔ snake_case column. */
interface TableDef<F> {
  table: string;
  fields: ReadonlyArray<keyof F>;
  money: ReadonlySet<string>;
  dates: ReadonlySet<string>;
}

const snake = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const META = ['id', 'companyId', 'status', 'statusAt', 'lastEventAt', 'lastEventId'] as const;

export const TRANSACTIONS: TableDef<TransactionFields> = {
  table: 'receipt.transactions',
  fields: TRANSACTION_FIELDS,
  money: new Set(['amount', 'totalFee', 'ivaAmount', 'netAmount']),
  dates: new Set(['createdAt', 'completedAt', 'statusAt', 'lastEventAt']),
};
export const DEPOSITS: TableDef<DepositFields> = {
  table: 'receipt.deposits',
  fields: DEPOSIT_FIELDS,
  money: new Set(['amount', 'feeAmount', 'ivaAmount', 'netAmount']),
  dates: new Set(['providerConfirmedAt', 'expiresAt', 'createdAt', 'statusAt', 'lastEventAt']),
};

function columns<F>(def: TableDef<F>): string[] {
  return [...META, ...(def.fields as readonly string[])];
}

function fromRow<F>(def: TableDef<F>, row: Record<string, unknown>): RecordMeta & F {
  const out: Record<string, unknown> = {};
  for (const k of columns(def)) {
    const v = row[snake(k)];
    if (v === null || v === undefined) out[k] = null;
    else if (def.money.has(k)) out[k] = centsFromDb(v);
    else if (def.dates.has(k)) out[k] = v instanceof Date ? v : new Date(String(v));
    else out[k] = String(v);
  }
  return out as RecordMeta & F;
}

function toParams<F>(def: TableDef<F>, rec: RecordMeta & F): unknown[] {
  return columns(def).map((k) => {
    const v = (rec as Record<string, unknown>)[k];
    if (v === null || v === undefined) return null;
    if (typeof v === 'bigint') return v.toString();
    if (v instanceof Date) return v.toISOString();
    return v;
  });
}

/** A record as one JSON object keyed by column (the row type of its table gives the types back). */
function toJsonRow<F>(def: TableDef<F>, rec: RecordMeta & F): Record<string, unknown> {
  const params = toParams(def, rec);
  return Object.fromEntries(columns(def).map((c, i) => [snake(c), params[i]]));
}

/** Inside the consumer's transaction: the rows of these ids locked for the merge, in id order (one statement). */
export async function lockRecords<F>(tx: SqlTx, def: TableDef<F>, ids: string[]): Promise<Array<RecordMeta & F>> {
  const rows = await tx.query<Record<string, unknown>>(`select * from ${def.table} where id = any($1::text[]) order by id for update`, [[...ids].sort()]);
  return rows.map((r) => fromRow(def, r));
}

/** Inserts new rows (one statement); returns how many were inserted (fewer: another writer inserted some first). */
export async function insertRecords<F>(tx: SqlTx, def: TableDef<F>, recs: Array<RecordMeta & F>): Promise<number> {
  const cols = columns(def).map(snake).join(', ');
  const rows = await tx.query(
    `insert into ${def.table} (${cols}) select ${cols} from jsonb_populate_recordset(null::${def.table}, $1::jsonb)
     on conflict (id) do nothing returning id`,
    [JSON.stringify(recs.map((r) => toJsonRow(def, r)))],
  );
  return rows.length;
}

/** Writes the merged rows back (one statement). */
export async function updateRecords<F>(tx: SqlTx, def: TableDef<F>, recs: Array<RecordMeta & F>): Promise<void> {
  const cols = columns(def)
    .filter((c) => c !== 'id')
    .map(snake);
  await tx.query(
    `update ${def.table} t set ${cols.map((c) => `${c} = r.${c}`).join(', ')}, updated_at = now()
       from jsonb_populate_recordset(null::${def.table}, $1::jsonb) r where t.id = r.id`,
    [JSON.stringify(recs.map((r) => toJsonRow(def, r)))],
  );
}

/** The app's RecordTable over one table's definition. */
class SqlRecordTable<F> implements RecordTable<F> {
  constructor(private readonly def: TableDef<F>) {}
  lock(tx: SqlTx, ids: string[]): Promise<Array<RecordMeta & F>> {
    return lockRecords(tx, this.def, ids);
  }
  insert(tx: SqlTx, recs: Array<RecordMeta & F>): Promise<number> {
    return insertRecords(tx, this.def, recs);
  }
  update(tx: SqlTx, recs: Array<RecordMeta & F>): Promise<void> {
    return updateRecords(tx, this.def, recs);
  }
}

/** The projector's writes (they run in the inbox consumer's transaction: no connection of their own). */
export const sqlReadModelTables: ReadModelTables = {
  transactions: new SqlRecordTable(TRANSACTIONS),
  deposits: new SqlRecordTable(DEPOSITS),
};

/** Reads for the RPCs: a company's record by id (another company's id reads as absent); the rebuild's reset. */
export class SqlReadModelStore implements ReceiptRecords, ReadModelReset {
  constructor(private readonly db: Database) {}

  async transaction(companyId: string, id: string): Promise<StoredTransaction | undefined> {
    const rows = await this.db.prepared<Record<string, unknown>>(`select * from receipt.transactions where id = $1 and company_id = $2`, [id, companyId]);
    return rows[0] ? fromRow(TRANSACTIONS, rows[0]) : undefined;
  }

  async deposit(companyId: string, id: string): Promise<StoredDeposit | undefined> {
    const rows = await this.db.prepared<Record<string, unknown>>(`select * from receipt.deposits where id = $1 and company_id = $2`, [id, companyId]);
    return rows[0] ? fromRow(DEPOSITS, rows[0]) : undefined;
  }

  /** Drops the read model and the given consumers' inbox rows (rebuild). */
  async truncate(consumers: string[]): Promise<void> {
    await this.db.preparedTx(async (tx) => {
      await tx.simple('truncate receipt.transactions, receipt.deposits');
      await tx.query(`delete from receipt.inbox where consumer = any($1::text[])`, [consumers]);
    });
  }
}
