import { createLogger, Database } from '@wallet/platform';
import { loadConfig } from '../config.js';
import { COLLECT_KEY_SCHEMA } from '../compose.js';
import { collectKeyMigrations } from '../persistence/migrations/index.js';

/** `npm run migrate`: applies pending collect-key migrations (the Helm pre-install/upgrade Job). */
const config = loadConfig(process.env);
const log = createLogger('collect-key-migrate', config.LOG_LEVEL);
const db = await Database.open({ url: config.DATABASE_URL, schema: COLLECT_KEY_SCHEMA, migrations: collectKeyMigrations, logger: log, poolMax: 2 });
if (config.NODE_ENV === 'production') await db.assertLeastPrivilege('migrations');
try {
  const applied = await db.migrate();
  log.info({ applied }, applied.length > 0 ? 'collect-key migrations applied' : 'collect_key schema up to date');
} catch (err) {
  log.fatal({ err }, 'collect-key migration failed');
  process.exitCode = 1;
} finally {
  await db.close();
}
