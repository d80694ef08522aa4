import { ConfigError, createLogger, onShutdown, meshTlsFromEnv } from '@wallet/platform';
import { composeTransfer } from './compose.js';
import { loadConfig, type TransferConfig } from './config.js';

// Composition root: config → logger → composeTransfer (db, bus, relay, ledger client, providers, sweeper, gRPC, ops);
// SIGTERM/SIGINT stop it gracefully (no new calls, in-flight ones finish, sweeper stops, outbox flushed).
let config: TransferConfig;
try {
  config = loadConfig(process.env);
} catch (err) {
  if (err instanceof ConfigError) {
    process.stderr.write(`transfer: ${err.message}\n`);
    process.exit(1);
  }
  throw err;
}
const log = createLogger('transfer', config.LOG_LEVEL);
try {
  const runtime = await composeTransfer({ mesh: meshTlsFromEnv('transfer', process.env), config, opsPort: config.TRANSFER_OPS_PORT, logger: log });
  onShutdown(log, [['transfer', () => runtime.stop()]], config.SHUTDOWN_GRACE_MS);
} catch (err) {
  log.fatal({ err }, 'transfer failed to start');
  process.exit(1);
}
