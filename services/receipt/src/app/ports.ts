import type { SqlTx } from '@wallet/platform';
import type { DepositFields, RecordMeta, StoredDeposit, StoredTransaction, TransactionFields } from '../domain/records.js';
import type { ReceiptSummary } from '../domain/receipt-view.js';

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

/**
 * Signs a rendered receipt (implemented by adapters/pades-signer.ts: PAdES, the key configured in
 * RECEIPT_SIGNING_P12_FILE). `at` is the signing time written in the signature; `reason` its reason.
 */
export interface ReceiptSigner {
  sign(pdf: Buffer, o: { at: Date; reason: string }): Promise<Buffer>;
  /** The signing certificate: its subject's common name and SHA-256 fingerprint (`AA:BB:…`, as OpenSSL prints it). */
  readonly certificate: { name: string; sha256: string };
}

/** A receipt as it was issued: its number, content hash and signer, whose operation, and what it showed. */
export interface IssuedReceipt {
  receiptNumber: string;
  sha256: string;
  signerSha256: string;
  signerName: string;
  kind: 'TRANSACTION' | 'DEPOSIT';
  /** The transaction's UUID or the deposit's id. */
  subjectId: string;
  companyId: string;
  summary: ReceiptSummary;
}

/**
 * The receipts issued (persistence/issued-receipts.store.ts, table receipt.issued_receipts), kept
 * apart from the read model: a rebuild never drops them.
 */
export interface IssuedReceipts {
  /** Records an issue; the same number, hash and signer again is a no-op (one statement). */
  record(r: IssuedReceipt): Promise<void>;
  /** The issues of this number whose hash starts with `hashPrefix` (16 lowercase hex), oldest first. */
  find(receiptNumber: string, hashPrefix: string): Promise<Array<IssuedReceipt & { firstIssuedAt: Date }>>;
}
