import { Migration0001ReconciliationInitial } from './0001-reconciliation-initial.js';

/** Every reconciliation migration, in order. Append only. */
export const reconciliationMigrations = [Migration0001ReconciliationInitial];
