import { createLogger, Database } from '@wallet/platform';
import { loadConfig } from '../config.js';
import { TRANSFER_SCHEMA } from '../compose.js';
import { TransferDataProtection } from '../persistence/data-protection.js';
import { transferMigrations, transferOnlineIndexes } from '../persistence/migrations/index.js';

/** `npm run migrate`: applies pending transfer migrations (the Helm pre-install/upgrade Job). */
const config = loadConfig(process.env);
const log = createLogger('transfer-migrate', config.LOG_LEVEL);
const db = await Database.open({
  url: config.DATABASE_URL,
  schema: TRANSFER_SCHEMA,
  migrations: transferMigrations(new TransferDataProtection(config.TRANSFER_DATA_KEY)),
  onlineIndexes: transferOnlineIndexes,
  logger: log,
  poolMax: 2,
});
if (config.NODE_ENV === 'production') await db.assertLeastPrivilege('migrations');
try {
  const applied = await db.migrate();
  log.info({ applied }, applied.length > 0 ? 'transfer migrations applied' : 'transfer schema up to date');
} catch (err) {
  log.fatal({ err }, 'transfer migration failed');
  process.exitCode = 1;
} finally {
  await db.close();
}
