import { ConfigError, createLogger, onShutdown } from '@wallet/platform';
import { composeSandbox } from './compose.js';
import { loadConfig, type SandboxConfig } from './config.js';

// Composition root: config → logger → composeSandbox (db, scheduler, HTTP); SIGTERM/SIGINT stop it gracefully.
let config: SandboxConfig;
try {
  config = loadConfig(process.env);
} catch (err) {
  if (err instanceof ConfigError) {
    process.stderr.write(`sandbox: ${err.message}\n`);
    process.exit(1);
  }
  throw err;
}
const log = createLogger('sandbox', config.LOG_LEVEL);
try {
  const runtime = await composeSandbox(config, log);
  onShutdown(log, [['sandbox', () => runtime.stop()]], config.SHUTDOWN_GRACE_MS);
} catch (err) {
  log.fatal({ err }, 'sandbox failed to start');
  process.exit(1);
}
