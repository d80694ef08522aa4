import { ConfigError, createLogger, meshTlsFromEnv, onShutdown } from '@wallet/platform';
import { loadConfig } from './config.js';
import { startGatewayServer } from './server.js';

// Composition root: config → logger → server; SIGTERM/SIGINT stop it gracefully.
let config;
try {
  config = loadConfig(process.env);
} catch (err) {
  if (err instanceof ConfigError) {
    process.stderr.write(`gateway: ${err.message}\n`);
    process.exit(1);
  }
  throw err;
}
const log = createLogger('gateway', config.logLevel);
try {
  const running = await startGatewayServer(config, log, meshTlsFromEnv('gateway', process.env));
  onShutdown(log, [['gateway', () => running.stop()]], config.shutdownGraceMs);
} catch (err) {
  log.fatal({ err }, 'gateway failed to start');
  process.exit(1);
}
