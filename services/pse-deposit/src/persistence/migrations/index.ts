import { Migration0001PseDepositInitial } from './0001-pse-deposit-initial.js';

/** Every pse-deposit migration, in order. Append only. */
export const depositMigrations = [Migration0001PseDepositInitial];
