import { createLogger, type Database, devMeshTls, type MeshTls } from '@wallet/platform';
import { composeDeposit } from './compose.js';
import { loadConfig } from './config.js';

/** Who may call each RPC (the tests' clients call as those identities). */
export { depositAccess } from './grpc/deposit.handlers.js';
/** The schema's migrations (the invariants' tests make the schema without starting the service). */
export { depositMigrations } from './persistence/migrations/index.js';

export interface StartedDeposit {
  /** host:port for createAsyncClient. */
  address: string;
  port: number;
  db: Database;
  stop(): Promise<void>;
}

/**
 * The whole pse-deposit service in this process, for integration and end-to-end tests: migrates the
 * database, connects the bus (namespaced streams), talks to the given ledger, PSE provider and SMTP
 * server, and serves gRPC on 127.0.0.1 (port 0 = ephemeral). The same composition as main.ts,
 * without the ops HTTP port. `env` overrides any configuration variable (e.g. a short PSE_LINK_TTL_SECONDS).
 */
export async function startDeposit(opts: {
  /** Mesh credentials (default: this service's certificate of the development PKI). */
  mesh?: MeshTls;
  databaseUrl: string;
  natsUrl?: string;
  namespace: string;
  ledgerAddress: string;
  /** collect-key (cobros' dynamic keys); default: a closed port, so a test never reaches a stack running on this machine. */
  collectKeyAddress?: string;
  providerUrl: string;
  smtpUrl?: string;
  callbackUrl?: string;
  port?: number;
  env?: Record<string, string>;
  logLevel?: string;
}): Promise<StartedDeposit> {
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: opts.logLevel ?? 'silent',
    SWEEPER_INTERVAL_MS: '200',
    // A test stack runs every service in one process, two files at a time: small pools keep it
    // well under the server's connection limit.
    DEPOSIT_DB_POOL_MAX: '4',
    ...opts.env,
    DATABASE_URL: opts.databaseUrl,
    NATS_URL: opts.natsUrl ?? 'nats://127.0.0.1:4222',
    BUS_NAMESPACE: opts.namespace,
    DEPOSIT_GRPC_HOST: '127.0.0.1',
    DEPOSIT_GRPC_PORT: String(opts.port ?? 0),
    DEPOSIT_MIGRATE_ON_START: 'true',
    LEDGER_GRPC_ADDR: opts.ledgerAddress,
    COLLECT_KEY_GRPC_ADDR: opts.collectKeyAddress ?? '127.0.0.1:9',
    PSE_PROVIDER_URL: opts.env?.PSE_PROVIDER_URL ?? opts.providerUrl,
    ...(opts.smtpUrl ? { SMTP_URL: opts.smtpUrl } : {}),
    ...(opts.callbackUrl ? { PSE_CALLBACK_URL: opts.callbackUrl } : {}),
  });
  const runtime = await composeDeposit({
    mesh: opts.mesh ?? devMeshTls('pse-deposit'),
    config,
    opsPort: null,
    logger: createLogger('pse-deposit', config.LOG_LEVEL),
  });
  return { address: `127.0.0.1:${runtime.grpcPort}`, port: runtime.grpcPort, db: runtime.db, stop: () => runtime.stop() };
}
