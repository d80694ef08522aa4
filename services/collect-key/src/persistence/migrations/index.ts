import { Migration0001CollectKeyInitial } from './0001-collect-key-initial.js';

/** Every collect-key migration, in order. Append only. */
export const collectKeyMigrations = [Migration0001CollectKeyInitial];
