import { createLogger, Database } from '@wallet/platform';
import { loadConfig } from '../config.js';
import { SANDBOX_SCHEMA } from '../compose.js';
import { sandboxMigrations } from '../persistence/migrations/index.js';

/** `npm run migrate`: applies pending sandbox migrations. */
const config = loadConfig(process.env);
const log = createLogger('sandbox-migrate', config.LOG_LEVEL);
const db = await Database.open({ url: config.DATABASE_URL, schema: SANDBOX_SCHEMA, migrations: sandboxMigrations, logger: log, poolMax: 2 });
try {
  const applied = await db.migrate();
  log.info({ applied }, applied.length > 0 ? 'sandbox migrations applied' : 'sandbox schema up to date');
} catch (err) {
  log.fatal({ err }, 'sandbox migration failed');
  process.exitCode = 1;
} finally {
  await db.close();
}
