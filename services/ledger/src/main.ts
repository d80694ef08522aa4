import { createLogger, onShutdown } from '@wallet/platform';
import { composeLedger } from './compose.js';
import { loadConfig } from './config.js';

const config = loadConfig();
const log = createLogger('ledger', config.LOG_LEVEL);

const runtime = await composeLedger({
  databaseUrl: config.DATABASE_URL,
  natsUrl: config.NATS_URL,
  namespace: config.BUS_NAMESPACE,
  grpcHost: config.LEDGER_GRPC_HOST,
  grpcPort: config.LEDGER_GRPC_PORT,
  opsPort: config.LEDGER_OPS_PORT,
  migrateOnStart: config.LEDGER_MIGRATE_ON_START,
  poolMax: config.LEDGER_DB_POOL_MAX,
  logger: log,
}).catch((err: unknown) => {
  log.fatal({ err }, 'ledger failed to start');
  process.exit(1);
});

onShutdown(log, [['ledger', () => runtime.stop()]]);
