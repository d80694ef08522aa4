import { ConfigError, createLogger, onShutdown, meshTlsFromEnv } from '@wallet/platform';
import { composeReconciliation } from './compose.js';
import { loadConfig, type ReconciliationConfig } from './config.js';

// Composition root: config → logger → composeReconciliation (db, bus, relay, report source, our records, ledger,
// gRPC, sweeper, scheduler, ops); SIGTERM/SIGINT stop it gracefully (no new calls, runs under way end, outbox flushed).
let config: ReconciliationConfig;
try {
  config = loadConfig(process.env);
} catch (err) {
  if (err instanceof ConfigError) {
    process.stderr.write(`reconciliation: ${err.message}\n`);
    process.exit(1);
  }
  throw err;
}
const log = createLogger('reconciliation', config.LOG_LEVEL);
try {
  const runtime = await composeReconciliation({
    mesh: meshTlsFromEnv('reconciliation', process.env),
    config,
    opsPort: config.RECONCILIATION_OPS_PORT,
    logger: log,
  });
  onShutdown(log, [['reconciliation', () => runtime.stop()]], config.SHUTDOWN_GRACE_MS);
} catch (err) {
  log.fatal({ err }, 'reconciliation failed to start');
  process.exit(1);
}
