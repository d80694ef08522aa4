import { createLogger, Database } from '@wallet/platform';
import { loadConfig } from '../config.js';
import { WEBHOOK_SCHEMA } from '../compose.js';
import { webhookMigrations } from '../persistence/migrations/index.js';

/** `npm run migrate`: applies pending webhook migrations (the Helm pre-install/upgrade Job). */
const config = loadConfig(process.env);
const log = createLogger('webhook-migrate', config.LOG_LEVEL);
const db = await Database.open({ url: config.DATABASE_URL, schema: WEBHOOK_SCHEMA, migrations: webhookMigrations, logger: log, poolMax: 2 });
if (config.NODE_ENV === 'production') await db.assertLeastPrivilege('migrations');
try {
  const applied = await db.migrate();
  log.info({ applied }, applied.length > 0 ? 'webhook migrations applied' : 'webhook schema up to date');
} catch (err) {
  log.fatal({ err }, 'webhook migration failed');
  process.exitCode = 1;
} finally {
  await db.close();
}
