import { createLogger, type Database, devMeshTls, type MeshTls } from '@wallet/platform';
import { composeReceipt } from './compose.js';
import { loadConfig } from './config.js';

/** Who may call each RPC (the tests' clients call as those identities). */
export { receiptAccess } from './grpc/receipt.handlers.js';

export interface StartedReceipt {
  /** host:port for createAsyncClient. */
  address: string;
  port: number;
  db: Database;
  stop(): Promise<void>;
  /** Drops the read model and replays both streams from the start (what `npm run rebuild` does); resolves once caught up. */
  rebuild(): Promise<void>;
  /** Resolves once both consumers have nothing pending (every event published so far is applied). */
  waitIdle(timeoutMs?: number): Promise<void>;
}

/**
 * The whole receipt service in this process, for integration and end-to-end tests: migrates the
 * database, connects the bus (namespaced streams, created if missing), consumes `transfer.>` and
 * `deposit.>`, and serves gRPC on 127.0.0.1 (port 0 = ephemeral). The same composition as main.ts,
 * without the ops HTTP port. `env` overrides any configuration variable.
 */
export async function startReceipt(opts: {
  /** Mesh credentials (default: this service's certificate of the development PKI). */
  mesh?: MeshTls;
  databaseUrl: string;
  natsUrl?: string;
  namespace: string;
  port?: number;
  env?: Record<string, string>;
  logLevel?: string;
}): Promise<StartedReceipt> {
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: opts.logLevel ?? 'silent',
    // A test stack runs every service in one process, two files at a time: small pools keep it
    // well under the server's connection limit.
    RECEIPT_DB_POOL_MAX: '4',
    ...opts.env,
    DATABASE_URL: opts.databaseUrl,
    NATS_URL: opts.natsUrl ?? 'nats://127.0.0.1:4222',
    BUS_NAMESPACE: opts.namespace,
    RECEIPT_GRPC_HOST: '127.0.0.1',
    RECEIPT_GRPC_PORT: String(opts.port ?? 0),
    RECEIPT_MIGRATE_ON_START: 'true',
  });
  const runtime = await composeReceipt({ mesh: opts.mesh ?? devMeshTls('receipt'), config, opsPort: null, logger: createLogger('receipt', config.LOG_LEVEL) });
  return {
    address: `127.0.0.1:${runtime.grpcPort}`,
    port: runtime.grpcPort,
    db: runtime.db,
    stop: () => runtime.stop(),
    rebuild: () => runtime.projection.rebuild(),
    waitIdle: (timeoutMs?: number) => runtime.projection.waitIdle(timeoutMs),
  };
}

/** pdfsig, the independent verifier of the receipts' signatures, for the tests that check them. */
export { PDFSIG_AVAILABLE, PDFSIG_MISSING, pdfsig, signedByteRange, tamperSignedPdf, type PdfsigReport, type PdfsigSignature } from './pdfsig.testing.js';
export { PDFIMAGES_AVAILABLE, receiptQrCodes } from './qr.testing.js';
