import { ConfigError, createLogger, onShutdown, meshTlsFromEnv } from '@wallet/platform';
import { composeLedger } from './compose.js';
import { loadConfig, type LedgerConfig } from './config.js';

// Composition root: config → logger → composeLedger (db, bus, relay, gRPC, ops); SIGTERM/SIGINT stop it gracefully.
let config: LedgerConfig;
try {
  config = loadConfig(process.env);
} catch (err) {
  if (err instanceof ConfigError) {
    process.stderr.write(`ledger: ${err.message}\n`);
    process.exit(1);
  }
  throw err;
}
const log = createLogger('ledger', config.LOG_LEVEL);
try {
  const runtime = await composeLedger({
    mesh: meshTlsFromEnv('ledger', process.env),
    databaseUrl: config.DATABASE_URL,
    natsUrl: config.NATS_URL,
    namespace: config.BUS_NAMESPACE,
    streamReplicas: config.NATS_STREAM_REPLICAS,
    grpcHost: config.LEDGER_GRPC_HOST,
    grpcPort: config.LEDGER_GRPC_PORT,
    opsPort: config.LEDGER_OPS_PORT,
    migrateOnStart: config.LEDGER_MIGRATE_ON_START,
    production: config.NODE_ENV === 'production',
    poolMax: config.LEDGER_DB_POOL_MAX,
    balanceAlertIntervalMs: config.BALANCE_ALERT_INTERVAL_MS,
    journalSealIntervalMs: config.JOURNAL_SEAL_INTERVAL_MS,
    balanceCheckpoints: { intervalMs: config.BALANCE_CHECKPOINT_INTERVAL_MS, marginSeconds: config.BALANCE_CHECKPOINT_MARGIN_SECONDS },
    selfCheckIntervalMs: config.LEDGER_SELF_CHECK_INTERVAL_MS,
    logger: log,
  });
  onShutdown(log, [['ledger', () => runtime.stop()]], config.SHUTDOWN_GRACE_MS);
} catch (err) {
  log.fatal({ err }, 'ledger failed to start');
  process.exit(1);
}
