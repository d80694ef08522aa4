import { Migration0001ReceiptInitial } from './0001-receipt-initial.js';

/** Every receipt migration, in order. Append only. */
export const receiptMigrations = [Migration0001ReceiptInitial];
