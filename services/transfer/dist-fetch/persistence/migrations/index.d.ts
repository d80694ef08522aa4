import { Migration0001TransferInitial } from './0001-transfer-initial.js';
/** Every transfer migration, in order. Append only. */
export declare const transferMigrations: (typeof Migration0001TransferInitial)[];
