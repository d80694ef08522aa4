import { createLogger, Database } from '@wallet/platform';
import { loadConfig } from '../config.js';
import { RECEIPT_SCHEMA } from '../compose.js';
import { receiptMigrations } from '../persistence/migrations/index.js';

/** `npm run migrate`: applies pending receipt migrations (the Helm pre-install/upgrade Job). */
const config = loadConfig(process.env, { signing: false }); // migrations sign nothing
const log = createLogger('receipt-migrate', config.LOG_LEVEL);
const db = await Database.open({ url: config.DATABASE_URL, schema: RECEIPT_SCHEMA, migrations: receiptMigrations, logger: log, poolMax: 2 });
if (config.NODE_ENV === 'production') await db.assertLeastPrivilege('migrations');
try {
  const applied = await db.migrate();
  log.info({ applied }, applied.length > 0 ? 'receipt migrations applied' : 'receipt schema up to date');
} catch (err) {
  log.fatal({ err }, 'receipt migration failed');
  process.exitCode = 1;
} finally {
  await db.close();
}
