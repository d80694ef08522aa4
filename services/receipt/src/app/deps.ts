import type { IssuedReceipts, ReadModelReset, ReadModelTables, ReceiptRecords, ReceiptSigner } from './ports.js';

/** What the projection (consumers, rebuild) is built from. */
export interface ProjectionDeps {
  tables: ReadModelTables;
  reset: ReadModelReset;
}

/** What the receipt use cases are built from; `now` (the receipt's generation time) is replaceable in tests. */
export interface ReceiptDeps {
  records: ReceiptRecords;
  /** Every receipt rendered is recorded here before it is returned: what the verification page reads. */
  issued: IssuedReceipts;
  /** RECEIPT_VERIFY_BASE_URL: the verification page the QR points to ('' = none). */
  verifyBaseUrl: string;
  /** Signs every receipt after it is rendered (PAdES). */
  signer: ReceiptSigner;
  now: () => Date;
}

export function receiptDeps(records: ReceiptRecords, issued: IssuedReceipts, verifyBaseUrl: string, signer: ReceiptSigner): ReceiptDeps {
  return { records, issued, verifyBaseUrl, signer, now: () => new Date() };
}
