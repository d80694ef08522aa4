import { ConfigError, createLogger, onShutdown, meshTlsFromEnv } from '@wallet/platform';
import { composeDeposit } from './compose.js';
import { loadConfig, type DepositConfig } from './config.js';

// Composition root: config → logger → composeDeposit (db, bus, relay, ledger client, PSE provider, mailer, sweeper, gRPC, ops);
// SIGTERM/SIGINT stop it gracefully (no new calls, in-flight ones finish, sweeper stops, outbox flushed).
let config: DepositConfig;
try {
  config = loadConfig(process.env);
} catch (err) {
  if (err instanceof ConfigError) {
    process.stderr.write(`pse-deposit: ${err.message}\n`);
    process.exit(1);
  }
  throw err;
}
const log = createLogger('pse-deposit', config.LOG_LEVEL);
try {
  const runtime = await composeDeposit({ mesh: meshTlsFromEnv('pse-deposit', process.env), config, opsPort: config.DEPOSIT_OPS_PORT, logger: log });
  onShutdown(log, [['pse-deposit', () => runtime.stop()]], config.SHUTDOWN_GRACE_MS);
} catch (err) {
  log.fatal({ err }, 'pse-deposit failed to start');
  process.exit(1);
}
