import { Migration0001SandboxInitial } from './0001-sandbox-initial.js';

/** Every sandbox migration, in order. Append only. */
export const sandboxMigrations = [Migration0001SandboxInitial];
