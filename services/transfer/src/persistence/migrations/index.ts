import { Migration0001TransferInitial } from './0001-transfer-initial.js';
import { Migration0002Approvals } from './0002-approvals.js';
import { Migration0003MoneySafeSaga } from './0003-money-safe-saga.js';

/** Every transfer migration, in order. Append only. */
export const transferMigrations = [Migration0001TransferInitial, Migration0002Approvals, Migration0003MoneySafeSaga];
