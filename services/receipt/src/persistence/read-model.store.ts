import { centsFromDb, type Database, type SqlTx } from '@wallet/platform';
import {
  DEPOSIT_FIELDS, TRANSACTION_FIELDS, type DepositFields, type RecordMeta, type StoredDeposit, type StoredTransaction, type TransactionFields,
} from '../domain/records.js';

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

/** Inside the consumer's transaction: the row locked for the merge, or undefined. */
export async function lockRecord<F>(tx: SqlTx, def: TableDef<F>, id: string): Promise<(RecordMeta & F) | undefined> {
  const row = await tx.one<Record<string, unknown>>(`select * from ${def.table} where id = ? for update`, [id]);
  return row ? fromRow(def, row) : undefined;
}

/** Inserts a new row; false when another writer inserted it first (the caller re-reads and merges). */
export async function insertRecord<F>(tx: SqlTx, def: TableDef<F>, rec: RecordMeta & F): Promise<boolean> {
  const cols = columns(def);
  const rows = await tx.query(
    `insert into ${def.table} (${cols.map(snake).join(', ')}) values (${cols.map(() => '?').join(', ')}) on conflict (id) do nothing returning id`,
    toParams(def, rec));
  return rows.length > 0;
}

export async function updateRecord<F>(tx: SqlTx, def: TableDef<F>, rec: RecordMeta & F): Promise<void> {
  const cols = columns(def).filter((c) => c !== 'id');
  const params = toParams(def, rec);
  await tx.query(
    `update ${def.table} set ${cols.map((c) => `${snake(c)} = ?`).join(', ')}, updated_at = now() where id = ?`,
    [...params.slice(1), params[0]]);
}

/** Reads for the RPCs: a company's record by id (another company's id reads as absent). */
export class ReadModelStore {
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
