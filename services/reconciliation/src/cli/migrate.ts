import { createLogger, Database } from '@wallet/platform';
import { loadConfig } from '../config.js';
import { reconciliationMigrations } from '../persistence/migrations/index.js';
import { RECONCILIATION_SCHEMA } from '../persistence/reconciliation.store.js';

/** `npm run migrate`: applies pending reconciliation migrations (the Helm pre-install/upgrade Job). */
const config = loadConfig(process.env);
const log = createLogger('reconciliation-migrate', config.LOG_LEVEL);
const db = await Database.open({ url: config.DATABASE_URL, schema: RECONCILIATION_SCHEMA, migrations: reconciliationMigrations, logger: log, poolMax: 2 });
if (config.NODE_ENV === 'production') await db.assertLeastPrivilege('migrations');
try {
  const applied = await db.migrate();
  log.info({ applied }, applied.length > 0 ? 'reconciliation migrations applied' : 'reconciliation schema up to date');
} catch (err) {
  log.fatal({ err }, 'reconciliation migration failed');
  process.exitCode = 1;
} finally {
  await db.close();
}
