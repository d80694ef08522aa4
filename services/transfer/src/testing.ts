import { createLogger, type Database, devMeshTls, type MeshTls } from '@wallet/platform';
import { composeTransfer } from './compose.js';
import { loadConfig } from './config.js';

/** Who may call each RPC (the tests' clients call as those identities). */
export { transferAccess } from './grpc/transfer.handlers.js';
/** The policy engine alone (the bench's policy phase times a decision in process, beside a send's CPU). */
export { CompiledPolicy, bogotaClock, isColombianHoliday, policyOf } from './domain/approval-policy.js';

export interface StartedTransfer {
  /** host:port for createAsyncClient. */
  address: string;
  port: number;
  db: Database;
  stop(): Promise<void>;
}

/**
 * The whole transfer service in this process, for integration and end-to-end tests: migrates the
 * database, connects the bus (namespaced streams), talks to the given ledger and provider, and
 * serves gRPC on 127.0.0.1 (port 0 = ephemeral). The same composition as main.ts, without the ops
 * HTTP port. `env` overrides any configuration variable (e.g. short time-outs).
 */
export async function startTransfer(opts: {
  /** Mesh credentials (default: this service's certificate of the development PKI). */
  mesh?: MeshTls;
  databaseUrl: string;
  natsUrl?: string;
  namespace: string;
  ledgerAddress: string;
  providerUrl: string;
  callbackBaseUrl?: string;
  port?: number;
  env?: Record<string, string>;
  logLevel?: string;
}): Promise<StartedTransfer> {
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: opts.logLevel ?? 'silent',
    SWEEPER_INTERVAL_MS: '200',
    // A test stack runs every service in one process, two files at a time: small pools keep it
    // well under the server's connection limit.
    TRANSFER_DB_POOL_MAX: '4',
    ...opts.env,
    DATABASE_URL: opts.databaseUrl,
    NATS_URL: opts.natsUrl ?? 'nats://127.0.0.1:4222',
    BUS_NAMESPACE: opts.namespace,
    TRANSFER_GRPC_HOST: '127.0.0.1',
    TRANSFER_GRPC_PORT: String(opts.port ?? 0),
    TRANSFER_MIGRATE_ON_START: 'true',
    LEDGER_GRPC_ADDR: opts.ledgerAddress,
    BREB_DIRECTORY_URL: opts.env?.BREB_DIRECTORY_URL ?? opts.providerUrl,
    BREB_RAIL_URL: opts.env?.BREB_RAIL_URL ?? opts.providerUrl,
    ACH_RAIL_URL: opts.env?.ACH_RAIL_URL ?? opts.providerUrl,
    ...(opts.callbackBaseUrl ? { RAIL_CALLBACK_BASE_URL: opts.callbackBaseUrl } : {}),
  });
  const runtime = await composeTransfer({
    mesh: opts.mesh ?? devMeshTls('transfer'),
    config,
    opsPort: null,
    logger: createLogger('transfer', config.LOG_LEVEL),
  });
  return { address: `127.0.0.1:${runtime.grpcPort}`, port: runtime.grpcPort, db: runtime.db, stop: () => runtime.stop() };
}
