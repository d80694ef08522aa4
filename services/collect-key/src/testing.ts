import { createLogger, type Database, devMeshTls, type MeshTls } from '@wallet/platform';
import { composeCollectKey } from './compose.js';
import { loadConfig } from './config.js';

/** Who may call each RPC (the tests' clients call as those identities). */
export { collectKeyAccess } from './grpc/collect-key.handlers.js';
/** The schema's migrations (the invariants' tests make the schema without starting the service). */
export { collectKeyMigrations } from './persistence/migrations/index.js';

export interface StartedCollectKey {
  /** host:port for createAsyncClient. */
  address: string;
  port: number;
  db: Database;
  stop(): Promise<void>;
}

/**
 * The whole collect-key service in this process, for integration and end-to-end tests: migrates the
 * database, connects the bus (namespaced streams), talks to the given ledger and Bre-B directory
 * (the sandbox), registers keys with `callbackUrl` as the participant callback, and serves gRPC on
 * 127.0.0.1 (port 0 = ephemeral). The same composition as main.ts, without the ops HTTP port.
 */
export async function startCollectKey(opts: {
  /** Mesh credentials (default: this service's certificate of the development PKI). */
  mesh?: MeshTls;
  databaseUrl: string;
  natsUrl?: string;
  namespace: string;
  ledgerAddress: string;
  providerUrl: string;
  callbackUrl?: string;
  port?: number;
  env?: Record<string, string>;
  logLevel?: string;
}): Promise<StartedCollectKey> {
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: opts.logLevel ?? 'silent',
    SWEEPER_INTERVAL_MS: '200',
    // A test stack runs every service in one process, two files at a time: small pools keep it
    // well under the server's connection limit.
    COLLECT_KEY_DB_POOL_MAX: '4',
    ...opts.env,
    DATABASE_URL: opts.databaseUrl,
    NATS_URL: opts.natsUrl ?? 'nats://127.0.0.1:4222',
    BUS_NAMESPACE: opts.namespace,
    COLLECT_KEY_GRPC_HOST: '127.0.0.1',
    COLLECT_KEY_GRPC_PORT: String(opts.port ?? 0),
    COLLECT_KEY_MIGRATE_ON_START: 'true',
    LEDGER_GRPC_ADDR: opts.ledgerAddress,
    BREB_DIRECTORY_URL: opts.env?.BREB_DIRECTORY_URL ?? opts.providerUrl,
    ...(opts.callbackUrl ? { BREB_INCOMING_CALLBACK_URL: opts.callbackUrl } : {}),
  });
  const runtime = await composeCollectKey({
    mesh: opts.mesh ?? devMeshTls('collect-key'),
    config,
    opsPort: null,
    logger: createLogger('collect-key', config.LOG_LEVEL),
  });
  return { address: `127.0.0.1:${runtime.grpcPort}`, port: runtime.grpcPort, db: runtime.db, stop: () => runtime.stop() };
}
