import type { ReadModelReset, ReadModelTables, ReceiptRecords } from './ports.js';

/** What the projection (consumers, rebuild) is built from. */
export interface ProjectionDeps {
  tables: ReadModelTables;
  reset: ReadModelReset;
}

/** What the receipt use cases are built from; `now` (the receipt's generation time) is replaceable in tests. */
export interface ReceiptDeps {
  records: ReceiptRecords;
  /** RECEIPT_VERIFY_BASE_URL: the verification page the QR points to ('' = none). */
  verifyBaseUrl: string;
  now: () => Date;
}

export function receiptDeps(records: ReceiptRecords, verifyBaseUrl: string): ReceiptDeps {
  return { records, verifyBaseUrl, now: () => new Date() };
}
