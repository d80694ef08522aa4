import { Migration0001LedgerInitial } from './0001-ledger-initial.js';

/** Every ledger migration, in order. Append only. */
export const ledgerMigrations = [Migration0001LedgerInitial];
