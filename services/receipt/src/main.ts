import { ConfigError, createLogger, onShutdown, meshTlsFromEnv } from '@wallet/platform';
import { composeReceipt } from './compose.js';
import { loadConfig, type ReceiptConfig } from './config.js';

// Composition root: config → logger → composeReceipt (db, bus, projection consumers, gRPC, ops);
// SIGTERM/SIGINT stop it gracefully (no new calls, in-flight ones and the event being applied finish).
let config: ReceiptConfig;
try {
  config = loadConfig(process.env);
} catch (err) {
  if (err instanceof ConfigError) {
    process.stderr.write(`receipt: ${err.message}\n`);
    process.exit(1);
  }
  throw err;
}
const log = createLogger('receipt', config.LOG_LEVEL);
try {
  const runtime = await composeReceipt({ mesh: meshTlsFromEnv('receipt', process.env), config, opsPort: config.RECEIPT_OPS_PORT, logger: log });
  onShutdown(log, [['receipt', () => runtime.stop()]], config.SHUTDOWN_GRACE_MS);
} catch (err) {
  log.fatal({ err }, 'receipt failed to start');
  process.exit(1);
}
