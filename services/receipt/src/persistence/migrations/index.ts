import { Migration0001ReceiptInitial } from './0001-receipt-initial.js';
import { Migration0002TransferBrebKey } from './0002-transfer-breb-key.js';
import { Migration0003InboxHandledAt } from './0003-inbox-handled-at.js';
import { Migration0004TransactionKind } from './0004-transaction-kind.js';
import { Migration0005IssuedReceipts } from './0005-issued-receipts.js';

/** Every receipt migration, in order. Append only. */
export const receiptMigrations = [
  Migration0001ReceiptInitial,
  Migration0002TransferBrebKey,
  Migration0003InboxHandledAt,
  Migration0004TransactionKind,
  Migration0005IssuedReceipts,
];
