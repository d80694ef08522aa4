import { ConfigError, createLogger, Database } from '@wallet/platform';
import { loadConfig } from '../config.js';
import { GATEWAY_APPEND_ONLY_TABLES, gatewayMigrations } from '../persistence/migrations/index.js';

// Applies the gateway's migrations (schema `gateway`) and exits: the Helm hook / Job and `npm run migrate`.
try {
  const config = loadConfig(process.env);
  const log = createLogger('gateway-migrate', config.logLevel);
  const db = await Database.open({
    url: config.databaseUrl,
    schema: 'gateway',
    migrations: gatewayMigrations,
    logger: log,
    appendOnlyTables: GATEWAY_APPEND_ONLY_TABLES,
  });
  try {
    if (config.nodeEnv === 'production') await db.assertLeastPrivilege('migrations');
    const applied = await db.migrate();
    log.info({ applied }, applied.length ? 'migrations applied' : 'schema up to date');
  } finally {
    await db.close();
  }
} catch (err) {
  process.stderr.write(`gateway migrate: ${err instanceof ConfigError ? err.message : ((err as Error).stack ?? String(err))}\n`);
  process.exit(1);
}
