import { createLogger, Database } from '@wallet/platform';
import { loadConfig } from '../config.js';
import { LEDGER_SCHEMA } from '../compose.js';
import { ledgerMigrations, ledgerOnlineIndexes } from '../persistence/migrations/index.js';

/** `npm run migrate`: applies pending ledger migrations, then builds the online indexes (the Helm pre-install/upgrade Job). */
const config = loadConfig(process.env);
const log = createLogger('ledger-migrate', config.LOG_LEVEL);
const db = await Database.open({
  url: config.DATABASE_URL,
  schema: LEDGER_SCHEMA,
  migrations: ledgerMigrations,
  onlineIndexes: ledgerOnlineIndexes,
  logger: log,
  poolMax: 2,
});
if (config.NODE_ENV === 'production') await db.assertLeastPrivilege('migrations');
try {
  const applied = await db.migrate();
  log.info({ applied }, applied.length > 0 ? 'ledger migrations applied' : 'ledger schema up to date');
} catch (err) {
  log.fatal({ err }, 'ledger migration failed');
  process.exitCode = 1;
} finally {
  await db.close();
}
