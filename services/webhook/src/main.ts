import { ConfigError, createLogger, onShutdown, meshTlsFromEnv } from '@wallet/platform';
import { composeWebhook } from './compose.js';
import { loadConfig, type WebhookConfig } from './config.js';

// Composition root: config → logger → composeWebhook (db, bus, dispatcher, delivery worker, gRPC, ops);
// SIGTERM/SIGINT stop it gracefully (no new calls, consumers and worker stop after the attempt in flight).
let config: WebhookConfig;
try {
  config = loadConfig(process.env);
} catch (err) {
  if (err instanceof ConfigError) {
    process.stderr.write(`webhook: ${err.message}\n`);
    process.exit(1);
  }
  throw err;
}
const log = createLogger('webhook', config.LOG_LEVEL);
try {
  const runtime = await composeWebhook({ mesh: meshTlsFromEnv('webhook', process.env), config, opsPort: config.WEBHOOK_OPS_PORT, logger: log });
  onShutdown(log, [['webhook', () => runtime.stop()]], config.SHUTDOWN_GRACE_MS);
} catch (err) {
  log.fatal({ err }, 'webhook failed to start');
  process.exit(1);
}
