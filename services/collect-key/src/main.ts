import { ConfigError, createLogger, onShutdown, meshTlsFromEnv } from '@wallet/platform';
import { composeCollectKey } from './compose.js';
import { loadConfig, type CollectKeyConfig } from './config.js';

// Composition root: config → logger → composeCollectKey (db, bus, relay, ledger client, directory, sweeper, gRPC, ops);
// SIGTERM/SIGINT stop it gracefully (no new calls, in-flight ones finish, sweeper stops, outbox flushed).
let config: CollectKeyConfig;
try {
  config = loadConfig(process.env);
} catch (err) {
  if (err instanceof ConfigError) {
    process.stderr.write(`collect-key: ${err.message}\n`);
    process.exit(1);
  }
  throw err;
}
const log = createLogger('collect-key', config.LOG_LEVEL);
try {
  const runtime = await composeCollectKey({ mesh: meshTlsFromEnv('collect-key', process.env), config, opsPort: config.COLLECT_KEY_OPS_PORT, logger: log });
  onShutdown(log, [['collect-key', () => runtime.stop()]], config.SHUTDOWN_GRACE_MS);
} catch (err) {
  log.fatal({ err }, 'collect-key failed to start');
  process.exit(1);
}
