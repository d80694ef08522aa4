import type { SqlTx } from '@wallet/platform';
import type { DepositFields, RecordMeta, StoredDeposit, StoredTransaction, TransactionFields } from '../domain/records.js';

/** What the projection and the receipts need from storage (implemented by persistence/read-model.store.ts). */

/** One read-model table as the projector writes it, inside the inbox consumer's open transaction. */
export interface RecordTable<F> {
  /** The rows of these ids locked for the merge, in id order (one statement). */
  lock(tx: SqlTx, ids: string[]): Promise<Array<RecordMeta & F>>;
  /** Inserts new rows (one statement); how many were inserted (fewer: another writer inserted some first). */
  insert(tx: SqlTx, recs: Array<RecordMeta & F>): Promise<number>;
  /** Writes merged rows back (one statement). */
  update(tx: SqlTx, recs: Array<RecordMeta & F>): Promise<void>;
}

/** The read model's two tables. */
export interface ReadModelTables {
  transactions: RecordTable<TransactionFields>;
  deposits: RecordTable<DepositFields>;
}

/** The receipts' reads: a company's record by id (another company's id reads as absent). */
export interface ReceiptRecords {
  transaction(companyId: string, id: string): Promise<StoredTransaction | undefined>;
  deposit(companyId: string, id: string): Promise<StoredDeposit | undefined>;
}

/** The rebuild's first step: drops the read model and the given consumers' inbox rows. */
export interface ReadModelReset {
  truncate(consumers: string[]): Promise<void>;
}
