import { createLogger, Database } from '@wallet/platform';
import { loadConfig } from '../config.js';
import { DEPOSIT_SCHEMA } from '../compose.js';
import { depositMigrations, pseDepositOnlineIndexes } from '../persistence/migrations/index.js';

/**
 * `npm run migrate`: applies pending pse-deposit migrations, then builds the online indexes, dropping the ones they
 * replace (the Helm pre-install/upgrade Job).
 */
const config = loadConfig(process.env);
const log = createLogger('pse-deposit-migrate', config.LOG_LEVEL);
const db = await Database.open({
  url: config.DATABASE_URL,
  schema: DEPOSIT_SCHEMA,
  migrations: depositMigrations,
  onlineIndexes: pseDepositOnlineIndexes,
  logger: log,
  poolMax: 2,
});
if (config.NODE_ENV === 'production') await db.assertLeastPrivilege('migrations');
try {
  const applied = await db.migrate();
  log.info({ applied }, applied.length > 0 ? 'pse-deposit migrations applied' : 'pse_deposit schema up to date');
} catch (err) {
  log.fatal({ err }, 'pse-deposit migration failed');
  process.exitCode = 1;
} finally {
  await db.close();
}
